package dev.muster.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Constructor;
import java.lang.reflect.Parameter;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The property table of docs/adapters/spring-boot.md is {@link MusterProperties}: every property the code binds is
 * in it, every property in it is bound, and where the code has a default the table says the same. So the reference
 * cannot drift from the code.
 */
class PropertiesReferenceTest {
  private static final Path PAGE = Path.of(System.getProperty("muster.docs.dir", "../docs"), "adapters",
      "spring-boot.md");
  private static final Pattern ROW = Pattern.compile("^\\| (`muster\\.[^|]*) \\| ([^|]*) \\|");

  @Test
  void theTableNamesEveryPropertyAndTheCodesDefaults() throws Exception {
    Map<String, String> code = new TreeMap<>();
    walk("muster", MusterProperties.class, code);
    Map<String, String> page = table(Files.readAllLines(PAGE));

    assertThat(page.keySet()).as("properties %s's table names that MusterProperties does not bind", PAGE)
        .isSubsetOf(code.keySet());
    assertThat(code.keySet()).as("properties MusterProperties binds that %s's table does not name", PAGE)
        .isSubsetOf(page.keySet());
    List<String> differ = new ArrayList<>();
    code.forEach((name, def) -> {
      String documented = page.get(name);
      if (def != null && documented != null && !documented.equals(def)) {
        differ.add(name + ": the code's default is " + def + ", the table's " + documented);
      }
    });
    assertThat(differ).as("defaults in %s that are not the code's", PAGE).isEmpty();
  }

  /** Each property under {@code prefix} of {@code type}, with its {@link DefaultValue} (null: none, or a group). */
  private static void walk(String prefix, Class<?> type, Map<String, String> out) {
    Constructor<?> canonical;
    try {
      canonical = type.getDeclaredConstructor(Arrays.stream(type.getRecordComponents())
          .map(RecordComponent::getType).toArray(Class<?>[]::new));
    } catch (NoSuchMethodException e) {
      throw new AssertionError(type + " has no canonical constructor", e);
    }
    Parameter[] params = canonical.getParameters();
    RecordComponent[] components = type.getRecordComponents();
    for (int i = 0; i < components.length; i++) {
      String name = prefix + "." + kebab(components[i].getName());
      Class<?> t = components[i].getType();
      if (t.isRecord() && t.getEnclosingClass() == MusterProperties.class) {
        walk(name, t, out);
      } else if (Map.class.isAssignableFrom(t)) {
        out.put(name + ".*", null);
      } else {
        DefaultValue d = params[i].getAnnotation(DefaultValue.class);
        out.put(name, d == null || d.value().length == 0 ? null : String.join(",", d.value()));
      }
    }
  }

  /**
   * The table's rows: {@code `muster.a.b`, `.c`} names {@code muster.a.b} and {@code muster.a.c}; a default column of
   * as many {@code `value`}s as names gives each its own, else the documented default is left unchecked (null).
   */
  static Map<String, String> table(List<String> lines) {
    Map<String, String> out = new TreeMap<>();
    for (String line : lines) {
      Matcher m = ROW.matcher(line);
      if (!m.find()) {
        continue;
      }
      String[] names = m.group(1).split(",\\s*");
      String first = names[0].replace("`", "").strip();
      String parent = first.substring(0, first.lastIndexOf('.'));
      String[] defaults = m.group(2).strip().split(",\\s*");
      for (int i = 0; i < names.length; i++) {
        String n = names[i].replace("`", "").strip();
        String full = n.startsWith(".") ? parent + n : n;
        String d = defaults.length == names.length ? defaults[i].strip() : null;
        Matcher code = d == null ? null : Pattern.compile("^`([^`]*)`").matcher(d);
        out.put(full, code != null && code.find() ? code.group(1) : null);
      }
    }
    return out;
  }

  private static String kebab(String camel) {
    return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT);
  }
}
