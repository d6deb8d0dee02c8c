package dev.oncegate.bench;

/**
 * One way of making an effect happen at most once, measured against the others: raw
 * ZooKeeper, the two-write floor, the naive Curator gate, and oncegate. The effect's action is
 * always {@link Ledger#execute}: no time of its own, so what is measured is coordination.
 *
 * <p>Implementations are thread-safe: every worker calls them at once, each with its own
 * worker index (and so its own session).
 */
interface Arm {

    /** The arm's name in the report. */
    String name();

    /** Whether this arm takes part in that workload; by default it takes part in all. */
    default boolean runs(Workload workload) {
        return true;
    }

    /** Untimed set-up before any trial: base znodes, gates for the first {@code workers} workers. */
    void prepare(int workers) throws Exception;

    /**
     * One contender's whole attempt at one effect: decide, and run the action when this
     * contender is the one to. Waits for another contender's final decision where the arm can.
     */
    Verdict attempt(int worker, String key, Ledger ledger) throws Exception;

    /** A contender that comes after the effect was decided; by default the same attempt. */
    default Verdict lateAttempt(int worker, String key, Ledger ledger) throws Exception {
        return attempt(worker, key, ledger);
    }

    /**
     * One worker's share of a new-keys trial: an attempt at each key {@code keys} hands out, until
     * it hands out null. Pipelined arms override this.
     */
    default void stream(int worker, KeySource keys, Ledger ledger, Tally tally) throws InterruptedException {
        for (String key = keys.next(); key != null; key = keys.next()) {
            String effect = key;
            tally.time(() -> attempt(worker, effect, ledger));
        }
    }

    /** Hands out the keys of a trial; null when the trial is over. Thread-safe. */
    @FunctionalInterface
    interface KeySource {
        String next();
    }
}
