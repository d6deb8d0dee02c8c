package dev.oncegate.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Iterator;
import java.util.Set;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * One sidecar request's JSON body, read strictly: an object of known fields only, each of the type
 * the endpoint documents. Every refusal names the field ({@link SidecarError}), and nothing is
 * written before the whole body was read and checked.
 *
 * <p>Not thread-safe: one request, one thread.
 */
final class SidecarRequest {

    /** Bodies are small JSON objects; anything bigger is refused unread. */
    static final int MAX_BODY = 64 * 1024;

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final JsonNode body;

    private SidecarRequest(JsonNode body) {
        this.body = body;
    }

    /**
     * Reads a body that may name only {@code allowed} fields.
     *
     * @throws SidecarError 400 for malformed JSON, a body that is not an object or an unknown field; 413 past {@link #MAX_BODY}
     */
    static SidecarRequest read(InputStream in, Set<String> allowed) throws IOException {
        byte[] bytes = in.readNBytes(MAX_BODY + 1);
        if (bytes.length > MAX_BODY) {
            throw new SidecarError(413, null, "body: larger than " + MAX_BODY + " bytes");
        }
        JsonNode node;
        try {
            node = bytes.length == 0 ? MAPPER.createObjectNode() : MAPPER.readTree(bytes);
        } catch (JsonProcessingException e) {
            throw SidecarError.badField("body", "not valid JSON: " + e.getOriginalMessage());
        }
        if (node == null || node.isMissingNode()) {
            node = MAPPER.createObjectNode();
        }
        if (!node.isObject()) {
            throw SidecarError.badField("body", "must be a JSON object, got " + node.getNodeType().name().toLowerCase());
        }
        for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!allowed.contains(name)) {
                throw SidecarError.badField(name, "unknown field; this endpoint takes " + String.join(", ", allowed.stream().sorted().toList()));
            }
        }
        return new SidecarRequest(node);
    }

    /** A string field, or null when absent or JSON null. */
    String text(String field) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw SidecarError.badField(field, "must be a string");
        }
        return v.textValue();
    }

    /** A string field that must be present and non-empty. */
    String requiredText(String field) {
        String v = text(field);
        if (v == null || v.isEmpty()) {
            throw SidecarError.badField(field, "missing");
        }
        return v;
    }

    /** An integer field in [min, max], or {@code absent} when absent or JSON null. */
    long integer(String field, long min, long max, long absent) {
        JsonNode v = body.get(field);
        if (v == null || v.isNull()) {
            return absent;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong() || v.longValue() < min || v.longValue() > max) {
            throw SidecarError.badField(field, "must be an integer from " + min + " to " + max + ", got " + v);
        }
        return v.longValue();
    }

    /** A required integer field in [min, max]. */
    long requiredInteger(String field, long min, long max) {
        if (!has(field)) {
            throw SidecarError.badField(field, "missing");
        }
        return integer(field, min, max, 0);
    }

    boolean has(String field) {
        JsonNode v = body.get(field);
        return v != null && !v.isNull();
    }
}
