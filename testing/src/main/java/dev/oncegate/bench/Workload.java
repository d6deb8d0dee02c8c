package dev.oncegate.bench;

import java.util.Locale;

/**
 * The workloads of issue 9. Each counts one unit per effect, per stop or per key, and says how
 * many workers (each with its own session) take part.
 */
enum Workload {

    NEW_KEYS_1(Shape.NEW_KEYS, 1, "one worker, every effect on a new key"),
    NEW_KEYS_16(Shape.NEW_KEYS, 16, "16 workers, every effect on a new key"),
    CONSUMED_16(Shape.CONSUMED, 16,
            "16 late contenders on keys consumed before the trial, their containers since reaped; each key"
                    + " is met once per trial and every attempt must stop"),
    CONTENDED_16(Shape.CONTENDED, 16,
            "16 contenders start on one fresh key at once; a key counts when its last contender has its decision"),
    CONTENDED_64(Shape.CONTENDED, 64,
            "64 contenders start on one fresh key at once; a key counts when its last contender has its decision");

    /** How the workers meet the keys, and what one unit of throughput is: effects, stops or keys. */
    enum Shape {
        NEW_KEYS("effects"), CONSUMED("stops"), CONTENDED("keys");

        private final String unit;

        Shape(String unit) {
            this.unit = unit;
        }
    }

    private final Shape shape;
    private final int workers;
    private final String description;

    Workload(Shape shape, int workers, String description) {
        this.shape = shape;
        this.workers = workers;
        this.description = description;
    }

    /** The name in the report, e.g. {@code new_keys_16}. */
    String id() {
        return name().toLowerCase(Locale.ROOT);
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
        return shape.unit;
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
