package dev.oncegate.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import dev.oncegate.ActionResult;
import dev.oncegate.BoundaryAction;
import dev.oncegate.FencingToken;
import dev.oncegate.ProvenNotSentException;

/**
 * A fake delivery provider that records every delivery in a ledger: which key, which scope,
 * which fencing token, which task. Tests assert on the ledger (how many deliveries happened),
 * never merely on the absence of exceptions. To hold an executor inside one of these actions
 * (and crash or fence it there), wrap it in a {@link CrossingInFlight}.
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
    private final Path ledgerFile;
    private final Map<String, Long> highestZxid = new ConcurrentHashMap<>();
    private final AtomicLong receipts = new AtomicLong();
    private final boolean enforceTokens;

    public RecordingProvider() {
        this(false, null);
    }

    private RecordingProvider(boolean enforceTokens, Path ledgerFile) {
        this.enforceTokens = enforceTokens;
        this.ledgerFile = ledgerFile;
    }

    /**
     * A provider that also appends each delivery, as one line, to {@code ledgerFile} before it
     * confirms — so deliveries made by worker processes that are later killed are still counted.
     * Many processes may append to one file; read it back with {@link #readLedger(Path)}.
     */
    public static RecordingProvider appendingTo(Path ledgerFile) {
        return new RecordingProvider(false, Objects.requireNonNull(ledgerFile, "ledgerFile"));
    }

    /** The deliveries appended to {@code ledgerFile} by {@link #appendingTo} providers, in file order. */
    public static List<Delivery> readLedger(Path ledgerFile) throws IOException {
        List<Delivery> deliveries = new ArrayList<>();
        if (!Files.exists(ledgerFile)) {
            return deliveries;
        }
        for (String line : Files.readAllLines(ledgerFile, StandardCharsets.UTF_8)) {
            String[] f = line.split(" ");
            if (f.length != 7) {
                continue; // a line torn by a SIGKILL mid-write is not a confirmed delivery record
            }
            deliveries.add(new Delivery(f[0], Integer.parseInt(f[1]), new FencingToken(Integer.parseInt(f[2]),
                    Long.parseLong(f[3])), f[4], f[5], Instant.parse(f[6])));
        }
        return deliveries;
    }

    /** A provider that refuses (as proven not sent) a token older than one it already accepted for the key. */
    public static RecordingProvider enforcingTokens() {
        return new RecordingProvider(true, null);
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
            String receipt = "receipt-" + ProcessHandle.current().pid() + "-" + receipts.incrementAndGet();
            Delivery delivery = new Delivery(ctx.key().key(), ctx.scope(), ctx.token(), ctx.taskId(), receipt, Instant.now());
            if (ledgerFile != null) {
                String line = String.join(" ", delivery.key(), Integer.toString(delivery.scope()),
                        Integer.toString(delivery.token().version()), Long.toString(delivery.token().zxid()),
                        delivery.taskId().replace(' ', '_'), receipt, delivery.at().toString()) + "\n";
                try {
                    // One append per line: O_APPEND keeps lines from different processes whole.
                    Files.write(ledgerFile, line.getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE,
                            StandardOpenOption.APPEND, StandardOpenOption.WRITE);
                } catch (IOException e) {
                    throw new UncheckedIOException("could not append to the ledger " + ledgerFile, e);
                }
            }
            ledger.add(delivery);
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
}
