package dev.oncegate.cli;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Kills a process together with every process it started: {@code run}'s COMMAND when it times
 * out or oncegate is told to stop, and every process the CLI tests started. The descendants are
 * collected before anything is signalled: once a parent dies its children are re-parented and
 * can no longer be found through it.
 *
 * <p>Stateless and thread-safe.
 */
final class ProcessTree {

    /** How long {@link #kill} waits for the root to be reaped after SIGKILL. */
    private static final Duration REAP = Duration.ofSeconds(10);

    private ProcessTree() {
    }

    /**
     * Kills {@code root} and its descendants. With a grace period, asks politely first (SIGTERM
     * to all of them) and waits up to {@code grace} for the root to exit; then SIGKILLs the root
     * before its descendants, so a root that watches its children (oncegate watching COMMAND,
     * say) dies without seeing them go. Waits for the root to be reaped. An interrupt cuts the
     * waits short and stays set.
     */
    static void kill(Process root, Duration grace) {
        List<ProcessHandle> tree = root.descendants().toList();
        if (!grace.isZero()) {
            tree.forEach(ProcessHandle::destroy);
            root.destroy();
            await(root, grace);
        }
        root.destroyForcibly();
        tree.forEach(ProcessHandle::destroyForcibly);
        await(root, REAP);
    }

    private static void await(Process root, Duration limit) {
        try {
            root.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
