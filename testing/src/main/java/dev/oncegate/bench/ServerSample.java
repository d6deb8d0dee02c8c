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
 * @param operations     operations by type: a request is one, a {@code multi} each operation it carries
 * @param serverCpuNanos CPU time of the server's own long-lived threads (connections, request pipeline,
 *                       sessions; not snapshots, which run on short-lived threads)
 * @param processCpuNanos CPU time of this whole JVM: server, clients and the harness
 */
record ServerSample(long zxid, Map<String, Long> requests, long watchesFired, long fsyncs, long threadsStarted,
                    Map<String, Long> operations, long serverCpuNanos, long processCpuNanos) {

    /** Operations that are not work: keep-alives. */
    static final String PING = "ping";

    ServerSample {
        requests = Map.copyOf(requests);
        operations = Map.copyOf(operations);
    }

    /** What happened between {@code earlier} and this sample. */
    ServerSample minus(ServerSample earlier) {
        return new ServerSample(zxid - earlier.zxid, minus(requests, earlier.requests), watchesFired - earlier.watchesFired,
                fsyncs - earlier.fsyncs, threadsStarted - earlier.threadsStarted, minus(operations, earlier.operations),
                serverCpuNanos - earlier.serverCpuNanos, processCpuNanos - earlier.processCpuNanos);
    }

    private static Map<String, Long> minus(Map<String, Long> later, Map<String, Long> earlier) {
        Map<String, Long> delta = new TreeMap<>();
        later.forEach((type, n) -> {
            long d = n - earlier.getOrDefault(type, 0L);
            if (d != 0) {
                delta.put(type, d);
            }
        });
        return delta;
    }

    /** Operations of every type but pings. */
    long workOperations() {
        return work(operations);
    }

    /** Requests of every type but pings. */
    long workRequests() {
        return work(requests);
    }

    private static long work(Map<String, Long> byType) {
        return byType.entrySet().stream().filter(e -> !e.getKey().equals(PING)).mapToLong(Map.Entry::getValue).sum();
    }
}
