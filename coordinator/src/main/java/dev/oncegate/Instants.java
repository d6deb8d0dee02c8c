package dev.oncegate;

import java.time.Instant;

/**
 * The text of an instant in a record or the marks file: exactly {@link Instant#toString()} and
 * {@link Instant#parse}, without {@code java.time.format} for the one form the gate writes.
 *
 * <p>Why: the first {@code Instant.parse} or {@code Instant.toString} of a JVM initialises the
 * JDK's date-time formatter machinery, about 10 ms of a short-lived {@code oncegate run} (every run
 * reads the marks file and writes records). Years 0000 to 9999 in UTC ({@code 2026-12-02T14:05:09Z},
 * with 0, 3, 6 or 9 fraction digits) are written and read here; any other instant, and any other
 * text, goes to the JDK, so the results, and the exceptions, are the JDK's own in every case
 * ({@code InstantsTest} holds the two equal on seeded instants and texts).
 *
 * <p>Stateless; thread-safe.
 */
final class Instants {

    /** 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z, the years written with four digits and no sign. */
    private static final long MIN_SECOND = -62_167_219_200L;
    private static final long MAX_SECOND = 253_402_300_799L;
    private static final int DAYS_0000_TO_1970 = 719_468; // days from 0000-03-01 to 1970-01-01

    private Instants() {
    }

    /** {@code t.toString()}. */
    static String format(Instant t) {
        long seconds = t.getEpochSecond();
        if (seconds < MIN_SECOND || seconds > MAX_SECOND) {
            return t.toString();
        }
        long days = Math.floorDiv(seconds, 86_400);
        int secondOfDay = (int) Math.floorMod(seconds, 86_400);
        // civil date from days since 1970-01-01 (H. Hinnant's algorithm, proleptic Gregorian)
        long z = days + DAYS_0000_TO_1970;
        long era = Math.floorDiv(z, 146_097);
        int dayOfEra = (int) (z - era * 146_097);
        int yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365;
        int dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100);
        int mp = (5 * dayOfYear + 2) / 153;
        int day = dayOfYear - (153 * mp + 2) / 5 + 1;
        int month = mp < 10 ? mp + 3 : mp - 9;
        long year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
        StringBuilder b = new StringBuilder(30);
        pad(b, (int) year, 4).append('-');
        pad(b, month, 2).append('-');
        pad(b, day, 2).append('T');
        pad(b, secondOfDay / 3600, 2).append(':');
        pad(b, secondOfDay / 60 % 60, 2).append(':');
        pad(b, secondOfDay % 60, 2);
        int nano = t.getNano();
        if (nano > 0) {
            b.append('.');
            if (nano % 1_000_000 == 0) {
                pad(b, nano / 1_000_000, 3);
            } else if (nano % 1000 == 0) {
                pad(b, nano / 1000, 6);
            } else {
                pad(b, nano, 9);
            }
        }
        return b.append('Z').toString();
    }

    /**
     * {@code Instant.parse(text)}.
     *
     * @throws java.time.format.DateTimeParseException as {@link Instant#parse} does
     */
    static Instant parse(CharSequence text) {
        Instant fast = parseUtc(text);
        return fast != null ? fast : Instant.parse(text);
    }

    /** {@code yyyy-MM-ddTHH:mm:ss[.f{1,9}]Z} with valid fields, or null for anything else. */
    private static Instant parseUtc(CharSequence s) {
        int n = s.length();
        if (n < 20 || n > 30 || s.charAt(4) != '-' || s.charAt(7) != '-' || s.charAt(10) != 'T' || s.charAt(13) != ':'
                || s.charAt(16) != ':' || s.charAt(n - 1) != 'Z') {
            return null;
        }
        int year = digits(s, 0, 4);
        int month = digits(s, 5, 2);
        int day = digits(s, 8, 2);
        int hour = digits(s, 11, 2);
        int minute = digits(s, 14, 2);
        int second = digits(s, 17, 2);
        if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour < 0 || hour > 23
                || minute < 0 || minute > 59 || second < 0 || second > 59) {
            return null;
        }
        int nano = 0;
        if (n > 20) {
            int fraction = n - 21; // between '.' and 'Z'
            if (s.charAt(19) != '.' || fraction < 1 || fraction > 9) {
                return null;
            }
            nano = digits(s, 20, fraction);
            if (nano < 0) {
                return null;
            }
            for (int i = fraction; i < 9; i++) {
                nano *= 10;
            }
        }
        // days since 1970-01-01 from the civil date (the inverse of format's)
        int y = month <= 2 ? year - 1 : year;
        long era = Math.floorDiv(y, 400);
        int yearOfEra = (int) (y - era * 400);
        int dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
        int dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear;
        long days = era * 146_097 + dayOfEra - DAYS_0000_TO_1970;
        return Instant.ofEpochSecond(days * 86_400 + hour * 3600L + minute * 60L + second, nano);
    }

    private static int daysIn(int year, int month) {
        return switch (month) {
            case 2 -> (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28;
            case 4, 6, 9, 11 -> 30;
            default -> 31;
        };
    }

    /** The value of {@code count} ASCII digits at {@code from}, or -1 when one is not a digit. */
    private static int digits(CharSequence s, int from, int count) {
        int v = 0;
        for (int i = from; i < from + count; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            v = v * 10 + (c - '0');
        }
        return v;
    }

    private static StringBuilder pad(StringBuilder b, int value, int width) {
        String digits = Integer.toString(value);
        for (int i = digits.length(); i < width; i++) {
            b.append('0');
        }
        return b.append(digits);
    }
}
