package dev.oncegate;

/**
 * Root of oncegate's unchecked exceptions. Expected outcomes (stops, refusals) are values,
 * never exceptions; this is thrown for misuse and for failures that leave nothing to decide.
 */
public class OncegateException extends RuntimeException {

    public OncegateException(String message) {
        super(message);
    }

    public OncegateException(String message, Throwable cause) {
        super(message, cause);
    }
}
