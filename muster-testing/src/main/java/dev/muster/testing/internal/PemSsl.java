package dev.muster.testing.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** A JDK {@link SSLContext} from PEM files (a CA, and a certificate with its PKCS#8 EC key). Stateless. */
public final class PemSsl {
  private PemSsl() {}

  /** Trusts {@code ca} and presents no certificate (a TLS client without a client certificate). */
  public static SSLContext trusting(Path ca) {
    return context(ca, null, null);
  }

  /** Trusts {@code ca} and presents {@code certificate}/{@code key} (both null: none). */
  public static SSLContext context(Path ca, Path certificate, Path key) {
    try {
      CertificateFactory x509 = CertificateFactory.getInstance("X.509");
      KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
      trust.load(null, null);
      try (InputStream in = Files.newInputStream(ca)) {
        trust.setCertificateEntry("ca", x509.generateCertificate(in));
      }
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      SSLContext ssl = SSLContext.getInstance("TLS");
      if (certificate == null) {
        ssl.init(null, tmf.getTrustManagers(), null);
        return ssl;
      }
      Certificate cert;
      try (InputStream in = Files.newInputStream(certificate)) {
        cert = x509.generateCertificate(in);
      }
      String pem = Files.readString(key).replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
      PrivateKey privateKey = KeyFactory.getInstance("EC")
          .generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(pem)));
      KeyStore keys = KeyStore.getInstance(KeyStore.getDefaultType());
      keys.load(null, null);
      char[] none = new char[0];
      keys.setKeyEntry("client", privateKey, none, new Certificate[] {cert});
      KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(keys, none);
      ssl.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
      return ssl;
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalStateException("cannot build TLS from " + ca + ", " + certificate + ", " + key + ": "
          + e.getMessage(), e);
    }
  }
}
