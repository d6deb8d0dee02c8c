package dev.oncegate.cli;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import dev.oncegate.Gate;

/**
 * The sidecar's gates, one per task id its agents name (a gate records one task id in every
 * lease, armed and outcome record, so an agent's own task id needs a gate of its own), all on the
 * sidecar's one ZooKeeper client and one meter registry. A gate is built when a task first enters,
 * counted while it has open handles, and closed once it has had none for the idle time; the
 * default gate (no task named: the sidecar's {@code --task-id}) lives as long as the sidecar.
 *
 * <p>Thread-safe: every method holds the instance's monitor while it touches the map (a gate is
 * built under it, which reads nothing from ZooKeeper); gates are closed outside it.
 */
final class SidecarGates implements AutoCloseable {

    private static final String DEFAULT = "";

    private final Function<String, Gate> build;
    private final Map<String, Entry> gates = new HashMap<>();
    private boolean closed;

    /** @param build builds the gate of a task id (null: the sidecar's own) */
    SidecarGates(Function<String, Gate> build) {
        this.build = build;
    }

    private static final class Entry {
        final Gate gate;
        int handles;
        long idleSince;

        Entry(Gate gate, long now) {
            this.gate = gate;
            this.idleSince = now;
        }
    }

    /**
     * The gate of {@code task} (null: the default), counted as used until {@link #release}.
     *
     * @throws IllegalArgumentException when the task id is malformed (the builder names it)
     * @throws IllegalStateException    once closed
     */
    synchronized Gate acquire(String task, long now) {
        if (closed) {
            throw new IllegalStateException("the sidecar is stopping");
        }
        Entry e = gates.get(task == null ? DEFAULT : task);
        if (e == null) {
            e = new Entry(build.apply(task), now);
            gates.put(task == null ? DEFAULT : task, e);
        }
        e.handles++;
        return e.gate;
    }

    /** One use of {@code task}'s gate ended. */
    synchronized void release(String task, long now) {
        Entry e = gates.get(task == null ? DEFAULT : task);
        if (e != null && --e.handles == 0) {
            e.idleSince = now;
        }
    }

    /** Closes the task gates unused since {@code now - idle} (never the default gate). */
    void closeIdle(long now, long idle) {
        List<Gate> idleGates = new ArrayList<>();
        synchronized (this) {
            gates.entrySet().removeIf(entry -> {
                Entry e = entry.getValue();
                boolean drop = !entry.getKey().equals(DEFAULT) && e.handles == 0 && now - e.idleSince >= idle;
                if (drop) {
                    idleGates.add(e.gate);
                }
                return drop;
            });
        }
        idleGates.forEach(Gate::close);
    }

    /** How many gates are open. */
    synchronized int size() {
        return gates.size();
    }

    @Override
    public void close() {
        List<Gate> all;
        synchronized (this) {
            closed = true;
            all = gates.values().stream().map(e -> e.gate).toList();
            gates.clear();
        }
        all.forEach(Gate::close);
    }
}
