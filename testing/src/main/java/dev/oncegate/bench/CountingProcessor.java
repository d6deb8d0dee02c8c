package dev.oncegate.bench;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.server.Request;
import org.apache.zookeeper.server.RequestProcessor;

/**
 * Counts every request by operation type on its way into the server's own first request
 * processor, then passes it on unchanged. It sits where every client request (and every
 * container deletion the server issues itself) enters the pipeline, so the counts are what the
 * server did, not what a client believes it sent.
 *
 * <p>Thread-safe: the server's connection threads call {@link #processRequest} concurrently;
 * {@link #counts()} may be read from any thread.
 */
final class CountingProcessor implements RequestProcessor {

    private final RequestProcessor next;
    private final Map<Integer, LongAdder> byType = new ConcurrentHashMap<>();

    CountingProcessor(RequestProcessor next) {
        this.next = next;
    }

    @Override
    public void processRequest(Request request) throws RequestProcessorException {
        byType.computeIfAbsent(request.type, t -> new LongAdder()).increment();
        next.processRequest(request);
    }

    @Override
    public void shutdown() {
        next.shutdown();
    }

    /** Requests so far of every type but pings: cheap enough to poll. */
    long workRequests() {
        long n = 0;
        for (Map.Entry<Integer, LongAdder> e : byType.entrySet()) {
            if (e.getKey() != ZooDefs.OpCode.ping) {
                n += e.getValue().sum();
            }
        }
        return n;
    }

    /** Requests so far, by ZooKeeper's name for the operation ({@code create}, {@code getData}, …). */
    Map<String, Long> counts() {
        Map<String, Long> counts = new TreeMap<>();
        byType.forEach((type, n) -> counts.put(Request.op2String(type), n.sum()));
        return counts;
    }
}
