package dev.oncegate.bench;

import java.util.Map;
import java.util.TreeMap;

/**
 * The server's cumulative counters at one instant; the difference of two samples is what a trial
 * cost. Immutable and thread-safe.
 *
 * @param zxid           the last processed transaction id (one per transaction, failed ones included)
 * @param requests       requests by operation type, as the server received them
 * @param watchesFired   watch notifications the server sent
 * @param fsyncs         fsyncs of the transaction log
 * @param threadsStarted threads started in this JVM so far (clients and server alike)
 */
record ServerSample(long zxid, Map<String, Long> requests, long watchesFired, long fsyncs, long threadsStarted) {

    /** Operations that are not work: keep-alives. */
    static final String PING = "ping";

    ServerSample {
        requests = Map.copyOf(requests);
    }

    /** What happened between {@code earlier} and this sample. */
    ServerSample minus(ServerSample earlier) {
        Map<String, Long> delta = new TreeMap<>();
        requests.forEach((type, n) -> {
            long d = n - earlier.requests.getOrDefault(type, 0L);
            if (d != 0) {
                delta.put(type, d);
            }
        });
        return new ServerSample(zxid - earlier.zxid, delta, watchesFired - earlier.watchesFired,
                fsyncs - earlier.fsyncs, threadsStarted - earlier.threadsStarted);
    }

    /** Requests of every type but pings. */
    long workRequests() {
        return requests.entrySet().stream().filter(e -> !e.getKey().equals(PING)).mapToLong(Map.Entry::getValue).sum();
    }
}
