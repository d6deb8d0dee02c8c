package dev.oncegate.cli;

/**
 * The CLI could not establish the state it needs (ZooKeeper unreachable, no permission): fail
 * closed, exit 13. Its message says what failed and what to check. Not thread-safe, as any exception.
 */
final class UnavailableException extends RuntimeException {

    UnavailableException(String message) {
        super(message);
    }

    UnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
