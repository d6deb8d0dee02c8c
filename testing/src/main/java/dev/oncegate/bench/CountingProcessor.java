package dev.oncegate.bench;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import org.apache.zookeeper.MultiOperationRecord;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.server.Request;
import org.apache.zookeeper.server.RequestProcessor;

/**
 * Counts every request by operation type on its way into the server's own first request
 * processor, then passes it on unchanged. It sits where every client request (and every
 * container deletion the server issues itself) enters the pipeline, so the counts are what the
 * server did, not what a client believes it sent.
 *
 * <p>It also counts <em>operations</em>: a request is one, but a {@code multi} or {@code multiRead}
 * is each of the operations it carries ({@code check}, {@code create}, {@code setData}, …), read
 * from the request as the server itself reads it (ZooKeeper caches the decoded record, so the
 * server does not decode it twice). A multi whose record cannot be read counts as one operation of
 * its own type (the bench's clients send none).
 *
 * <p>Thread-safe: the server's connection threads call {@link #processRequest} concurrently;
 * {@link #counts()} may be read from any thread.
 */
final class CountingProcessor implements RequestProcessor {

    private final RequestProcessor next;
    private final Map<Integer, LongAdder> byType = new ConcurrentHashMap<>();
    private final Map<Integer, LongAdder> opsByType = new ConcurrentHashMap<>();

    CountingProcessor(RequestProcessor next) {
        this.next = next;
    }

    @Override
    public void processRequest(Request request) throws RequestProcessorException {
        byType.computeIfAbsent(request.type, t -> new LongAdder()).increment();
        countOperations(request);
        next.processRequest(request);
    }

    private void countOperations(Request request) {
        if (request.type == ZooDefs.OpCode.multi || request.type == ZooDefs.OpCode.multiRead) {
            MultiOperationRecord multi = request.readRequestRecordNoException(MultiOperationRecord::new);
            if (multi != null) {
                for (Op op : multi) {
                    opsByType.computeIfAbsent(op.getType(), t -> new LongAdder()).increment();
                }
                return;
            }
        }
        opsByType.computeIfAbsent(request.type, t -> new LongAdder()).increment();
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
        return named(byType);
    }

    /** Operations so far (a multi's each), by ZooKeeper's name for the operation. */
    Map<String, Long> operations() {
        return named(opsByType);
    }

    private static Map<String, Long> named(Map<Integer, LongAdder> byType) {
        Map<String, Long> counts = new TreeMap<>();
        byType.forEach((type, n) -> counts.put(Request.op2String(type), n.sum()));
        return counts;
    }
}
