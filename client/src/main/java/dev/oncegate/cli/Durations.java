package dev.oncegate.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import picocli.CommandLine;

/**
 * Parses the CLI's DURATION syntax: {@code 250ms}, {@code 30s}, {@code 5m}, {@code 1h}, a bare
 * number of seconds ({@code 30}, {@code 1.5}), or ISO-8601 ({@code PT30S}). Negative or
 * malformed text is refused; picocli then names the option (exit 2).
 *
 * <p>Stateless and thread-safe.
 */
final class Durations implements CommandLine.ITypeConverter<Duration> {

    private static final Pattern SIMPLE = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h)?");

    @Override
    public Duration convert(String text) {
        return parse(text);
    }

    static Duration parse(String text) {
        if (text == null || text.isBlank()) {
            throw new CommandLine.TypeConversionException("an empty duration" + HINT);
        }
        String t = text.strip();
        Duration d;
        if (t.startsWith("P") || t.startsWith("p") || t.startsWith("-P") || t.startsWith("-p")) {
            try {
                d = Duration.parse(t);
            } catch (DateTimeParseException e) {
                throw new CommandLine.TypeConversionException("'" + text + "' is not a duration" + HINT);
            }
        } else {
            Matcher m = SIMPLE.matcher(t);
            if (!m.matches()) {
                throw new CommandLine.TypeConversionException(t.startsWith("-")
                        ? "'" + text + "' is negative; a duration must be zero or more"
                        : "'" + text + "' is not a duration" + HINT);
            }
            String unit = m.group(2) == null ? "s" : m.group(2);
            long millisPerUnit = switch (unit) {
                case "ms" -> 1L;
                case "s" -> 1_000L;
                case "m" -> 60_000L;
                default -> 3_600_000L;
            };
            java.math.BigDecimal millis = new java.math.BigDecimal(m.group(1))
                    .multiply(java.math.BigDecimal.valueOf(millisPerUnit));
            if (millis.compareTo(java.math.BigDecimal.valueOf(Long.MAX_VALUE / 1_000_000L)) > 0) {
                throw new CommandLine.TypeConversionException("'" + text + "' is too long a duration");
            }
            d = Duration.ofNanos(millis.multiply(java.math.BigDecimal.valueOf(1_000_000L)).longValue());
        }
        if (d.isNegative()) {
            throw new CommandLine.TypeConversionException("'" + text + "' is negative; a duration must be zero or more");
        }
        return d;
    }

    /** A compact rendering for messages: {@code 2s}, {@code 250ms}. */
    static String format(Duration d) {
        if (d.toMillis() % 1000 == 0) {
            return d.toSeconds() + "s";
        }
        return d.toMillis() + "ms";
    }

    private static final String HINT = " (use 250ms, 30s, 5m, 1h, a number of seconds, or ISO-8601 like PT30S)";
}
