package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.oncegate.ZxidMarks;
import dev.oncegate.testing.Timing;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

/**
 * The sidecar serves the library's lifecycle to agents: one proceeds and crosses, its siblings stop
 * on what it recorded; checkpoints renew the token; not_sent with evidence frees the key; a lease
 * handle dies with its idle agent, a crossing with its silent agent reads unknown.
 */
class SidecarLifecycleTest extends SidecarFixture {

    @Override
    Sidecar.Settings settings() {
        // Idle and outcome timeouts short enough to wait for, long enough for a loaded machine between two calls.
        return new Sidecar.Settings("sidecar-test", null, Timing.scaled(Duration.ofSeconds(2)),
                Timing.scaled(Duration.ofSeconds(4)), 4, 16);
    }

    @Test
    void twoAgents_oneCrossesAndVerifies_theOtherStopsSent() throws Exception {
        // Given: agent A proceeds and holds the lease
        Answer a = enter("agent-a");
        assertThat(a.status()).isEqualTo(200);
        assertThat(a.body().get("decision").asText()).isEqualTo("proceed");
        assertThat(a.body().get("key").asText()).isEqualTo(key.key());

        // When: B enters meanwhile, A checkpoints, crosses and reports sent_verified
        Answer b = enter("agent-b");
        Answer checkpoint = post("/v1/checkpoint", with(handle(a), "name", "attachment-picker"));
        Map<String, Object> current = Map.of("handle", a.body().get("handle").asText(),
                "token", checkpoint.body().get("token").asInt());
        Answer cross = post("/v1/cross", current);
        Answer outcome = post("/v1/outcome", with(current, "outcome", "sent_verified", "evidence", "msg-42"));

        // Then: B stopped busy without a handle; A's crossing is recorded with the library's idempotency key
        assertThat(b.body().get("decision").asText()).isEqualTo("stop_busy");
        assertThat(b.body().get("handle").isNull()).isTrue();
        assertThat(checkpoint.body().get("decision").asText()).isEqualTo("proceed");
        assertThat(checkpoint.body().get("token").asInt()).isGreaterThan(a.body().get("token").asInt());
        assertThat(cross.body().get("armed").asBoolean()).isTrue();
        assertThat(cross.body().get("idempotency_key").asText()).hasSize(32);
        assertThat(outcome.body().get("recorded").asBoolean()).isTrue();
        assertThat(outcome.body().get("reads_as").asText()).isEqualTo("sent_verified");
        assertThat(znode("/0/armed/outcome")).contains("sent_verified").contains("msg-42").contains("agent-a");
        Answer c = enter("agent-c");
        assertThat(c.body().get("decision").asText()).isEqualTo("stop_sent");
        assertThat(c.body().get("evidence").get("task").asText()).isEqualTo("agent-a");
    }

    /**
     * Agents that wait on an armed key, one for each of the sidecar's request threads (4 here), must
     * not keep the armed agent's outcome from being heard: they wait for that very outcome.
     */
    @Test
    void agentsWaitingOnTheArmedKey_asManyAsTheThreads_theArmedAgentsOutcomeIsStillHeard() throws Exception {
        // Given: A entered and crossed (armed), and four agents wait on the key for up to a minute
        Answer a = post("/v1/enter-and-cross", Map.of("destination", dest, "sha256", sha256, "task", "agent-a"));
        assertThat(a.body().get("armed").asBoolean()).as(a.toString()).isTrue();
        List<CompletableFuture<Answer>> waiting = new ArrayList<>();
        for (int i = 0; i < settings().threads(); i++) {
            Map<String, Object> body = Map.of("destination", dest, "sha256", sha256, "task", "waiter-" + i, "wait_ms", 60_000);
            waiting.add(CompletableFuture.supplyAsync(() -> post("/v1/enter", body)));
        }
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(10)).until(() -> waiting.stream().noneMatch(
                CompletableFuture::isDone));

        // When: A reports its delivery
        Answer outcome = post("/v1/outcome", with(handle(a), "outcome", "sent_verified", "evidence", "msg-7"));

        // Then: it is answered and recorded, and every waiter then stops sent
        assertThat(outcome.status()).as(outcome.toString()).isEqualTo(200);
        assertThat(outcome.body().get("recorded").asBoolean()).isTrue();
        assertThat(znode("/0/armed/outcome")).contains("sent_verified", "msg-7");
        for (CompletableFuture<Answer> w : waiting) {
            assertThat(w.get(30, TimeUnit.SECONDS).body().get("decision").asText()).isEqualTo("stop_sent");
        }
    }

    @Test
    void notSentWithEvidence_nextAgentProceedsInScopeOne() throws Exception {
        // Given: agent A crossed
        Answer a = enter("agent-a");
        post("/v1/cross", handle(a));

        // When: it proves nothing was sent
        Answer outcome = post("/v1/outcome", with(handle(a), "outcome", "not_sent", "evidence", "SMTP 550 before DATA"));

        // Then: the next agent proceeds in scope 1, with a new idempotency key
        assertThat(outcome.body().get("reads_as").asText()).isEqualTo("not_sent");
        Answer b = enter("agent-b");
        assertThat(b.body().get("decision").asText()).isEqualTo("proceed");
        assertThat(b.body().get("scope").asInt()).isEqualTo(1);
    }

    @Test
    void agentVanishesBeforeCrossing_itsLeaseIsReleasedAfterTheIdleTimeout() throws Exception {
        // Given: agent A proceeds and never calls again
        Answer a = enter("agent-a");
        assertThat(a.body().get("decision").asText()).isEqualTo("proceed");

        // When: the idle timeout passes
        // Then: the sidecar released the lease (B proceeds in scope 0) and forgets A's handle
        await().atMost(Timing.EVENTUALLY).until(() -> enterAndRelease("agent-b").equals("proceed"));
        await().atMost(Timing.EVENTUALLY).until(() -> post("/v1/cross", handle(a)).status() == 404);
        assertThat(znode("/0/armed")).isNull();
    }

    @Test
    void agentVanishesAfterCrossing_theKeyReadsUnknownAndTheTimeoutRecordsIt() throws Exception {
        // Given: agent A crossed and never reports
        Answer a = enter("agent-a");
        assertThat(post("/v1/cross", handle(a)).body().get("armed").asBoolean()).isTrue();

        // When: another agent enters at once, and later, after the outcome timeout
        Answer b = enter("agent-b");

        // Then: armed reads unknown at once; the timeout records send_status_unknown, and a late report is refused
        assertThat(b.body().get("decision").asText()).isEqualTo("stop_unknown");
        await().atMost(Timing.EVENTUALLY).until(() -> outcome() != null);
        assertThat(outcome()).contains("send_status_unknown").contains("--outcome-timeout");
        Answer late = post("/v1/outcome", with(handle(a), "outcome", "not_sent", "evidence", "late"));
        assertThat(late.status()).isEqualTo(409);
        assertThat(late.body().get("field").asText()).isEqualTo("outcome");
    }

    @Test
    void sessionLost_openHandlesFailClosed() throws Exception {
        // Given: agent A proceeds
        Answer a = enter("agent-a");

        // When: the sidecar's ZooKeeper session expires
        long session = connection.client().getZookeeperClient().getZooKeeper().getSessionId();
        connection.client().getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
        await().atMost(Timing.EVENTUALLY).until(() -> connection.client().getZookeeperClient().isConnected()
                && connection.client().getZookeeperClient().getZooKeeper().getSessionId() != session);

        // Then: its checkpoint stops unavailable and crossing is refused: nothing is armed
        Answer checkpoint = post("/v1/checkpoint", with(handle(a), "name", "picker"));
        assertThat(checkpoint.body().get("decision").asText()).isEqualTo("stop_unavailable");
        Answer cross = post("/v1/cross", handle(a));
        assertThat(cross.status()).isEqualTo(409);
        assertThat(znode("/0/armed")).isNull();
    }

    /**
     * A task's gate is made at its first enter, however long after the sidecar started: it must wait
     * the whole --connect-timeout for ZooKeeper, not what was left of it at start (nothing, by then),
     * or every momentary disconnect fails that task's agents closed at once.
     */
    @Test
    void gateOfATaskFirstSeenLate_waitsTheWholeConnectTimeoutForZooKeeper() throws Exception {
        // Given: a sidecar whose connect timeout (1 s) ran out long before a new task's first enter
        sidecar.close();
        connection.close();
        Duration connectTimeout = Duration.ofSeconds(1);
        connection = ZooKeeperConnection.open(ZooKeeperConnection.Settings.plain(zk.connectString(), connectTimeout),
                NAMESPACE, ZxidMarks.inMemory(), Timing.SESSION);
        sidecar = new Sidecar(connection, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), settings(), bearer);
        sidecar.start(new InetSocketAddress("127.0.0.1", 0), null);
        await().pollDelay(connectTimeout.plusMillis(500)).atMost(Timing.EVENTUALLY).until(() -> true);

        // When: ZooKeeper is down as that task enters (and the sidecar's client has seen it go: an enter
        // sent before would have its reads retried by Curator for several connection timeouts instead)
        zk.stop();
        await().atMost(Timing.EVENTUALLY).until(() -> !connection.client().getZookeeperClient().isConnected());
        Answer late;
        long took;
        try {
            long t0 = System.nanoTime();
            late = enter("task-first-seen-late");
            took = (System.nanoTime() - t0) / 1_000_000;
        } finally {
            zk.restart();
        }

        // Then: it failed closed after waiting the connect timeout, not at once
        assertThat(late.body().get("decision").asText()).as(late.toString()).isEqualTo("stop_unavailable");
        assertThat(late.body().get("evidence").get("detail").asText()).contains("within " + connectTimeout.toMillis() + " ms");
        assertThat(took).isGreaterThanOrEqualTo(connectTimeout.toMillis());
    }

    @Test
    void metricsAndHealth_reflectTheGateAndTheSession() {
        // Given: one delivery through the sidecar
        Answer a = enter("agent-a");
        post("/v1/cross", handle(a));
        post("/v1/outcome", with(handle(a), "outcome", "sent_verified"));

        // When: ZooKeeper goes away, and comes back
        Answer metrics = get("/metrics");
        Answer healthy = get("/healthz");
        zk.stop();
        try {
            await().atMost(Timing.EVENTUALLY).until(() -> get("/healthz").status() == 503);
        } finally {
            zk.restart();
        }

        // Then: /metrics serves the library's meters, /healthz follows the session
        assertThat(metrics.text().lines()
                .filter(l -> l.startsWith("oncegate_outcomes_total{") && l.contains("outcome=\"sent_verified\"")
                        && l.contains("recorded=\"true\""))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum())
                .as("sent_verified outcomes recorded, from the scrape").isGreaterThanOrEqualTo(1.0);
        assertThat(healthy.status()).isEqualTo(200);
        assertThat(healthy.body().get("zookeeper").asText()).isEqualTo("connected");
        await().atMost(Timing.EVENTUALLY).until(() -> get("/healthz").status() == 200);
    }

    @Test
    void releaseBeforeCrossing_nextAgentProceedsAtOnce() {
        // Given: agent A proceeds
        Answer a = enter("agent-a");

        // When: it releases its lease
        Answer released = post("/v1/release", handle(a));

        // Then: B proceeds at once; a second release changes nothing
        assertThat(released.body().get("released").asBoolean()).isTrue();
        assertThat(enter("agent-b").body().get("decision").asText()).isEqualTo("proceed");
        assertThat(post("/v1/release", handle(a)).status()).isEqualTo(200);
    }

    private String enterAndRelease(String task) {
        Answer b = enter(task);
        if (b.body().get("handle").isTextual()) {
            post("/v1/release", handle(b));
        }
        return b.body().get("decision").asText();
    }
}
