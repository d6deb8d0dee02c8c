package dev.oncegate.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import picocli.CommandLine;

/**
 * Parses the CLI's DURATION syntax: one or more number-and-unit parts, largest first ({@code 250ms},
 * {@code 30s}, {@code 5m}, {@code 1m30s}, {@code 2h}, {@code 1d}, {@code 1.5h}), a bare number of
 * seconds ({@code 30}, {@code 1.5}), or ISO-8601 ({@code PT30S}). Negative or malformed text is
 * refused; picocli then names the option (exit 2).
 *
 * <p>Stateless and thread-safe.
 */
final class Durations implements CommandLine.ITypeConverter<Duration> {

    private static final Pattern BARE = Pattern.compile("\\d+(?:\\.\\d+)?");
    private static final Pattern PARTS = Pattern.compile("(?:\\d+(?:\\.\\d+)?(?:ms|s|m|h|d))+");
    private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h|d)");
    private static final List<String> ORDER = List.of("d", "h", "m", "s", "ms");
    /** The longest duration, in whatever syntax: one that {@link Duration#toNanos} can still express. */
    static final Duration MAX = Duration.ofMillis(Long.MAX_VALUE / 1_000_000L);

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
            if (!BARE.matcher(t).matches() && !PARTS.matcher(t).matches()) {
                throw new CommandLine.TypeConversionException(t.startsWith("-")
                        ? "'" + text + "' is negative; a duration must be zero or more"
                        : "'" + text + "' is not a duration" + HINT);
            }
            java.math.BigDecimal millis = java.math.BigDecimal.ZERO;
            if (BARE.matcher(t).matches()) {
                millis = new java.math.BigDecimal(t).multiply(java.math.BigDecimal.valueOf(1_000L));
            } else {
                Matcher m = PART.matcher(t);
                int last = -1;
                while (m.find()) {
                    int rank = ORDER.indexOf(m.group(2));
                    if (rank <= last) {
                        throw new CommandLine.TypeConversionException("'" + text + "' repeats a unit or puts a smaller one"
                                + " first; write the parts largest first, like 1h30m" + HINT);
                    }
                    last = rank;
                    long millisPerUnit = switch (m.group(2)) {
                        case "ms" -> 1L;
                        case "s" -> 1_000L;
                        case "m" -> 60_000L;
                        case "h" -> 3_600_000L;
                        default -> 86_400_000L;
                    };
                    millis = millis.add(new java.math.BigDecimal(m.group(1)).multiply(java.math.BigDecimal.valueOf(millisPerUnit)));
                }
            }
            if (millis.compareTo(java.math.BigDecimal.valueOf(MAX.toMillis())) > 0) {
                throw new CommandLine.TypeConversionException("'" + text + "' is too long a duration");
            }
            d = Duration.ofNanos(millis.multiply(java.math.BigDecimal.valueOf(1_000_000L)).longValue());
        }
        if (d.isNegative()) {
            throw new CommandLine.TypeConversionException("'" + text + "' is negative; a duration must be zero or more");
        }
        if (d.compareTo(MAX) > 0) {
            // Every duration is used in nanoseconds somewhere (a wait, a process timeout): past about 292 years
            // toNanos() overflows, after the command has started.
            throw new CommandLine.TypeConversionException("'" + text + "' is too long a duration");
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

    private static final String HINT = " (use 250ms, 30s, 5m, 1m30s, 2h, 1d, a number of seconds, or ISO-8601 like PT30S)";
}
