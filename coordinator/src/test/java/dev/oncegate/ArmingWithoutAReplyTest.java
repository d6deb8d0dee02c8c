package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The arming multi without its reply (SPEC §4.4: a connection loss during the arming multi counts
 * as armed), on the simulated server, which can lose a reply after applying the write or fail the
 * call before it reaches the server (held against a real server by SimZooKeeperConformanceTest):
 * either way the executor learns "result unknown", never "armed" and never a refusal it could
 * retry past.
 */
class ArmingWithoutAReplyTest {

    final AtomicLong millis = new AtomicLong(1_000);
    final SimZooKeeper server = new SimZooKeeper(millis::get);
    SimClient client;
    ScopeProtocol protocol;
    String genesisId;
    String scopePath;
    String node;
    ExecutorWrites.LeaseWrite lease;
    Records.Scope leased;

    @BeforeEach
    void leasedScopeZero() throws Exception {
        client = new SimClient(server, "a").start();
        protocol = new ScopeProtocol(client, "/ns", Clock.systemUTC(), z -> { }, () -> Acls.OPEN);
        genesisId = protocol.operator().createGenesis(null).genesis().id();
        EffectKey key = EffectKey.of(Destination.stable("slack", "C1"), "report".getBytes(StandardCharsets.UTF_8));
        protocol.executor().ensureKey(key, genesisId);
        scopePath = Layout.scope(Layout.keyPath("/ns", key.key()), 0);
        node = client.create(Layout.latch(scopePath) + "/_c_a-latch-", new byte[0], CreateMode.EPHEMERAL_SEQUENTIAL,
                null, null, false);
        leased = new Records.Scope("initial", Instant.now(), new KeyHistory.Lease(new Actor("t", "h", 1, "1", "a"), node,
                Instant.now().plusSeconds(30), null), false, false);
        lease = protocol.executor().writeLease(scopePath, 0, leased, node);
    }

    ExecutorWrites.Arming arm() throws Exception {
        return protocol.executor().arm(scopePath, lease.token(), node, genesisId, leased.armedNow(),
                new KeyHistory.Armed(new Actor("t", "h", 1, "1", "a"), lease.token(), List.of(), Instant.now()),
                Records.newSecret(), Duration.ofSeconds(10));
    }

    @Test
    void replyLostAfterTheServerArmed_isResultUnknown_andTheScopeIsArmed() throws Exception {
        client.faults((c, op, path) -> op.equals("multiOnce") ? SimFaults.Fault.LOSE_REPLY : SimFaults.Fault.NONE);

        ExecutorWrites.Arming arming = arm();

        assertThat(arming.armed()).isFalse();
        assertThat(arming.refusal()).isEqualTo(ExecutorWrites.ArmRefusal.RESULT_UNKNOWN);
        assertThat(arming.code()).isEqualTo(KeeperException.Code.CONNECTIONLOSS);
        assertThat(server.stat(Layout.armed(scopePath))).as("applied all the same").isNotNull();
    }

    @Test
    void callFailedBeforeReachingTheServer_isResultUnknown_too_andNothingIsArmed() throws Exception {
        client.faults((c, op, path) -> op.equals("multiOnce") ? SimFaults.Fault.FAIL_BEFORE : SimFaults.Fault.NONE);

        ExecutorWrites.Arming arming = arm();

        assertThat(arming.armed()).isFalse();
        assertThat(arming.refusal()).isEqualTo(ExecutorWrites.ArmRefusal.RESULT_UNKNOWN);
        assertThat(server.stat(Layout.armed(scopePath))).isNull();
    }
}
