package dev.oncegate;

import java.util.Objects;

/**
 * Who wrote a record: one attempt of one task in one process, in one ZooKeeper session. Every
 * record an executor or an operator command writes carries one, so a retried write recognises
 * itself (by {@code attempt}) and an operator can tell who did what.
 *
 * <p>Immutable and thread-safe.
 *
 * @param task    the task id (a worker's {@code taskId}; {@code oncegate} for an operator command)
 * @param host    the host name
 * @param pid     the process id
 * @param session the ZooKeeper session id, in hex, the record was written in
 * @param attempt a random id of this attempt (16 hex characters)
 */
public record Actor(String task, String host, long pid, String session, String attempt) {

    public Actor {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(session, "session");
        Objects.requireNonNull(attempt, "attempt");
    }
}
