package dev.oncegate.cli;

/**
 * The CLI could not establish the state it needs (ZooKeeper unreachable): fail closed, exit 13.
 */
final class UnavailableException extends RuntimeException {

    UnavailableException(String message) {
        super(message);
    }
}
