package dev.oncegate;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The strict JSON codec of the protocol's own records: objects of strings, integers, booleans,
 * nulls, nested objects and arrays. The coordinator depends on Curator, slf4j and Micrometer
 * only, and its records are flat and few, so a JSON library is not worth a dependency every
 * embedding service would inherit.
 *
 * <p><b>Why strict.</b> These records decide whether a worker may deliver. A record that is
 * not exactly what some oncegate wrote, or what an operator wrote by hand following the
 * documentation, must stop the worker ({@link UnreadableRecordException}) rather than be
 * half-understood. So the decoder accepts RFC 8259 JSON, less what records never contain,
 * and refuses everything else with an {@link IllegalArgumentException} whose message names
 * the problem and its byte offset:
 * <ul>
 * <li>the input is UTF-8 without a byte order mark, decoded by a reporting decoder: overlong
 *     forms, encoded surrogates, truncated sequences and bytes that never occur in UTF-8 are
 *     errors, never U+FFFD;</li>
 * <li>the top-level value is an object; nothing but whitespace ({@code SP HT LF CR}) may
 *     follow it; empty input is an error;</li>
 * <li>numbers follow the RFC 8259 grammar ({@code 01}, {@code 1.}, {@code .5}, {@code +1} are
 *     errors) and must be integers in the range of {@code long}: records carry only integers,
 *     so a fraction or an exponent, though valid JSON, is refused rather than rounded;</li>
 * <li>strings contain no unescaped control character and no lone surrogate, escaped or not;
 *     escapes are the eight of RFC 8259;</li>
 * <li>an object has no duplicate field name (compared after unescaping);</li>
 * <li>nesting is at most {@value #MAX_DEPTH} deep and a document at most {@value #MAX_BYTES}
 *     bytes (ZooKeeper's default {@code jute.maxbuffer} is just under 1 MiB).</li>
 * </ul>
 * Numbers decode to {@code Long}, objects to unmodifiable maps in field order, arrays to
 * unmodifiable lists.
 *
 * <p>The encoder writes only what the decoder reads back equal: UTF-8 JSON with {@code "},
 * {@code \} and control characters escaped, integers ({@code Byte}, {@code Short},
 * {@code Integer}, {@code Long}) and no other number type; it refuses lone surrogates, non-string
 * field names, nesting deeper than {@value #MAX_DEPTH} and output over {@value #MAX_BYTES} bytes
 * with an {@link IllegalArgumentException} naming the field.
 *
 * <p>Stateless and thread-safe; each decode uses its own parser and UTF-8 decoder.
 */
final class Json {

    /** The deepest nesting accepted, counting the top-level object as 1. */
    static final int MAX_DEPTH = 64;

    /** The largest document accepted, in bytes. */
    static final int MAX_BYTES = 1 << 20;

    private Json() {
    }

    // ---- encoding ----------------------------------------------------------------------

    static byte[] encode(Map<String, ?> object) {
        if (object == null) {
            throw new IllegalArgumentException("cannot encode a null record");
        }
        StringBuilder out = new StringBuilder(128);
        write(out, object, "", 1);
        // write() refused lone surrogates, so this conversion is exact, never a '?' replacement.
        byte[] bytes = out.toString().getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_BYTES) {
            throw new IllegalArgumentException("the encoded record is " + bytes.length
                    + " bytes, more than the limit of " + MAX_BYTES);
        }
        return bytes;
    }

    private static void write(StringBuilder out, Object value, String field, int depth) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String s) {
            writeString(out, s, where(field));
        } else if (value instanceof Boolean || value instanceof Long || value instanceof Integer
                || value instanceof Short || value instanceof Byte) {
            out.append(value);
        } else if (value instanceof Map<?, ?> map) {
            checkDepth(depth, field);
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (!(e.getKey() instanceof String name)) {
                    throw new IllegalArgumentException(where(field) + "a field name is not a string: " + e.getKey());
                }
                String child = field.isEmpty() ? name : field + "." + name;
                if (!first) {
                    out.append(',');
                }
                first = false;
                writeString(out, name, field.isEmpty() ? "a field name: " : "a field name in '" + field + "': ");
                out.append(':');
                write(out, e.getValue(), child, depth + 1);
            }
            out.append('}');
        } else if (value instanceof List<?> list) {
            checkDepth(depth, field);
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                write(out, list.get(i), field + "[" + i + "]", depth + 1);
            }
            out.append(']');
        } else {
            throw new IllegalArgumentException(where(field) + "cannot encode " + value.getClass().getName()
                    + " (records hold strings, integers, booleans, nulls, maps and lists)");
        }
    }

    private static void checkDepth(int depth, String field) {
        if (depth > MAX_DEPTH) {
            throw new IllegalArgumentException(where(field) + "nesting deeper than " + MAX_DEPTH
                    + " levels (a cycle?)");
        }
    }

    private static String where(String field) {
        return field.isEmpty() ? "" : "field '" + field + "': ";
    }

    /** Writes {@code s} as a JSON string; {@code label} starts the message if it has a lone surrogate. */
    private static void writeString(StringBuilder out, String s, String label) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    out.append(c).append(s.charAt(++i));
                    continue;
                }
                throw new IllegalArgumentException(label + "lone surrogate " + hex(c) + " at index " + i
                        + ": the text is not valid Unicode and has no UTF-8 form");
            }
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x7f || c == 0x2028 || c == 0x2029) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    private static String hex(char c) {
        return String.format("U+%04X", (int) c);
    }

    // ---- decoding ----------------------------------------------------------------------

    /** The record in {@code data}, which must be one JSON object; see the class comment for what is refused. */
    static Map<String, Object> decodeObject(byte[] data) {
        if (data == null) {
            throw new IllegalArgumentException("no data (null)");
        }
        return new Parser(data).document();
    }

    /**
     * A recursive-descent parser over the raw bytes, so that every error carries a byte offset.
     * Outside strings JSON is ASCII, so any byte above 0x7F there is simply unexpected; inside a
     * string, each run of bytes between escapes is decoded by a reporting UTF-8 decoder.
     */
    private static final class Parser {
        private final byte[] data;
        private int pos;
        private CharsetDecoder utf8;

        Parser(byte[] data) {
            this.data = data;
        }

        Map<String, Object> document() {
            if (data.length > MAX_BYTES) {
                throw new IllegalArgumentException("record too large: " + data.length
                        + " bytes, more than the limit of " + MAX_BYTES);
            }
            if (data.length >= 3 && (data[0] & 0xff) == 0xef && (data[1] & 0xff) == 0xbb && (data[2] & 0xff) == 0xbf) {
                throw error(0, "the data starts with a byte order mark (records are UTF-8 without one)");
            }
            skipSpace();
            if (pos == data.length) {
                throw error(pos, data.length == 0 ? "empty input" : "only whitespace, no JSON value");
            }
            if (data[pos] != '{') {
                throw error(pos, "a record is a JSON object, but it starts with " + describe(pos));
            }
            Map<String, Object> record = object(1);
            skipSpace();
            if (pos != data.length) {
                throw error(pos, "trailing content " + describe(pos) + " after the object");
            }
            return record;
        }

        private Object value(int depth) {
            if (pos == data.length) {
                throw error(pos, "unexpected end of input, expected a value");
            }
            return switch (data[pos]) {
                case '{' -> object(depth + 1);
                case '[' -> array(depth + 1);
                case '"' -> string();
                case 't' -> literal("true", Boolean.TRUE);
                case 'f' -> literal("false", Boolean.FALSE);
                case 'n' -> literal("null", null);
                case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9' -> number();
                default -> throw error(pos, "expected a value, found " + describe(pos));
            };
        }

        private Map<String, Object> object(int depth) {
            int open = enter(depth);
            Map<String, Object> map = new LinkedHashMap<>();
            boolean closed = closes('}');
            while (!closed) {
                skipSpace();
                if (!at('"')) {
                    throw error(pos, "expected a field name (a string) in the object at offset " + open
                            + ", found " + describe(pos));
                }
                int keyAt = pos;
                String key = string();
                if (map.containsKey(key)) {
                    throw error(keyAt, "duplicate field " + quote(key));
                }
                skipSpace();
                if (!at(':')) {
                    throw error(pos, "expected ':' after field name " + quote(key) + ", found " + describe(pos));
                }
                pos++;
                skipSpace();
                map.put(key, value(depth));
                closed = closesAfterMember('}', "object", open);
            }
            return Collections.unmodifiableMap(map);
        }

        private List<Object> array(int depth) {
            int open = enter(depth);
            List<Object> list = new ArrayList<>();
            boolean closed = closes(']');
            while (!closed) {
                skipSpace();
                list.add(value(depth));
                closed = closesAfterMember(']', "array", open);
            }
            return Collections.unmodifiableList(list);
        }

        /** Whether {@code close} comes next (after white space): if so, steps over it. */
        private boolean closes(char close) {
            skipSpace();
            if (at(close)) {
                pos++;
                return true;
            }
            return false;
        }

        /**
         * After a member of the {@code kind} container opened at {@code open}: steps over its
         * {@code close} (true) or the ',' before the next member (false); anything else is an error.
         */
        private boolean closesAfterMember(char close, String kind, int open) {
            if (closes(close)) {
                return true;
            }
            if (!at(',')) {
                throw error(pos, "expected ',' or '" + close + "' in the " + kind + " at offset " + open + ", found "
                        + describe(pos));
            }
            pos++;
            return false;
        }

        /** Steps over the opening bracket of a container at {@code depth}; returns its offset. */
        private int enter(int depth) {
            if (depth > MAX_DEPTH) {
                throw error(pos, "nesting deeper than " + MAX_DEPTH + " levels");
            }
            return pos++;
        }

        private String string() {
            int open = pos++;
            StringBuilder out = new StringBuilder();
            int run = pos;
            boolean ascii = true;
            while (true) {
                if (pos == data.length) {
                    throw error(pos, "unexpected end of input in the string that starts at offset " + open);
                }
                int b = data[pos] & 0xff;
                if (b == '"' || b == '\\') {
                    appendRun(out, run, pos, ascii);
                    if (b == '"') {
                        pos++;
                        return out.toString();
                    }
                    escape(out);
                    run = pos;
                    ascii = true;
                } else if (b < 0x20) {
                    throw error(pos, String.format("control character U+%04X in a string must be escaped", b));
                } else {
                    ascii &= b < 0x80;
                    pos++;
                }
            }
        }

        /** Appends the raw string bytes {@code [from, to)}, decoding UTF-8 strictly unless they are all ASCII. */
        private void appendRun(StringBuilder out, int from, int to, boolean ascii) {
            if (ascii) {
                for (int i = from; i < to; i++) {
                    out.append((char) data[i]);
                }
                return;
            }
            if (utf8 == null) {
                utf8 = StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT);
            }
            ByteBuffer in = ByteBuffer.wrap(data, from, to - from);
            CharBuffer chars = CharBuffer.allocate(to - from);
            utf8.reset();
            CoderResult result = utf8.decode(in, chars, true);
            if (!result.isError()) {
                result = utf8.flush(chars);
            }
            if (result.isError()) {
                // wrap() leaves the buffer's position an absolute offset into data.
                throw error(in.position(), "invalid UTF-8 " + bytes(in.position(), result.length()));
            }
            out.append(chars.flip());
        }

        private void escape(StringBuilder out) {
            int start = pos++;
            if (pos == data.length) {
                throw error(start, "unexpected end of input in an escape");
            }
            byte e = data[pos++];
            switch (e) {
                case '"', '\\', '/' -> out.append((char) e);
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'u' -> {
                    char c = hex4(start);
                    if (Character.isLowSurrogate(c)) {
                        throw error(start, "lone low surrogate \\u" + hex4Text(c) + " (no high surrogate escape before it)");
                    }
                    if (Character.isHighSurrogate(c)) {
                        if (pos + 1 >= data.length || data[pos] != '\\' || data[pos + 1] != 'u') {
                            throw error(start, "lone high surrogate \\u" + hex4Text(c)
                                    + " (not followed by a low surrogate escape)");
                        }
                        int lowAt = pos;
                        pos += 2;
                        char low = hex4(lowAt);
                        if (!Character.isLowSurrogate(low)) {
                            throw error(start, "lone high surrogate \\u" + hex4Text(c) + " (followed by \\u"
                                    + hex4Text(low) + ", not by a low surrogate)");
                        }
                        out.append(c).append(low);
                    } else {
                        out.append(c);
                    }
                }
                default -> throw error(start, "invalid escape " + describe(pos - 1) + " after '\\'");
            }
        }

        /** The four hex digits at {@code pos} of the {@code \\u} escape that starts at {@code start}. */
        private char hex4(int start) {
            int c = 0;
            for (int i = 0; i < 4; i++) {
                int digit = pos < data.length ? hexDigit(data[pos]) : -1;
                if (digit < 0) {
                    throw error(start, "a \\u escape needs four hex digits, found " + describe(pos));
                }
                c = c << 4 | digit;
                pos++;
            }
            return (char) c;
        }

        private static int hexDigit(byte b) {
            if (b >= '0' && b <= '9') {
                return b - '0';
            }
            if (b >= 'a' && b <= 'f') {
                return b - 'a' + 10;
            }
            if (b >= 'A' && b <= 'F') {
                return b - 'A' + 10;
            }
            return -1;
        }

        /** RFC 8259: {@code -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?}, then only integers in long range. */
        private Long number() {
            int start = pos;
            if (at('-')) {
                pos++;
            }
            if (at('0')) {
                pos++;
                if (digitAt()) {
                    throw error(start, "a number must not have a leading zero");
                }
            } else if (digitAt()) {
                digits();
            } else {
                throw error(pos, "expected a digit after '-', found " + describe(pos));
            }
            int integerEnd = pos;
            if (at('.')) {
                pos++;
                if (!digitAt()) {
                    throw error(pos, "expected a digit after the decimal point, found " + describe(pos));
                }
                digits();
            }
            if (at('e') || at('E')) {
                pos++;
                if (at('+') || at('-')) {
                    pos++;
                }
                if (!digitAt()) {
                    throw error(pos, "expected a digit in the exponent, found " + describe(pos));
                }
                digits();
            }
            String token = new String(data, start, pos - start, StandardCharsets.US_ASCII);
            if (pos != integerEnd) {
                throw error(start, "the number " + abbreviate(token) + " has a fraction or an exponent;"
                        + " records hold integers only");
            }
            try {
                return Long.parseLong(token);
            } catch (NumberFormatException ex) {
                // The grammar above admits only digits here, so the one way to fail is range.
                throw error(start, "the integer " + abbreviate(token) + " is out of range (records hold signed 64-bit"
                        + " integers, " + Long.MIN_VALUE + " to " + Long.MAX_VALUE + ")");
            }
        }

        private void digits() {
            while (digitAt()) {
                pos++;
            }
        }

        private boolean digitAt() {
            return pos < data.length && data[pos] >= '0' && data[pos] <= '9';
        }

        private Object literal(String word, Object value) {
            for (int i = 0; i < word.length(); i++) {
                if (pos + i == data.length || data[pos + i] != word.charAt(i)) {
                    throw error(pos + i, "expected '" + word + "', found " + describe(pos + i));
                }
            }
            pos += word.length();
            return value;
        }

        private void skipSpace() {
            while (pos < data.length) {
                byte b = data[pos];
                if (b != ' ' && b != '\n' && b != '\r' && b != '\t') {
                    return;
                }
                pos++;
            }
        }

        private boolean at(char c) {
            return pos < data.length && data[pos] == c;
        }

        /** What is at {@code offset}, for an error message: a printable ASCII character, a byte value, or the end. */
        private String describe(int offset) {
            if (offset >= data.length) {
                return "the end of input";
            }
            int b = data[offset] & 0xff;
            if (b == '\'') {
                return "\"'\"";
            }
            if (b > 0x20 && b < 0x7f) {
                return "'" + (char) b + "'";
            }
            return String.format("byte 0x%02X", b);
        }

        private String bytes(int offset, int length) {
            StringBuilder s = new StringBuilder("(bytes");
            for (int i = offset; i < offset + length && i < data.length; i++) {
                s.append(String.format(" %02X", data[i] & 0xff));
            }
            return s.append(')').toString();
        }

        private static IllegalArgumentException error(int offset, String what) {
            return new IllegalArgumentException("malformed JSON at byte offset " + offset + ": " + what);
        }
    }

    private static String hex4Text(char c) {
        return String.format("%04X", (int) c);
    }

    /** A field name or number for a message: quoted and escaped like JSON, and cut to a readable length. */
    private static String quote(String s) {
        StringBuilder out = new StringBuilder();
        writeString(out, abbreviate(s), "");
        return out.toString();
    }

    /** At most 64 characters of {@code s}, never cutting a surrogate pair in two. */
    private static String abbreviate(String s) {
        if (s.length() <= 64) {
            return s;
        }
        int cut = Character.isLowSurrogate(s.charAt(61)) ? 60 : 61;
        return s.substring(0, cut) + "...";
    }
}
