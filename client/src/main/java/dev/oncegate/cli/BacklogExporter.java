package dev.oncegate.cli;

import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.oncegate.OncegateException;
import dev.oncegate.OncegateMeters;
import dev.oncegate.Operator;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The long-running part of {@code oncegate exporter}: reads the namespace's backlog every interval
 * from the backlog index, walks every key every walk interval, and serves both as gauges
 * ({@link BacklogMeters}) on {@code /metrics}.
 *
 * <p><b>Scans.</b> Every {@code interval}: the backlog index ({@link Backlog#fromIndex}), each key
 * it names confirmed by its own records, so a scan costs what the backlog costs (armed, unknown,
 * unused authorizations, unreadable records), not what the keyspace costs.
 *
 * <p><b>Walks.</b> Every {@code walkInterval}: every key, bucket by bucket ({@link Backlog#walk}):
 * the authoritative count of the whole keyspace by state, and the index held against the records
 * (entries missing or stale, repaired where this identity may). The index is a hint a worker
 * credential can bend (README, "Threat model"): the walk is what says so. A namespace without an
 * index (initialised by an older release; {@code oncegate init} adds it) is walked every
 * {@code interval} instead, and the walk is what the scan gauges serve, as before the index.
 *
 * <p>Each loop has one thread; its first run starts at once, each next one an interval after the
 * previous one ended (never overlapping itself). A scan or walk either completes and replaces what is
 * served at once, or fails and changes nothing: the gauges keep the last complete values and their
 * timestamps go stale. A failure (ZooKeeper unreachable or lost, permission denied, no genesis) is
 * logged with its reason at WARN, and so is the first success after failures; the exporter never
 * exits on one: the Curator client keeps reconnecting and the next run tries again.
 *
 * <p><b>Lifecycle.</b> LATENT → STARTED → CLOSED, moved with compareAndSet: {@link #start} once
 * (it binds the port first, so a bad {@code --listen} fails before anything else), {@link #close}
 * from any thread (a shutdown hook), any number of times: it stops serving, interrupts a scan or
 * walk under way, waits for them, and closes the ZooKeeper client.
 *
 * <p>Thread-safe.
 */
final class BacklogExporter implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(BacklogExporter.class);
    private static final Duration STOP_WAIT = Duration.ofSeconds(10);

    private enum State { LATENT, STARTED, CLOSED }

    private final AtomicReference<State> state = new AtomicReference<>(State.LATENT);
    private final ZooKeeperConnection zk;
    private final Operator operator;
    private final Duration interval;
    private final Clock clock;
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final AtomicReference<Backlog> last = new AtomicReference<>();
    private final AtomicReference<Backlog.Walk> lastWalk = new AtomicReference<>();
    private final Duration walkInterval;
    private final ScheduledExecutorService scans = daemon("oncegate-exporter-scan");
    private final ScheduledExecutorService walks = daemon("oncegate-exporter-walk");
    private final CountDownLatch closed = new CountDownLatch(1);
    private volatile MetricsEndpoint endpoint;
    private int failures; // scan thread only
    private int walkFailures; // walk thread only
    private String refusedSaid; // walk thread only

    /**
     * An exporter of {@code operator}'s namespace, which it owns with its connection {@code zk}
     * (closed by {@link #close}).
     *
     * @param interval     from the end of one backlog scan to the start of the next
     * @param walkInterval from the end of one walk of every key to the start of the next
     */
    BacklogExporter(ZooKeeperConnection zk, Operator operator, Duration interval, Duration walkInterval, Clock clock) {
        this.zk = Objects.requireNonNull(zk, "zk");
        this.operator = Objects.requireNonNull(operator, "operator");
        this.interval = Objects.requireNonNull(interval, "interval");
        this.walkInterval = Objects.requireNonNull(walkInterval, "walkInterval");
        this.clock = Objects.requireNonNull(clock, "clock");
        // The registry's owner chooses histograms: any timer served here gets the dashboard's buckets.
        registry.config().meterFilter(OncegateMeters.percentileHistograms());
        new BacklogMeters(operator.namespace(), last::get, lastWalk::get, clock).bindTo(registry);
    }

    private static ScheduledExecutorService daemon(String name) {
        return Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Listens on {@code listen}, then starts scanning.
     *
     * @throws IllegalArgumentException when {@code listen} cannot be listened on
     * @throws IllegalStateException    when started before, or closed
     */
    void start(InetSocketAddress listen) {
        if (!state.compareAndSet(State.LATENT, State.STARTED)) {
            throw new IllegalStateException("the exporter can be started once, and not after close; it is " + state.get());
        }
        try {
            endpoint = MetricsEndpoint.serve(registry, listen, "--listen");
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        scans.scheduleWithFixedDelay(this::scanOnce, 0, interval.toNanos(), TimeUnit.NANOSECONDS);
        // Asked every interval whether a walk is due: every walkInterval, or every interval without an index.
        walks.scheduleWithFixedDelay(this::walkIfDue, 0, interval.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Where the metrics are served ({@code http://HOST:PORT/metrics}). */
    String url() {
        return endpoint.url();
    }

    /**
     * One scan of the backlog index: on success the new backlog is served; on failure nothing changes
     * but the log. Without an index it serves nothing itself: the walk, due every interval then, does.
     */
    private void scanOnce() {
        Instant started = clock.instant();
        try {
            Backlog backlog = Backlog.fromIndex(operator, clock);
            if (backlog != null) {
                last.set(backlog);
            }
            if (failures > 0) {
                LOG.warn("oncegate exporter: scan of {} complete again after {} failed: {} in {} ms",
                        operator.namespace(), failures, backlog == null ? "no backlog index (the walk serves the backlog)"
                                : backlog.scanned() + " backlog keys", Duration.between(started, clock.instant()).toMillis());
            }
            failures = 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // closing: the executor is shutting down
        } catch (RuntimeException e) {
            if (state.get() == State.CLOSED) {
                return; // the client was closed under the scan
            }
            failures++;
            Backlog served = last.get();
            LOG.warn("oncegate exporter: scan of {} failed after {} ms ({} in a row): {}; still serving {}; retrying in {}",
                    operator.namespace(), Duration.between(started, clock.instant()).toMillis(), failures,
                    e instanceof OncegateException ? e.getMessage() : e.toString(),
                    served == null ? "no backlog (no scan has completed yet)" : "the scan that ended at " + served.ended()
                            + " (OncegateExporterScanStale fires when none completes for 15 minutes)",
                    Durations.format(interval));
        }
    }

    /**
     * One walk of every key when one is due (none yet, no index, or {@code walkInterval} since the last
     * ended): on success its counts are served (and, without an index, its backlog too); on failure
     * nothing changes but the log.
     */
    private void walkIfDue() {
        Backlog.Walk previous = lastWalk.get();
        if (previous != null && previous.check().indexed()
                && clock.instant().isBefore(previous.backlog().ended().plus(walkInterval))) {
            return;
        }
        Instant started = clock.instant();
        try {
            Backlog.Walk walk = Backlog.walk(operator, clock, true);
            lastWalk.set(walk);
            Operator.IndexCheck check = walk.check();
            if (!check.indexed()) {
                last.set(walk.backlog()); // no index: the walk is the scan, as before the index
            }
            if (check.missing() > 0 || check.stale() > 0) {
                LOG.warn("oncegate exporter: the backlog index of {} disagreed with the records: {} entries missing, {} stale;"
                                + " {} repaired (a hint only: every answer is confirmed by the records; deploy/RUNBOOK.md,"
                                + " 'The backlog index disagrees')", operator.namespace(), check.missing(), check.stale(),
                        check.repaired());
            }
            if (check.refused() != null && !check.refused().equals(refusedSaid)) {
                LOG.warn("oncegate exporter: {}", check.refused());
            }
            refusedSaid = check.refused();
            if (walkFailures > 0) {
                LOG.warn("oncegate exporter: walk of {} complete again after {} failed: {} keys in {} ms",
                        operator.namespace(), walkFailures, walk.backlog().scanned(), walk.backlog().took().toMillis());
            }
            walkFailures = 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // closing: the executor is shutting down
        } catch (RuntimeException e) {
            if (state.get() == State.CLOSED) {
                return; // the client was closed under the walk
            }
            walkFailures++;
            LOG.warn("oncegate exporter: walk of {} failed after {} ms ({} in a row): {}; still serving {}; retrying in {}",
                    operator.namespace(), Duration.between(started, clock.instant()).toMillis(), walkFailures,
                    e instanceof OncegateException ? e.getMessage() : e.toString(),
                    previous == null ? "no walk (none has completed yet)" : "the walk that ended at " + previous.backlog().ended(),
                    Durations.format(interval));
        }
    }

    /** Blocks until {@link #close} has finished. */
    void awaitClosed() throws InterruptedException {
        closed.await();
    }

    @Override
    public void close() {
        if (state.getAndSet(State.CLOSED) == State.CLOSED) {
            return;
        }
        try {
            MetricsEndpoint served = endpoint;
            if (served != null) {
                served.close();
            }
            scans.shutdownNow();
            walks.shutdownNow();
            try {
                long deadline = System.nanoTime() + STOP_WAIT.toNanos();
                if (!scans.awaitTermination(STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS)
                        || !walks.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    LOG.warn("oncegate exporter: a scan or walk did not stop within {}; closing its ZooKeeper client under it",
                            Durations.format(STOP_WAIT));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            zk.close();
            registry.close();
        } finally {
            closed.countDown();
        }
    }
}
