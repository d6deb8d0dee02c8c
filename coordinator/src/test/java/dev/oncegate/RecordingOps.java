package dev.oncegate;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.core.instrument.MeterRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.Watcher;

/**
 * A gate's ZooKeeper seam on a real server ({@link CuratorOps} on a test's client) that records each
 * operation the gate sends, so a test can assert what a contender asked of ZooKeeper and in which
 * order, and that lets a test step in around a call: a schedule on a real server. The calls that only
 * ask the client about itself (session, connection, listeners, the wait for events) and the building
 * of a multi's ops are not recorded; an election's own operations are Curator's (its LeaderLatch), so
 * only the joining is.
 *
 * <p>Thread-safe: the record is a concurrent list; a step runs on the thread that sent the call.
 */
final class RecordingOps implements InvocationHandler {

    /**
     * One operation the gate sent.
     *
     * @param method  the seam's method ({@code multi}, {@code getData}, {@code create}, {@code joinElection}, ...)
     * @param ops     what it names: a multi's ops as {@code "SetData /path"}, else its path
     * @param watched whether it set a watch
     */
    record Call(String method, List<String> ops, boolean watched) {

        /** Whether this is a multi with the op {@code kind} ({@code "Create"}, {@code "SetData"}, ...) on {@code path}. */
        boolean isMultiWith(String kind, String path) {
            return method.startsWith("multi") && ops.contains(kind + " " + path);
        }
    }

    /**
     * Steps in around a call ({@code call}, recorded or not, and its arguments, which the step may replace);
     * {@code send} sends it to the real seam and gives its result.
     */
    interface Around {
        Object call(Call call, Object[] args, Send send) throws Throwable;
    }

    /** Sends the call to the real seam. */
    interface Send {
        Object send() throws Throwable;
    }

    private static final Set<String> NOT_RECORDED = Set.of("sessionId", "sessionTimeoutMs", "connected", "awaitConnected",
            "started", "connectString", "listen", "close", "await", "toString", "hashCode", "equals");

    private final ZooKeeperOps real;
    private final List<Call> calls = new CopyOnWriteArrayList<>();
    private volatile Around around = (call, args, send) -> send.send();

    RecordingOps(CuratorFramework client, String name) {
        this.real = new CuratorOps(client, name);
    }

    /** The seam to build a gate on. */
    ZooKeeperOps ops() {
        return (ZooKeeperOps) Proxy.newProxyInstance(ZooKeeperOps.class.getClassLoader(), new Class<?>[] {ZooKeeperOps.class},
                this);
    }

    /** A gate on this seam (no ACLs asked for, an in-memory rollback witness, a meter registry of the test's). */
    DefaultGate gate(String namespace, String task, Clock clock, Duration leaseTtl, MeterRegistry registry) {
        return new DefaultGate(ops(), namespace, registry, clock, leaseTtl, Duration.ofSeconds(15), task, "test", 1, false,
                ZxidMarks.inMemory());
    }

    /** From now on, every call goes through {@code step}. */
    void around(Around step) {
        around = step;
    }

    /** The calls recorded so far, oldest first. */
    List<Call> calls() {
        return List.copyOf(calls);
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        Call call = call(method, args);
        if (!NOT_RECORDED.contains(method.getName()) && !method.getName().startsWith("op")) {
            calls.add(call);
        }
        return around.call(call, args, () -> {
            try {
                return method.invoke(real, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        });
    }

    private static Call call(Method method, Object[] args) {
        List<String> named = new ArrayList<>();
        boolean watched = false;
        for (Object arg : args == null ? new Object[0] : args) {
            if (arg instanceof List<?> ops) {
                for (Object op : ops) {
                    if (op instanceof Op o) {
                        named.add(o.getClass().getSimpleName() + " " + o.getPath());
                    }
                }
            } else if (arg instanceof String path && path.startsWith("/") && named.isEmpty()) {
                named.add(path);
            } else if (arg instanceof Watcher) {
                watched = true;
            }
        }
        return new Call(method.getName(), List.copyOf(named), watched);
    }
}
