package io.queen.timers.core.text;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The one place that decides what is a secret in settings and text: a JDBC URL's {@code password=}
 * parameter (and {@code user:password@} in a URL), and any setting whose name has a segment naming
 * a password, secret, token, credential, JAAS config or key ({@code kafka.sasl.jaas.config},
 * {@code kafka.ssl.key.password}, {@code kafka.sasl.oauthbearer.token...}, {@code kafka.api.key}).
 * Used by the settings' log line, every log line (the log converter) and the CLI's error messages.
 */
public final class Secrets {

    public static final String MASK = "***";

    /** password=..., pwd=..., secret=..., token=... up to the next separator; and a URL's user:password@. */
    private static final Pattern IN_TEXT = Pattern.compile(
            "(?i)((?:password|passwd|pwd|secret|token|sslpassword|sslkey)\\s*[=:]\\s*)(\"[^\"]*\"|'[^']*'|[^&;,\\s\"')}]+)");
    private static final Pattern URL_USERINFO = Pattern.compile("(?i)(\\b[a-z][a-z0-9+.-]*://[^/:@\\s]+:)([^@/\\s]+)(@)");

    private Secrets() {}

    /** {@code text} with every password-like value replaced by {@value #MASK}. */
    public static String mask(String text) {
        if (text == null) {
            return null;
        }
        String out = IN_TEXT.matcher(text).replaceAll(m -> java.util.regex.Matcher.quoteReplacement(m.group(1) + MASK));
        return URL_USERINFO.matcher(out).replaceAll(m -> java.util.regex.Matcher.quoteReplacement(m.group(1) + MASK + m.group(3)));
    }

    /** Whether the setting {@code name} holds a secret (its value must never be printed). */
    public static boolean isSecretSetting(String name) {
        for (String segment : name.toLowerCase(Locale.ROOT).split("[._-]")) {
            if (segment.contains("password") || segment.contains("secret") || segment.contains("token") || segment.contains("jaas")
                    || segment.contains("credential") || segment.equals("key") || segment.endsWith("key")) {
                return true;
            }
        }
        return false;
    }
}
