package dev.oncegate;

import java.time.Instant;
import java.util.Objects;

/**
 * A namespace's identity, written once by {@code oncegate init}. Gates remember the id they
 * first saw and refuse to work when it is missing or different: lost or replaced ZooKeeper
 * data must never look like a fresh start.
 *
 * <p>Immutable and thread-safe.
 *
 * @param id      random identifier of this namespace's life
 * @param created when {@code init} wrote it
 */
public record Genesis(String id, Instant created) {
    public Genesis {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(created, "created");
    }
}
