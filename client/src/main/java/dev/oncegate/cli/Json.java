package dev.oncegate.cli;

import java.time.Instant;
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
 * <p>Thread-safe (Jackson's mapper is, once configured).
 */
final class Json {

    private static final ObjectMapper MAPPER = new ObjectMapper()
            .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);

    private Json() {
    }

    /** An ordered map to fill in. */
    static Map<String, Object> object() {
        return new LinkedHashMap<>();
    }

    /** One line of compact JSON. */
    static String line(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("could not render JSON: " + e.getMessage(), e);
        }
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
}
