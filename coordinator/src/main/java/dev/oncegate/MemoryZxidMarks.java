package dev.oncegate;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/** {@link ZxidMarks#inMemory()}: a concurrent map of maxima, and one of the rollbacks caught. Thread-safe. */
class MemoryZxidMarks implements ZxidMarks {

    /**
     * Namespace and genesis id, the key of a mark.
     *
     * <p>{@code equals} and {@code hashCode} are written out: a record's own are linked through
     * {@code ObjectMethods} on first use, which costs a short-lived CLI (every {@code run} looks a
     * mark up) about 15 ms of method-handle set-up.
     */
    record Life(String namespace, String genesisId) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Life other && Objects.equals(namespace, other.namespace) && Objects.equals(genesisId, other.genesisId);
        }

        @Override
        public int hashCode() {
            return 31 * Objects.hashCode(namespace) + Objects.hashCode(genesisId);
        }
    }

    final Map<Life, Long> marks = new ConcurrentHashMap<>();
    /** The rollbacks caught, per life: the first one kept. */
    final Map<Life, Rollback> rollbacks = new ConcurrentHashMap<>();

    @Override
    public long highest(String namespace, String genesisId) {
        return marks.getOrDefault(new Life(namespace, genesisId), 0L);
    }

    @Override
    public void observe(String namespace, String genesisId, long zxid) {
        marks.merge(new Life(namespace, genesisId), zxid, Math::max);
    }

    @Override
    public Set<String> lives(String namespace) {
        return marks.keySet().stream().filter(life -> life.namespace().equals(namespace)).map(Life::genesisId)
                .collect(Collectors.toUnmodifiableSet());
    }

    @Override
    public Optional<Rollback> rolledBack(String namespace, String life) {
        return Optional.ofNullable(rollbacks.get(new Life(namespace, life)));
    }

    @Override
    public void rolledBack(String namespace, String life, Rollback found) {
        rollbacks.putIfAbsent(new Life(namespace, life), Objects.requireNonNull(found, "found"));
    }

    @Override
    public void flush() {
        // nothing to persist
    }
}
