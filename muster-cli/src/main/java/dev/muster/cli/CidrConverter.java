package dev.muster.cli;

import dev.muster.InvalidInputException;
import dev.muster.dns.Cidr;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Parses an address block such as {@code 10.0.0.0/8} or {@code 127.0.0.1} ({@link Cidr#parse}). */
final class CidrConverter implements ITypeConverter<Cidr> {
  @Override
  public Cidr convert(String value) {
    try {
      return Cidr.parse(value);
    } catch (InvalidInputException e) {
      throw new TypeConversionException(e.getMessage());
    }
  }
}
