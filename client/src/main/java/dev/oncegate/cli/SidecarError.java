package dev.oncegate.cli;

/**
 * A sidecar request refused before it changed anything: the HTTP status and the request field at
 * fault (null when no one field is), answered as {@code {"error": MESSAGE, "field": FIELD}}.
 *
 * <p>Immutable; thread-safe.
 */
final class SidecarError extends RuntimeException {

    private final int status;
    private final String field;

    SidecarError(int status, String field, String message) {
        super(message, null, false, false);
        this.status = status;
        this.field = field;
    }

    /** 400: the field is missing, malformed or combined wrongly. */
    static SidecarError badField(String field, String message) {
        return new SidecarError(400, field, field + ": " + message);
    }

    /** 409: the call does not fit the handle's state (stale token, second outcome, crossing twice). */
    static SidecarError conflict(String field, String message) {
        return new SidecarError(409, field, field + ": " + message);
    }

    int status() {
        return status;
    }

    String field() {
        return field;
    }
}
