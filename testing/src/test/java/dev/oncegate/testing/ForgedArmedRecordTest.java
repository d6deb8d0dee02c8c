package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.KeyHistory;
import dev.oncegate.ScopeState;
import dev.oncegate.StopReason;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An armed record forged (with a stolen worker credential) under a live executor's lease refuses
 * its arming: the threat model's worst case, a stop. The executor's lease is still its own then (the
 * arming multi failed on its create, after its version check passed), so it must be released like
 * any stop's before arming; else, once the forger removes its record again, the key is open but
 * leased to nobody executing, and every contender that does not wait stops busy for a lease TTL.
 *
 * <p>The simulator found the hole (seed 9146216, config {@code 4,1,true,true,true,false,221,false,true}):
 * an executor interrupted while its arming was in flight could not read what refused it, took the
 * refusal for a fence, and skipped the release that a fenced executor skips.
 */
class ForgedArmedRecordTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standaloneWithAmbiguousWrites();

    /** Long enough that "at once" and "after the TTL" cannot be mistaken for each other. */
    static final Duration TTL = Timing.scaled(Duration.ofSeconds(60));

    /** A well-formed armed record, as the worker role may create one. */
    static final byte[] FORGED_ARMED = ("{\"v\":4,\"c\":[],\"m\":\"" + "0".repeat(64) + "\",\"b\":{\"t\":\"rogue\","
            + "\"h\":\"rogue-host\",\"p\":1,\"s\":\"1\",\"a\":\"00000000000000ff\"},\"k\":1,\"z\":1,\"t\":\""
            + Instant.now() + "\"}").getBytes(StandardCharsets.UTF_8);

    @Test
    void armingRefusedByAForgedArmedRecord_releasesTheLease() throws Exception {
        CuratorFramework forger = zk.newClient();
        Crossing crossing;
        // Given an executor holding scope 0's lease, and an armed record forged under it
        try (Attempt a = zk.newGate("task-a", b -> b.leaseTtl(TTL)).enter(zk.key())) {
            assertThat(a.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isZero());
            forger.create().forPath(armedPath(), FORGED_ARMED);

            // When it crosses
            crossing = a.cross(zk.provider().verified());
        }

        // Then the arming is refused (the forgery, without its outcome child, is unreadable), nothing is invoked
        assertThat(crossing).isInstanceOfSatisfying(Crossing.Refused.class,
                r -> assertThat(r.stop().reason()).isEqualTo(StopReason.UNREADABLE_RECORD));
        assertThatOnceTheForgeryIsGoneScope0IsFreeAndANoWaitContenderDeliversInIt(forger);
    }

    @Test
    void armingRefusedByAForgedArmedRecord_whileTheExecutorIsInterrupted_stillReleasesTheLease() throws Exception {
        CuratorFramework forger = zk.newClient();
        Worker a = zk.newWorker("task-a", Timing.LONG_SESSION, b -> b.leaseTtl(TTL)); // the hold must not outlive the connection
        AtomicReference<Thread> executor = new AtomicReference<>();
        // Given an executor whose arming write the server holds
        AmbiguousWriteCnxnFactory.Hold hold = AmbiguousWriteCnxnFactory.holdNextArmingRequest();
        Future<Crossing> crossing = zk.newPool(1).submit(() -> {
            executor.set(Thread.currentThread());
            try (Attempt attempt = a.gate().enter(zk.key())) {
                assertThat(attempt.decision().proceeds()).isTrue();
                return attempt.cross(zk.provider().verified());
            } finally {
                Thread.interrupted();
            }
        });
        assertThat(hold.awaitHeld(Timing.EVENTUALLY)).as("the arming request reached the server").isTrue();

        // When the executor is interrupted while it waits for the reply, an armed record is forged meanwhile,
        // and then the server applies the arming write (refused: the armed record exists)
        executor.get().interrupt();
        forger.create().forPath(armedPath(), FORGED_ARMED);
        hold.release();

        // Then the arming is refused, nothing is invoked
        Crossing crossed = crossing.get(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(a.connectionInterrupted()).as("premise: the connection outlived the hold").isFalse();
        assertThat(crossed).isInstanceOf(Crossing.Refused.class);
        assertThatOnceTheForgeryIsGoneScope0IsFreeAndANoWaitContenderDeliversInIt(forger);
    }

    private static String armedPath() {
        return zk.keyPath() + "/0/armed";
    }

    /** The forger removes its record: scope 0 is open without a lease, and a contender that does not wait delivers in it. */
    private static void assertThatOnceTheForgeryIsGoneScope0IsFreeAndANoWaitContenderDeliversInIt(CuratorFramework forger)
            throws Exception {
        assertThat(zk.provider().deliveries()).isZero();
        forger.delete().forPath(armedPath());
        KeyHistory history = zk.newGate("operator").inspect(zk.key().key());
        assertThat(history.scopes()).singleElement().satisfies(s -> {
            assertThat(s.state()).isEqualTo(ScopeState.OPEN);
            assertThat(s.lease()).as("the refused executor's lease").isNull();
        });
        try (Attempt b = zk.newGate("task-b", g -> g.leaseTtl(TTL)).enter(zk.key(), Duration.ZERO)) {
            assertThat(b.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isZero());
            assertThat(b.cross(zk.provider().verified())).isInstanceOf(Crossing.Crossed.class);
        }
        assertThat(zk.provider().ledger()).singleElement().satisfies(d -> assertThat(d.taskId()).isEqualTo("task-b"));
    }
}
