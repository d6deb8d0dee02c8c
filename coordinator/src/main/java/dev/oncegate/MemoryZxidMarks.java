package dev.oncegate;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** {@link ZxidMarks#inMemory()}: a concurrent map of maxima. Thread-safe. */
class MemoryZxidMarks implements ZxidMarks {

    /** Namespace and genesis id, the key of a mark. */
    record Life(String namespace, String genesisId) {
    }

    final Map<Life, Long> marks = new ConcurrentHashMap<>();

    @Override
    public long highest(String namespace, String genesisId) {
        return marks.getOrDefault(new Life(namespace, genesisId), 0L);
    }

    @Override
    public void observe(String namespace, String genesisId, long zxid) {
        marks.merge(new Life(namespace, genesisId), zxid, Math::max);
    }

    @Override
    public void flush() {
        // nothing to persist
    }
}
