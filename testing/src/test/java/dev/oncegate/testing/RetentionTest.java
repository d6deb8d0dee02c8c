package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.oncegate.Attempt;
import dev.oncegate.BoundaryAction;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.Operator;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Retention is dated by ZooKeeper, never by a writer's clock (SPEC §4.10): a key's age is the
 * server's time of the record that decided it, "now" is the server's, and neither a worker whose
 * clock runs weeks behind nor an operator host whose clock jumps forward can make a fresh key look
 * old. And retention never removes a key that may still be delivering (armed without outcome), nor
 * one whose latest scope cannot be established.
 */
class RetentionTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    static final Duration FORTY_DAYS = Duration.ofDays(40);
    static final Duration MONTH = Duration.ofDays(30);

    /** A gate whose clock is {@code offset} away from the true time. */
    static Gate gateWithClock(String task, Duration offset) {
        return zk.newGate(task, b -> b.clock(Clock.offset(Clock.systemUTC(), offset)));
    }

    static void deliver(Gate gate, EffectKey key, BoundaryAction action) throws InterruptedException {
        try (Attempt a = gate.enter(key)) {
            assertThat(a.decision().proceeds()).as("%s", a.decision()).isTrue();
            a.cross(action);
        }
    }

    static Operator admin() {
        return zk.newGate("admin").operator();
    }

    @Test
    void workerClockFortyDaysBehind_theNightlyGcKeepsItsFreshKey_andASiblingStops() throws Exception {
        // Given a worker whose clock runs 40 days behind delivers (its outcome says it was written 40 days ago)
        deliver(gateWithClock("task-slow-clock", FORTY_DAYS.negated()), zk.key(), zk.provider().verified());

        // When the nightly gc runs a minute later with a 30-day retention
        List<Operator.GcEntry> entries = new ArrayList<>();
        Operator.GcReport report = admin().gc(MONTH, false, entries::add);

        // Then nothing is removed: by the server's clock the key is seconds old
        assertThat(report.removed()).isZero();
        assertThat(entries).isEmpty();
        assertThat(zk.newClient().checkExists().forPath(zk.keyPath())).isNotNull();
        // and a sibling stops on the delivered key
        try (Attempt sibling = zk.newGate("task-sibling").enter(zk.key())) {
            assertThat(sibling.decision()).isInstanceOf(Decision.StopSent.class);
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);
    }

    @Test
    void operatorHostClockJumpsForward_gcRemovesNothingFresh() throws Exception {
        // Given a key delivered just now
        deliver(zk.newGate("task-a"), zk.key(), zk.provider().verified());
        // When the gc runs on a host whose clock jumped 40 days ahead
        Operator jumped = Operator.builder(zk.newClient()).namespace(zk.namespace())
                .clock(Clock.offset(Clock.systemUTC(), FORTY_DAYS)).build();

        Operator.GcReport report = jumped.gc(MONTH, false, e -> { });

        // Then it removes nothing, and the key still stops a new contender
        assertThat(report.removed()).isZero();
        try (Attempt b = zk.newGate("task-b").enter(zk.key())) {
            assertThat(b.decision()).isInstanceOf(Decision.StopSent.class);
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);
    }

    @Test
    void recordWhoseOwnTimeDisagreesWithTheServer_isKeptAndReported_notRemoved() throws Exception {
        // Given a key delivered by a worker whose clock ran 40 days behind
        deliver(gateWithClock("task-slow-clock", FORTY_DAYS.negated()), zk.key(), zk.provider().verified());
        Operator admin = admin();
        Duration retention = Timing.scaled(300);

        // When the gc runs once the key is past retention by the server's clock
        List<Operator.GcEntry> entries = new ArrayList<>();
        Scenarios.eventually("the key is past retention and reported", () -> {
            entries.clear();
            OperatorTest.gc(admin, retention, false, entries::add);
            return !entries.isEmpty();
        });

        // Then it is kept, and the report says why
        assertThat(entries).singleElement().satisfies(e -> {
            assertThat(e.key()).isEqualTo(zk.key().key());
            assertThat(e.removed()).isFalse();
            assertThat(e.skipped()).contains("disagrees with the server's").contains("clock is off");
        });
        assertThat(zk.newClient().checkExists().forPath(zk.keyPath())).isNotNull();
    }

    @Test
    void pastRetention_removesConsumedKeys_butNeverOneArmedWithoutOutcome_norOneWhoseLatestScopeIsUnreadable()
            throws Exception {
        // Given a verified key, an unknown key, a key armed by a worker that died in its action, and a
        // delivered key whose scope record was damaged
        EffectKey verified = zk.newKey();
        deliver(zk.newGate("task-v"), verified, zk.provider().verified());
        EffectKey unknown = zk.newKey();
        deliver(zk.newGate("task-u"), unknown, zk.provider().unconfirmed());
        EffectKey armed = zk.newKey();
        Worker crashed = zk.newWorker("task-crash");
        try (CrossingInFlight inFlight = CrossingInFlight.start(crashed.gate(), armed, zk.provider().verified())) {
            assertThat(inFlight.awaitInAction(Timing.EVENTUALLY)).isTrue();
            crashed.crash(); // armed, and no outcome will ever come
        }
        EffectKey damaged = zk.newKey();
        deliver(zk.newGate("task-d"), damaged, zk.provider().verified());
        CuratorFramework admin = zk.newClient();
        admin.setData().forPath(damaged.path(zk.namespace()) + "/0", "{oops".getBytes(StandardCharsets.UTF_8));
        Operator ops = admin();
        Duration retention = Timing.scaled(300);

        // When the gc runs past retention (by the server's clock) for all of them
        List<Operator.GcEntry> entries = new ArrayList<>();
        Scenarios.eventually("every key is past retention", () -> {
            entries.clear();
            return OperatorTest.gc(ops, retention, true, entries::add).removed() == 2
                    && entries.stream().anyMatch(e -> e.key().equals(damaged.key()));
        });
        Operator.GcReport report = ops.gc(retention, false, e -> { });

        // Then it removes exactly the verified and the unknown key
        assertThat(report.removed()).isEqualTo(2);
        assertThat(entries).filteredOn(e -> e.skipped() == null).extracting(Operator.GcEntry::key)
                .containsExactlyInAnyOrder(verified.key(), unknown.key());
        assertThat(admin.checkExists().forPath(verified.path(zk.namespace()))).isNull();
        assertThat(admin.checkExists().forPath(unknown.path(zk.namespace()))).isNull();
        // and keeps the armed one (it reads unknown to everyone: a new contender stops), and the damaged one
        assertThat(admin.checkExists().forPath(armed.path(zk.namespace()))).isNotNull();
        assertThat(admin.checkExists().forPath(damaged.path(zk.namespace()))).isNotNull();
        assertThat(entries).filteredOn(e -> e.key().equals(damaged.key())).singleElement()
                .satisfies(e -> assertThat(e.skipped()).startsWith("unreadable"));
        try (Attempt late = zk.newGate("task-late").enter(armed)) {
            assertThat(late.decision()).isInstanceOf(Decision.StopUnknown.class);
        }
        assertThat(zk.provider().ledger()).extracting(RecordingProvider.Delivery::taskId)
                .containsExactlyInAnyOrder("task-v", "task-u", "task-d"); // the crashed one died before delivering
    }
}
