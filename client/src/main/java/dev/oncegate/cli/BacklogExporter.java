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
 * The long-running part of {@code oncegate exporter}: scans the namespace's backlog every
 * interval and serves the last complete scan as gauges ({@link BacklogMeters}) on
 * {@code /metrics}.
 *
 * <p><b>Scans.</b> One thread; the first scan starts at once, each next one an interval after
 * the previous one ended (a scan slower than the interval delays the next, never overlaps it,
 * so the load on ZooKeeper stays one sequential walk). A scan either completes and replaces the
 * served backlog at once, or fails and changes nothing: the gauges keep the last complete scan's
 * values and its timestamp goes stale. A failure (ZooKeeper unreachable or lost, permission
 * denied, no genesis) is logged with its reason at WARN, and so is the first success after
 * failures; the exporter never exits on one: the Curator client keeps reconnecting and the next
 * scan tries again.
 *
 * <p><b>Lifecycle.</b> LATENT → STARTED → CLOSED, moved with compareAndSet: {@link #start} once
 * (it binds the port first, so a bad {@code --listen} fails before anything else), {@link #close}
 * from any thread (a shutdown hook), any number of times: it stops serving, interrupts a scan
 * under way, waits for it, and closes the ZooKeeper client.
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
    private final ScheduledExecutorService scans = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "oncegate-exporter-scan");
        t.setDaemon(true);
        return t;
    });
    private final CountDownLatch closed = new CountDownLatch(1);
    private volatile MetricsEndpoint endpoint;
    private int failures; // scan thread only

    /**
     * An exporter of {@code operator}'s namespace, which it owns with its connection {@code zk}
     * (closed by {@link #close}).
     */
    BacklogExporter(ZooKeeperConnection zk, Operator operator, Duration interval, Clock clock) {
        this.zk = Objects.requireNonNull(zk, "zk");
        this.operator = Objects.requireNonNull(operator, "operator");
        this.interval = Objects.requireNonNull(interval, "interval");
        this.clock = Objects.requireNonNull(clock, "clock");
        // The registry's owner chooses histograms: any timer served here gets the dashboard's buckets.
        registry.config().meterFilter(OncegateMeters.percentileHistograms());
        new BacklogMeters(operator.namespace(), last::get, clock).bindTo(registry);
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
    }

    /** Where the metrics are served ({@code http://HOST:PORT/metrics}). */
    String url() {
        return endpoint.url();
    }

    /** One scan: on success the new backlog is served; on failure nothing changes but the log. */
    private void scanOnce() {
        Instant started = clock.instant();
        try {
            Backlog backlog = Backlog.scan(operator, clock);
            last.set(backlog);
            if (failures > 0) {
                LOG.warn("oncegate exporter: scan of {} complete again after {} failed: {} keys in {} ms",
                        operator.namespace(), failures, backlog.keys().values().stream().mapToLong(Long::longValue).sum(),
                        backlog.took().toMillis());
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
            try {
                if (!scans.awaitTermination(STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                    LOG.warn("oncegate exporter: a scan did not stop within {}; closing its ZooKeeper client under it",
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
