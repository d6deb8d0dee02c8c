package dev.oncegate.bench;

import java.io.PrintStream;

/**
 * The run's progress, one line per step on stderr: {@code [bench 12/86 0:42] new_keys_16 oncegate
 * trial 2/5: 455 effects/s}. Stdout stays for the Markdown table.
 *
 * <p>Thread-safe (lines are printed whole).
 */
final class Progress {

    private final PrintStream err;
    private final long started = System.nanoTime();
    private final int steps;
    private int step;

    Progress(PrintStream err, int steps) {
        this.err = err;
        this.steps = steps;
    }

    /** The next step is done: {@code what} it was. */
    synchronized void step(String what) {
        step++;
        err.println(prefix() + what);
    }

    /** Something worth saying between steps. */
    synchronized void note(String what) {
        err.println(prefix() + what);
    }

    private String prefix() {
        long s = (System.nanoTime() - started) / 1_000_000_000L;
        return String.format("[bench %d/%d %d:%02d] ", step, steps, s / 60, s % 60);
    }
}
