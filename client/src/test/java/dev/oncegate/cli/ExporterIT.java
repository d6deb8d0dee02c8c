package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oncegate.Attempt;
import dev.oncegate.EffectKey;
import dev.oncegate.Operator;
import dev.oncegate.ScopeState;
import dev.oncegate.deploy.PrometheusText;
import dev.oncegate.testing.CrossingInFlight;
import dev.oncegate.testing.EmbeddedZooKeeper;
import dev.oncegate.testing.RecordingProvider;
import dev.oncegate.testing.Worker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import dev.oncegate.testing.Timing;

/**
 * {@code oncegate exporter} as an SRE runs it: it serves the backlog a scan found, state by
 * state; a ZooKeeper outage leaves the last values and a stale scan time, never ends the
 * process, and passes; SIGTERM stops it with exit 0 and frees its port; a port it cannot listen
 * on is refused. Each test scans a namespace of its own.
 */
class ExporterIT extends CliFixture {

    static final String KEYS = "oncegate_exporter_keys";
    static final String LAST_SCAN = "oncegate_exporter_last_scan_success_timestamp_seconds";
    static final String LAST_WALK = "oncegate_exporter_walk_last_success_timestamp_seconds";

    String namespace;
    final RecordingProvider provider = new RecordingProvider();
    final List<AutoCloseable> closeAfter = new ArrayList<>();

    @BeforeEach
    void ownNamespace() {
        namespace = "/exporter-" + UUID.randomUUID();
        zk.initNamespace(namespace);
    }

    @AfterEach
    void closeWorkers() throws Exception {
        for (AutoCloseable c : closeAfter) {
            c.close();
        }
    }

    Worker worker(EmbeddedZooKeeper server, String task) {
        Worker w = Worker.start(server.connectString(), namespace, task, Timing.SESSION);
        closeAfter.add(w);
        return w;
    }

    static EffectKey freshKey() {
        return EffectKey.of(dev.oncegate.Destination.stable("slack", "C-" + UUID.randomUUID()),
                ("report " + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8));
    }

    EffectKey crossed(Worker w, dev.oncegate.BoundaryAction action) throws InterruptedException {
        EffectKey k = freshKey();
        try (Attempt a = w.gate().enter(k)) {
            a.cross(action);
        }
        return k;
    }

    /** Starts the exporter on a free port and returns its metrics URL, from its start line. */
    String startExporter(EmbeddedZooKeeper server, Cli.Running[] started) throws IOException {
        Cli.Running running = cli.start("exporter", "--connect", server.connectString(), "--namespace", namespace,
                "--listen", "127.0.0.1:0", "--interval", "200ms", "--connect-timeout", "1s");
        started[0] = running;
        await().atMost(Timing.APPEAR).until(() -> !running.process().isAlive() || running.stdout().contains("\n"));
        assertThat(running.process().isAlive()).as("exporter exited: " + running.stderr()).isTrue();
        JsonNode line = Cli.JSON.readTree(running.stdout().strip());
        assertThat(line.get("exporter").asText()).isEqualTo("started");
        assertThat(line.get("namespace").asText()).isEqualTo(namespace);
        return line.get("metrics").asText();
    }

    static PrometheusText scrape(String url) throws IOException, InterruptedException {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("text/plain; version=0.0.4; charset=utf-8");
        return PrometheusText.parse(response.body());
    }

    /**
     * Scrapes once a scan has completed after {@code after} (epoch seconds), and after the first walk of
     * every key: the walk gives the states the index does not hold, and enters the unreadable keys it
     * meets for the scans that follow it.
     */
    static PrometheusText scrapeAfterScan(String url, double after) {
        return await().atMost(Timing.APPEAR).ignoreExceptions().until(() -> scrape(url), s -> s.value(LAST_SCAN) > after
                && s.value(LAST_WALK) > 0 && s.value(LAST_SCAN) >= s.value(LAST_WALK));
    }

    @Test
    void servesTheBacklog_stateByState_asTheScanFoundIt() throws Exception {
        // Given a key in each state, a pending authorization, and a key with a corrupt scope record
        Worker a = worker(zk, "task-a");
        Operator ops = Operator.builder(a.client()).namespace(namespace).build();
        EffectKey verified = crossed(a, provider.verified());
        ops.authorize(verified.key(), 0, "alice", "the customer asked for it again");
        crossed(a, provider.unconfirmed());
        crossed(a, provider.rejects("the channel was archived")); // not_sent opens scope 1: open
        Attempt leased = worker(zk, "task-b").gate().enter(freshKey());
        closeAfter.add(0, leased);
        assertThat(leased.decision().proceeds()).isTrue();
        EffectKey armed = freshKey();
        Worker crashed = worker(zk, "task-crash");
        try (CrossingInFlight inFlight = CrossingInFlight.start(crashed.gate(), armed, provider.verified())) {
            assertThat(inFlight.awaitInAction(Timing.APPEAR)).isTrue();
            crashed.crash(); // armed, and no outcome will ever come
        }
        EffectKey broken = crossed(a, provider.verified());
        curator.setData().forPath(broken.path(namespace) + "/0", "{oops".getBytes(StandardCharsets.UTF_8));
        int brokenRecords = ops.inspect(broken.key()).unreadable().size();
        Instant armedAt = ops.inspect(armed.key()).scopes().get(0).armed().at();
        double before = System.currentTimeMillis() / 1000.0;

        // When the exporter has scanned the namespace
        Cli.Running[] exporter = new Cli.Running[1];
        PrometheusText s = scrapeAfterScan(startExporter(zk, exporter), before);
        double now = System.currentTimeMillis() / 1000.0;

        // Then it serves every state, the pending authorization, the corrupt record and the armed age
        for (ScopeState state : ScopeState.values()) {
            double expected = switch (state) {
                case OPEN, LEASED, ARMED, SENT_VERIFIED, SEND_STATUS_UNKNOWN -> 1;
                case NOT_SENT -> 0; // a proven not_sent opens the next scope at once
            };
            assertThat(s.value(KEYS, "state", state.wireName())).as(state.wireName()).isEqualTo(expected);
        }
        assertThat(s.value("oncegate_exporter_authorizations_unused")).isEqualTo(1);
        assertThat(s.value("oncegate_exporter_unreadable_records")).isEqualTo(brokenRecords).isPositive();
        assertThat(s.value("oncegate_exporter_armed_oldest_age_seconds"))
                .isCloseTo(now - armedAt.toEpochMilli() / 1000.0, within(5 * Timing.SCALE));
        assertThat(s.value(LAST_SCAN)).isBetween(before, now);
        assertThat(s.value("oncegate_exporter_scan_duration_seconds")).isPositive().isLessThan(now - before);
        assertThat(s.value("oncegate_exporter_backlog_indexed")).as("the scan read the backlog index").isEqualTo(1);
        for (ScopeState state : ScopeState.values()) {
            assertThat(s.value("oncegate_exporter_walk_keys", "state", state.wireName())).as("walk " + state.wireName())
                    .isEqualTo(s.value(KEYS, "state", state.wireName()));
        }
        assertThat(s.value("oncegate_exporter_walk_keys_per_second")).isPositive();
        assertThat(s.value("oncegate_exporter_index_missing")).as("the protocol's multis kept the index").isZero();
        assertThat(s.samples()).as("one namespace, in the gate's tag").allSatisfy(x ->
                assertThat(x.labels()).containsEntry("zk_namespace", namespace));
        assertThat(s.names()).allMatch(n -> n.startsWith("oncegate_exporter_"));
    }

    @Test
    void zooKeeperOutage_keepsTheLastValuesAndAStaleScanTime_thenPasses_andSigtermStopsIt() throws Exception {
        try (EmbeddedZooKeeper own = EmbeddedZooKeeper.start()) {
            // Given an exporter that has scanned one delivered key
            own.initNamespace(namespace);
            crossed(worker(own, "task-a"), provider.verified());
            Cli.Running[] exporter = new Cli.Running[1];
            String url = startExporter(own, exporter);
            PrometheusText first = scrapeAfterScan(url, 0);
            assertThat(first.value(KEYS, "state", "sent_verified")).isEqualTo(1);

            // When ZooKeeper goes away
            own.stop();
            double stoppedAt = System.currentTimeMillis() / 1000.0;
            await().atMost(Timing.APPEAR).until(() -> exporter[0].stderr().contains("scan of " + namespace + " failed"));

            // Then the exporter lives on, serving the last values with the time of the last complete scan
            PrometheusText during = scrape(url);
            assertThat(exporter[0].process().isAlive()).isTrue();
            assertThat(during.value(KEYS, "state", "sent_verified")).isEqualTo(1);
            double stale = during.value(LAST_SCAN);
            assertThat(stale).as("a scan from before the outage: failed scans leave it").isPositive().isLessThanOrEqualTo(stoppedAt);
            assertThat(exporter[0].stderr()).contains("still serving the scan that ended at");

            // When ZooKeeper is back, scans complete again
            own.restart();
            PrometheusText after = scrapeAfterScan(url, stale);
            assertThat(after.value(KEYS, "state", "sent_verified")).isEqualTo(1);
            assertThat(exporter[0].stderr()).contains("complete again");

            // When SIGTERM arrives
            exporter[0].process().destroy();
            Cli.Result stopped = exporter[0].await(Timing.PROCESS);

            // Then it stops cleanly and frees its port
            assertThat(stopped.exit()).as(stopped.toString()).isZero();
            assertThat(stopped.stderr()).contains("oncegate exporter: stopped");
            assertThatThrownBy(() -> scrape(url)).isInstanceOf(ConnectException.class);
        }
    }

    @Test
    void anAddressItCannotListenOn_isRefused_withExit2() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            Cli.Result inUse = cli.run("exporter", "--connect", zk.connectString(), "--listen",
                    "127.0.0.1:" + taken.getLocalPort());
            Cli.Result malformed = cli.run("exporter", "--connect", zk.connectString(), "--listen", "9464");

            assertThat(inUse.exit()).as(inUse.toString()).isEqualTo(2);
            assertThat(inUse.stderr()).contains("--listen: cannot listen on 127.0.0.1:" + taken.getLocalPort());
            assertThat(malformed.exit()).as(malformed.toString()).isEqualTo(2);
            assertThat(malformed.stderr()).contains("--listen", "HOST:PORT");
        }
    }
}
