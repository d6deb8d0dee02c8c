package dev.oncegate.bench;

import java.util.Arrays;
import java.util.Collection;

/**
 * One worker's record of a trial: the verdict of each attempt, its latency, and the first
 * error. Merged over the workers once the trial is over.
 *
 * <p>Not thread-safe: one writer at a time (the worker's thread, or for pipelined requests the
 * session's event thread); readers see it after joining that writer.
 */
final class Tally {

    private long[] nanos = new long[256];
    private int samples;
    private final long[] verdicts = new long[Verdict.values().length];
    private String firstError;

    /** One attempt's verdict and latency; a negative latency records the verdict alone. */
    void record(Verdict verdict, long latencyNanos) {
        verdicts[verdict.ordinal()]++;
        if (latencyNanos >= 0) {
            addSample(latencyNanos);
        }
    }

    /**
     * Runs one attempt and records its verdict and latency, or its failure.
     *
     * @throws InterruptedException when the attempt was interrupted (not recorded)
     */
    void time(AttemptCall call) throws InterruptedException {
        long started = System.nanoTime();
        try {
            record(call.run(), System.nanoTime() - started);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            error(e);
        }
    }

    /** One attempt, for {@link #time}. */
    @FunctionalInterface
    interface AttemptCall {
        Verdict run() throws Exception;
    }

    /** A latency without a verdict (a contended key's: its contenders' verdicts are recorded apart). */
    void latency(long latencyNanos) {
        addSample(latencyNanos);
    }

    private void addSample(long latencyNanos) {
        if (samples == nanos.length) {
            nanos = Arrays.copyOf(nanos, samples * 2);
        }
        nanos[samples++] = latencyNanos;
    }

    /** An attempt that failed: undecided, and the first failure is kept for the report. */
    void error(Throwable e) {
        verdicts[Verdict.UNDECIDED.ordinal()]++;
        if (firstError == null) {
            firstError = e.toString();
        }
    }

    long count(Verdict verdict) {
        return verdicts[verdict.ordinal()];
    }

    String firstError() {
        return firstError;
    }

    /** All of {@code tallies} in one. */
    static Tally merge(Collection<Tally> tallies) {
        Tally all = new Tally();
        for (Tally t : tallies) {
            for (int i = 0; i < t.samples; i++) {
                all.addSample(t.nanos[i]);
            }
            for (int v = 0; v < all.verdicts.length; v++) {
                all.verdicts[v] += t.verdicts[v];
            }
            if (all.firstError == null) {
                all.firstError = t.firstError;
            }
        }
        return all;
    }

    /** The latency distribution recorded so far. */
    Report.Latency latency() {
        long[] sorted = Arrays.copyOf(nanos, samples);
        Arrays.sort(sorted);
        return new Report.Latency(samples, percentileMs(sorted, 0.50), percentileMs(sorted, 0.99),
                percentileMs(sorted, 0.999), samples == 0 ? 0 : sorted[samples - 1] / 1e6);
    }

    /** Nearest-rank percentile, in milliseconds. */
    private static double percentileMs(long[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        int rank = (int) Math.ceil(p * sorted.length);
        return sorted[Math.max(0, rank - 1)] / 1e6;
    }
}
