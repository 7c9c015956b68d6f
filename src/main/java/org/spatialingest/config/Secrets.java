package org.spatialingest.config;

import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one rule for what is a secret and how it is shown: the value of a key whose name carries a
 * credential ({@link #isSecretKey}) shows as {@link #MASK}, and so does the password in a URI's
 * user info or query ({@code jdbc:postgresql://u:pw@host/db}, {@code ?password=pw}). Every place
 * that prints a configuration value or a message that may quote one goes through here: {@code run
 * --print-config}, {@link JobConfig#toString}, the global job parameters the Flink UI shows,
 * configuration and start-up errors, {@code plan}/{@code inspect} output.
 *
 * <p>{@link #scrub} also replaces, in any text, the secret values of every job configuration read
 * in this JVM ({@link #remember}), so a library's exception message that quotes one (a JAAS line, a
 * catalog URI) is masked too before we print it.
 */
public final class Secrets {
  public static final String MASK = "******";

  /** Parts of key names that carry credentials; matched case-insensitively, anywhere in a key. */
  public static final List<String> SECRET_KEY_PARTS =
      List.of(
          "password",
          "passwd",
          "secret",
          "token",
          "jaas",
          "credential",
          "access-key",
          "access_key",
          "accesskey",
          "private-key",
          "private_key",
          "privatekey",
          "api-key",
          "apikey",
          "api_key",
          "authorization",
          "keystore.key",
          "account.key");

  private static final Pattern URI_USER_INFO =
      Pattern.compile("(://[^/:@\\s\"']+:)([^/@\\s\"']+)(@)");
  private static final Pattern URI_QUERY_SECRET =
      Pattern.compile(
          "(?i)([?&;](?:[\\w.-]*(?:password|passwd|pwd|secret|token|credential|key))=)([^&;\\s\"']+)");
  private static final Pattern JAAS_OPTION =
      Pattern.compile(
          "(?i)(\\b(?:password|secret|token|credential)[\\w.-]*\\s*=\\s*\")([^\"]*)(\")");
  private static final Pattern KEY_VALUE_LINE =
      Pattern.compile(
          "(?im)^(\\s*[\\w.\\-]*(?:"
              + String.join("|", SECRET_KEY_PARTS)
              + ")[\\w.\\-]*\\s*[:=]\\s*).+$");

  /**
   * A {@code key=value} or {@code key:value} command-line argument, optionally after an {@code
   * --option=} prefix.
   */
  private static final Pattern KEY_VALUE_ARGUMENT =
      Pattern.compile("(?s)^(--?[\\w-]+=)?([^=:\\s]+)([=:])(.*)$");

  /** Values of secret keys of every configuration read in this JVM, longest first when scrubbed. */
  private static final Set<String> REMEMBERED = ConcurrentHashMap.newKeySet();

  /** Values shorter than this are not searched for in free text (too many false hits). */
  private static final int MIN_SCRUBBED_LENGTH = 4;

  private Secrets() {}

  /** True if {@code key}'s value is a credential (e.g. {@code sasl.jaas.config}). */
  public static boolean isSecretKey(String key) {
    String k = key.toLowerCase(Locale.ROOT);
    for (String part : SECRET_KEY_PARTS) {
      if (k.contains(part)) {
        return true;
      }
    }
    return false;
  }

  /** {@code value} as it may be shown under {@code key}. */
  public static String display(String key, String value) {
    if (value == null || value.isEmpty()) {
      return value;
    }
    return isSecretKey(key) ? MASK : maskInlineCredentials(value);
  }

  /** A copy of {@code config} (sorted by key) with every value as {@link #display} shows it. */
  public static Map<String, String> redact(Map<String, String> config) {
    Map<String, String> out = new TreeMap<>();
    config.forEach((k, v) -> out.put(k, display(k, v)));
    return out;
  }

  /**
   * The arguments of a command line as they may be shown (e.g. logged): the value of every {@code
   * key=value} or {@code key:value} argument whose key is a secret key ({@code --set
   * kafka.properties.ssl.truststore.password=...}, {@code --flink s3.secret-key=...}, also as
   * {@code --set=key=value}) shows as {@link #MASK}; URI passwords and quoted JAAS password options
   * are masked in every argument. Needed because a command line is logged before its configuration
   * is read and {@link #remember remembered}.
   */
  public static List<String> displayArguments(List<String> args) {
    return args.stream()
        .map(
            arg -> {
              Matcher m = KEY_VALUE_ARGUMENT.matcher(arg);
              if (m.matches() && isSecretKey(m.group(2)) && !m.group(4).isEmpty()) {
                return (m.group(1) == null ? "" : m.group(1)) + m.group(2) + m.group(3) + MASK;
              }
              return maskInlineCredentials(arg);
            })
        .toList();
  }

  /**
   * Remembers the secrets of {@code config} (flat keys): the values of secret keys and the
   * passwords inside other values, so that {@link #scrub} masks them in any text.
   */
  public static void remember(Map<String, String> config) {
    config.forEach(
        (k, v) -> {
          if (v == null) {
            return;
          }
          if (isSecretKey(k)) {
            REMEMBERED.add(v);
          }
          for (Pattern p : List.of(URI_USER_INFO, URI_QUERY_SECRET, JAAS_OPTION)) {
            Matcher m = p.matcher(v);
            while (m.find()) {
              REMEMBERED.add(m.group(2));
            }
          }
        });
  }

  /**
   * {@code text} with every remembered secret value, every URI password, every quoted JAAS password
   * option and every value on a {@code key: value} / {@code key=value} line of a secret key masked.
   * For messages of exceptions, log lines and output that may quote configuration.
   */
  public static String scrub(String text) {
    if (text == null || text.isEmpty()) {
      return text;
    }
    String out = text;
    List<String> known =
        REMEMBERED.stream()
            .filter(v -> v.length() >= MIN_SCRUBBED_LENGTH)
            .sorted(Comparator.comparingInt(String::length).reversed())
            .toList();
    for (String secret : known) {
      out = out.replace(secret, MASK);
    }
    out = maskInlineCredentials(out);
    return KEY_VALUE_LINE.matcher(out).replaceAll("$1" + Matcher.quoteReplacement(MASK));
  }

  /** {@code value} with URI passwords and quoted JAAS password options masked. */
  static String maskInlineCredentials(String value) {
    String out = URI_USER_INFO.matcher(value).replaceAll("$1" + MASK + "$3");
    out = URI_QUERY_SECRET.matcher(out).replaceAll("$1" + Matcher.quoteReplacement(MASK));
    return JAAS_OPTION.matcher(out).replaceAll("$1" + Matcher.quoteReplacement(MASK) + "$3");
  }
}
