package dev.oncegate.bench;

/**
 * The workloads of issue 9. Each counts one unit per effect, per stop or per key, and says how
 * many workers (each with its own session) take part.
 */
enum Workload {

    NEW_KEYS_1("new_keys_1", Shape.NEW_KEYS, 1, "effects",
            "one worker, every effect on a new key"),
    NEW_KEYS_16("new_keys_16", Shape.NEW_KEYS, 16, "effects",
            "16 workers, every effect on a new key"),
    CONSUMED_16("consumed_16", Shape.CONSUMED, 16, "stops",
            "16 late contenders on keys consumed before the trial, their containers since reaped; each key"
                    + " is met once per trial and every attempt must stop"),
    CONTENDED_16("contended_16", Shape.CONTENDED, 16, "keys",
            "16 contenders start on one fresh key at once; a key counts when its last contender has its decision"),
    CONTENDED_64("contended_64", Shape.CONTENDED, 64, "keys",
            "64 contenders start on one fresh key at once; a key counts when its last contender has its decision");

    /** How the workers meet the keys. */
    enum Shape { NEW_KEYS, CONSUMED, CONTENDED }

    private final String id;
    private final Shape shape;
    private final int workers;
    private final String unit;
    private final String description;

    Workload(String id, Shape shape, int workers, String unit, String description) {
        this.id = id;
        this.shape = shape;
        this.workers = workers;
        this.unit = unit;
        this.description = description;
    }

    /** The name in the report, e.g. {@code new_keys_16}. */
    String id() {
        return id;
    }

    Shape shape() {
        return shape;
    }

    /** Workers (sessions) taking part; for contended workloads, contenders per key. */
    int workers() {
        return workers;
    }

    /** What one unit of throughput is: effects, stops or keys. */
    String unit() {
        return unit;
    }

    String description() {
        return description;
    }

    /** The most workers any workload uses: the size of the fleet. */
    static int maxWorkers() {
        int max = 0;
        for (Workload w : values()) {
            max = Math.max(max, w.workers);
        }
        return max;
    }
}
