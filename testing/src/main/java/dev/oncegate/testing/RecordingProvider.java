package dev.oncegate.testing;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import dev.oncegate.ActionResult;
import dev.oncegate.BoundaryAction;
import dev.oncegate.FencingToken;
import dev.oncegate.ProvenNotSentException;

/**
 * A fake delivery provider that records every delivery in a ledger: which key, which scope,
 * which fencing token, which task. Tests assert on the ledger (how many deliveries happened),
 * never merely on the absence of exceptions.
 *
 * <p>Like a provider that honours idempotency tokens, it can refuse a delivery whose fencing
 * zxid is lower than one it already accepted for the same key ({@link #enforcingTokens()}).
 *
 * <p>Thread-safe: the ledger is guarded by this object's monitor.
 */
public final class RecordingProvider {

    /**
     * One delivery that reached the provider.
     *
     * @param key     the effect key
     * @param scope   the scope crossed
     * @param token   the fencing token presented
     * @param taskId  the executor's task id
     * @param receipt the receipt the provider handed back
     * @param at      when it was received
     */
    public record Delivery(String key, int scope, FencingToken token, String taskId, String receipt, Instant at) {
    }

    private final List<Delivery> ledger = new ArrayList<>();
    private final Map<String, Long> highestZxid = new ConcurrentHashMap<>();
    private final AtomicLong receipts = new AtomicLong();
    private final boolean enforceTokens;

    public RecordingProvider() {
        this(false);
    }

    private RecordingProvider(boolean enforceTokens) {
        this.enforceTokens = enforceTokens;
    }

    /** A provider that refuses (as proven not sent) a token older than one it already accepted for the key. */
    public static RecordingProvider enforcingTokens() {
        return new RecordingProvider(true);
    }

    /** Delivers and confirms: {@code sent_verified}. */
    public BoundaryAction verified() {
        return ctx -> ActionResult.verified(deliver(ctx));
    }

    /** Delivers, then loses the confirmation: {@code send_status_unknown}. */
    public BoundaryAction unconfirmed() {
        return ctx -> {
            deliver(ctx);
            return ActionResult.unconfirmed("the provider's reply was lost");
        };
    }

    /** Delivers, then fails with {@code failure}: {@code send_status_unknown}. */
    public BoundaryAction deliversThenFails(RuntimeException failure) {
        Objects.requireNonNull(failure, "failure");
        return ctx -> {
            deliver(ctx);
            throw failure;
        };
    }

    /** Rejects before accepting anything, with proof: {@code not_sent}; the ledger is unchanged. */
    public BoundaryAction rejects(String evidence) {
        Objects.requireNonNull(evidence, "evidence");
        return ctx -> {
            throw new ProvenNotSentException(evidence);
        };
    }

    /**
     * Counts down {@code entered}, waits for {@code release}, then delivers and confirms. For
     * tests that crash or fence an executor in the middle of its action.
     */
    public BoundaryAction blocking(CountDownLatch entered, CountDownLatch release) {
        return ctx -> {
            entered.countDown();
            release.await();
            return ActionResult.verified(deliver(ctx));
        };
    }

    /** Records the delivery and returns its receipt. */
    public String deliver(BoundaryAction.Context ctx) throws ProvenNotSentException {
        synchronized (this) {
            if (enforceTokens) {
                Long highest = highestZxid.get(ctx.key().key());
                if (highest != null && ctx.token().zxid() < highest) {
                    throw new ProvenNotSentException("stale fencing token " + ctx.token() + " refused; highest seen zxid "
                            + Long.toHexString(highest));
                }
                highestZxid.put(ctx.key().key(), ctx.token().zxid());
            }
            String receipt = "receipt-" + receipts.incrementAndGet();
            ledger.add(new Delivery(ctx.key().key(), ctx.scope(), ctx.token(), ctx.taskId(), receipt, Instant.now()));
            return receipt;
        }
    }

    /** Every delivery so far, in order. */
    public synchronized List<Delivery> ledger() {
        return List.copyOf(ledger);
    }

    /** How many deliveries reached the provider. */
    public synchronized int deliveries() {
        return ledger.size();
    }

    /** How many deliveries of {@code key} reached the provider. */
    public synchronized long deliveriesOf(String key) {
        return ledger.stream().filter(d -> d.key().equals(key)).count();
    }

    /** A latch already released, for {@link #blocking} callers that need no gate. */
    public static CountDownLatch released() {
        return new CountDownLatch(0);
    }
}
