package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oncegate.Attempt;
import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.Operator;
import dev.oncegate.ScopeState;
import dev.oncegate.testing.CrossingInFlight;
import dev.oncegate.testing.RecordingProvider;
import dev.oncegate.testing.Timing;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The backlog questions cost what the backlog costs, not what the keyspace costs (issue 17 §5):
 * with {@value #CONSUMED} consumed keys and a backlog of three (a key armed without an outcome, a
 * key {@code send_status_unknown}, an unused redelivery authorization), {@code oncegate list --state
 * send_status_unknown} and one exporter scan each send the server far fewer requests than there are
 * keys. Counted by the server itself ({@code srvr}'s packets received), never timed. A walk of every
 * key costs several requests a key, so both failed before the backlog index. A namespace of an older
 * release, without the index, is walked as before, and both say so.
 */
class BacklogQueriesFollowTheBacklogTest extends CliFixture {

    static final int CONSUMED = 600;
    /** Far below one request a key: what reading 64 index buckets and three keys' records costs, with room. */
    static final long BOUND = CONSUMED / 3;

    static EffectKey armedKey;
    static EffectKey unknownKey;
    static EffectKey authorizedKey;
    static CrossingInFlight inFlight;
    static Gate gate;

    @BeforeAll
    static void consumedKeysAndASmallBacklog() throws Exception {
        gate = Gate.builder(curator).namespace(NAMESPACE).taskId("filler").build();
        RecordingProvider provider = new RecordingProvider();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < CONSUMED; i++) {
                EffectKey k = key("consumed-" + i);
                done.add(pool.submit(() -> {
                    try (Attempt a = gate.enter(k)) {
                        a.cross(provider.verified());
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        unknownKey = key("unknown");
        try (Attempt a = gate.enter(unknownKey)) {
            a.cross(provider.unconfirmed());
        }
        authorizedKey = key("authorized");
        try (Attempt a = gate.enter(authorizedKey)) {
            a.cross(provider.verified());
        }
        operator().authorize(authorizedKey.key(), 0, "alice", "the customer lost it");
        armedKey = key("armed");
        inFlight = CrossingInFlight.start(gate, armedKey, provider.verified());
        assertThat(inFlight.awaitInAction(Timing.EVENTUALLY)).isTrue();
    }

    @AfterAll
    static void releaseTheCrossing() {
        if (inFlight != null) {
            inFlight.close();
        }
        if (gate != null) {
            gate.close();
        }
    }

    @Test
    void listUnknown_manyConsumedKeys_readsOnlyTheBacklog() throws Exception {
        // Given CONSUMED consumed keys, one armed and one unknown
        long before = zk.requestsReceived();

        // When the operator asks which keys are unknown (armed ones included) right now
        Cli.Result r = ops.run("list", "--connect", zk.connectString(), "--namespace", NAMESPACE,
                "--state", "send_status_unknown");

        // Then exactly those two are printed, for far fewer requests than there are keys
        long requests = zk.requestsReceived() - before;
        System.out.println("list --state send_status_unknown among " + (CONSUMED + 3) + " keys: " + requests + " requests");
        assertThat(r.exit()).as(r.toString()).isZero();
        List<String> keys = new ArrayList<>();
        for (String line : r.stdout().split("\n")) {
            if (!line.isBlank()) {
                JsonNode json = Cli.JSON.readTree(line);
                keys.add(json.get("key").asText());
            }
        }
        assertThat(keys).containsExactlyInAnyOrder(armedKey.key(), unknownKey.key());
        assertThat(requests).as("requests for list --state send_status_unknown among %d keys", CONSUMED + 3)
                .isLessThan(BOUND);
    }

    @Test
    void exporterScan_manyConsumedKeys_readsOnlyTheBacklog() throws Exception {
        // Given CONSUMED consumed keys, one armed, one unknown and one unused authorization
        Operator operator = operator();
        long before = zk.requestsReceived();

        // When the exporter scans the backlog once
        Backlog backlog = Backlog.scan(operator, Clock.systemUTC());

        // Then it counts exactly that backlog, for far fewer requests than there are keys
        long requests = zk.requestsReceived() - before;
        System.out.println("one exporter scan among " + (CONSUMED + 3) + " keys: " + requests + " requests");
        assertThat(backlog.keys().get(ScopeState.ARMED)).isEqualTo(1);
        assertThat(backlog.keys().get(ScopeState.SEND_STATUS_UNKNOWN)).isEqualTo(1);
        assertThat(backlog.unusedAuthorizations()).isEqualTo(1);
        assertThat(backlog.unreadableRecords()).isZero();
        assertThat(backlog.oldestArmed()).isNotNull();
        assertThat(requests).as("requests for one exporter scan among %d keys", CONSUMED + 3).isLessThan(BOUND);
    }

    @Test
    void namespaceOfAnOlderRelease_listAndTheScanWalkEveryKey_andSaySo() throws Exception {
        // Given a namespace initialised before the backlog index (its index removed, as an older init left it)
        String old = "/older-" + java.util.UUID.randomUUID();
        Gate.initialize(curator, old);
        curator.delete().deletingChildrenIfNeeded().forPath(old + "/backlog");
        EffectKey unknown = key("older-unknown");
        try (Gate g = Gate.builder(curator).namespace(old).taskId("older").build(); Attempt a = g.enter(unknown)) {
            a.cross(new RecordingProvider().unconfirmed());
        }

        // When the operator asks which keys are unknown, and the exporter scans
        Cli.Result r = ops.run("list", "--connect", zk.connectString(), "--namespace", old, "--state", "send_status_unknown");
        Backlog backlog = Backlog.scan(Operator.builder(curator).namespace(old).build(), Clock.systemUTC());

        // Then both walk every key, as before the index, and say so
        assertThat(r.exit()).as(r.toString()).isZero();
        assertThat(r.stderr()).contains("no backlog index", "oncegate init");
        JsonNode line = Cli.JSON.readTree(r.stdout().strip());
        assertThat(line.get("key").asText()).isEqualTo(unknown.key());
        assertThat(line.get("source").asText()).isEqualTo("walk");
        assertThat(backlog.source()).isEqualTo(Backlog.Source.WALK);
        assertThat(backlog.keys().get(ScopeState.SEND_STATUS_UNKNOWN)).isEqualTo(1);
    }

    static Operator operator() {
        return Operator.builder(curator).namespace(NAMESPACE).build();
    }

    static EffectKey key(String name) {
        return EffectKey.of(Destination.stable("slack", "C-backlog-" + name),
                ("backlog test " + name).getBytes(StandardCharsets.UTF_8));
    }
}
