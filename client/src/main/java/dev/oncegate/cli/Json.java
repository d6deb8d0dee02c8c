package dev.oncegate.cli;

import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.oncegate.Evidence;

/**
 * JSON output: one compact object per line, fields in the order they were put, nulls kept so
 * that every object of a kind has the same fields.
 *
 * <p>The output is Jackson's, byte for byte (JsonLineTest compares them), but the records the
 * commands print (maps and lists of strings, integers, booleans and nulls) are written here:
 * building Jackson's {@code ObjectMapper} loads some 400 classes, a good part of what a
 * short-lived command such as {@code key} does in its life. A value of any other type (a
 * floating-point number, say) is left to Jackson, which is loaded only then.
 *
 * <p>Stateless and thread-safe (Jackson's mapper is, once configured).
 */
final class Json {

    /** Deeper than this, the value is left to Jackson (and its own limit, or its report of a cycle). */
    private static final int MAX_DEPTH = 200;

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private Json() {
    }

    /** An ordered map to fill in. */
    static Map<String, Object> object() {
        return new LinkedHashMap<>();
    }

    /** One line of compact JSON. */
    static String line(Object value) {
        StringBuilder out = new StringBuilder(256);
        return write(out, value, 0) ? out.toString() : Databind.line(value);
    }

    /**
     * Appends {@code value} as Jackson's default {@code ObjectMapper} writes it, or returns false
     * (leaving {@code out} unusable) when it holds a type written only by Jackson.
     */
    private static boolean write(StringBuilder out, Object value, int depth) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String s) {
            string(out, s);
        } else if (value instanceof Boolean || value instanceof Integer || value instanceof Long
                || value instanceof Short || value instanceof Byte) {
            out.append(value);
        } else if (value instanceof Map<?, ?> map) {
            if (depth >= MAX_DEPTH) {
                return false;
            }
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (!(e.getKey() instanceof String name)) {
                    return false;
                }
                if (!first) {
                    out.append(',');
                }
                first = false;
                string(out, name);
                out.append(':');
                if (!write(out, e.getValue(), depth + 1)) {
                    return false;
                }
            }
            out.append('}');
        } else if (value instanceof Collection<?> list) {
            if (depth >= MAX_DEPTH) {
                return false;
            }
            out.append('[');
            boolean first = true;
            for (Object element : list) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                if (!write(out, element, depth + 1)) {
                    return false;
                }
            }
            out.append(']');
        } else {
            return false;
        }
        return true;
    }

    /**
     * A JSON string as Jackson writes it: {@code "} and {@code \} escaped, control characters as
     * {@code \b \t \n \f \r} or a backslash, {@code u} and four upper-case hex digits; everything else as it is.
     */
    private static void string(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\b' -> out.append("\\b");
                case '\t' -> out.append("\\t");
                case '\n' -> out.append("\\n");
                case '\f' -> out.append("\\f");
                case '\r' -> out.append("\\r");
                default -> {
                    if (c < 0x20) {
                        out.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xF]);
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /** {@code {path, scope, task, host, at, detail}}; scope null when the evidence has none. */
    static Map<String, Object> evidence(Evidence e) {
        Map<String, Object> m = object();
        m.put("path", e.path());
        m.put("scope", e.scope() < 0 ? null : e.scope());
        m.put("task", e.task());
        m.put("host", e.host());
        m.put("at", instant(e.at()));
        m.put("detail", e.detail());
        return m;
    }

    static String instant(Instant at) {
        return at == null ? null : at.toString();
    }

    /** Jackson's mapper, for the values {@link #write} leaves to it; a class of its own, so it loads only then. */
    private static final class Databind {

        private static final ObjectMapper MAPPER = new ObjectMapper()
                .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);

        static String line(Object value) {
            try {
                return MAPPER.writeValueAsString(value);
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("could not render JSON: " + e.getMessage(), e);
            }
        }
    }
}
