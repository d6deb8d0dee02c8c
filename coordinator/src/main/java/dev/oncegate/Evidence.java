package dev.oncegate;

import java.time.Instant;
import java.util.Objects;

/**
 * The record a decision rests on: where it was read, which scope, who wrote it and when,
 * and a human-readable detail. Fields that the record does not carry are {@code null}
 * ({@code task}, {@code host}, {@code at}) or {@code -1} ({@code scope}).
 *
 * <p>Immutable and thread-safe.
 *
 * @param path   the znode the decision rests on (or the namespace, for connection trouble)
 * @param scope  the scope number, or -1 when no scope is involved
 * @param task   the task id that wrote the record, if known
 * @param host   the host that wrote the record, if known
 * @param at     when the record was written, if known
 * @param detail what was found, in words
 */
public record Evidence(String path, int scope, String task, String host, Instant at, String detail) {

    public Evidence {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(detail, "detail");
    }

    static Evidence of(String path, int scope, String detail) {
        return new Evidence(path, scope, null, null, null, detail);
    }
}
