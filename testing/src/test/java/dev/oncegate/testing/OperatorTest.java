package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.KeyHistory;
import dev.oncegate.OncegateException;
import dev.oncegate.Operator;
import dev.oncegate.Outcome;
import dev.oncegate.ScopeState;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The operator's API against a real server: the whole story of a key in order, reconciliation
 * (which never reopens a key, and fences an executor still at work), listing past unreadable
 * keys, retention that touches only consumed keys, and an unknown namespace as an error.
 */
class OperatorTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    RecordingProvider provider;

    @BeforeEach
    void fresh() {
        provider = new RecordingProvider();
    }

    Operator operator() {
        return zk.newGate("operator").operator();
    }

    /** Consumes a fresh key with the given action; returns it. */
    EffectKey consumed(dev.oncegate.BoundaryAction action) throws InterruptedException {
        EffectKey key = Scenarios.freshKey();
        try (Attempt a = zk.newGate("task-a").enter(key)) {
            a.cross(action);
        }
        return key;
    }

    @Test
    void inspect_tellsTheWholeStoryInOrder_takeoverAuthorizationNotSent() throws Exception {
        // Given scope 0: A leased with a short lease and hung, B took it over and delivered;
        EffectKey key = Scenarios.freshKey();
        Attempt hung = zk.newGate("task-a", b -> b.leaseTtl(Timing.SHORT_LEASE)).enter(key);
        assertThat(hung.decision().proceeds()).isTrue();
        try (Attempt b = zk.newGate("task-b", g -> g.leaseTtl(Timing.SHORT_LEASE)).enter(key, Timing.WAIT)) {
            assertThat(b.decision().proceeds()).isTrue();
            b.checkpoint("picker-open");
            b.cross(provider.verified());
        }
        hung.close();
        // an operator authorized one redelivery; scope 1 then proved not_sent, which opened scope 2
        Operator ops = operator();
        assertThat(ops.authorize(key.key(), 0, "alice", "customer lost it").created()).isTrue();
        try (Attempt c = zk.newGate("task-c").enter(key)) {
            c.cross(provider.rejects("the channel was archived"));
        }

        // When the operator inspects
        KeyHistory h = ops.inspect(key.key());

        // Then every scope is there, in order, with who did what
        assertThat(h.readable()).isTrue();
        assertThat(h.record().provider()).isEqualTo("slack");
        assertThat(h.scopes()).extracting(KeyHistory.Scope::state)
                .containsExactly(ScopeState.SENT_VERIFIED, ScopeState.NOT_SENT, ScopeState.OPEN);
        KeyHistory.Scope s0 = h.scopes().get(0);
        assertThat(s0.lease().holder().task()).isEqualTo("task-b");
        assertThat(s0.lease().takeover().cause()).isIn("lapsed", "unrenewed");
        assertThat(s0.lease().takeover().from().task()).isEqualTo("task-a");
        assertThat(s0.armed().checkpoints()).containsExactly("picker-open");
        assertThat(s0.outcome().by().session()).isNotBlank();
        assertThat(h.scopes().get(1).opened()).isEqualTo("after-0");
        assertThat(h.scopes().get(1).outcome().outcome()).isEqualTo(Outcome.NOT_SENT);
        assertThat(h.scopes().get(2).opened()).isEqualTo("not_sent:1");
        assertThat(h.authorizations()).singleElement().satisfies(a -> {
            assertThat(a.status()).isEqualTo(KeyHistory.AuthorizationStatus.USED);
            assertThat(a.usedBy()).isEqualTo(1);
            assertThat(a.by()).isEqualTo("alice");
            assertThat(a.actor().task()).isEqualTo("oncegate");
        });
        assertThat(h.nextAttempt()).contains("Scope 2 is open").contains("proceed");
        assertThat(h.authorizeCommand()).as("not consumed: nothing to authorize").isNull();
        assertThat(provider.deliveries()).isEqualTo(1);
    }

    @Test
    void unknownNamespace_isAnError_notAnEmptyAnswer() {
        Operator ops = Operator.builder(zk.newClient()).namespace("/never-initialised").build();
        EffectKey key = Scenarios.freshKey();

        assertThatThrownBy(() -> ops.inspect(key.key())).isInstanceOf(OncegateException.class).hasMessageContaining("oncegate init");
        assertThatThrownBy(() -> ops.list(Operator.ListQuery.all(), s -> { })).isInstanceOf(OncegateException.class);
        assertThatThrownBy(() -> ops.authorize(key.key(), 0, "a", "b")).isInstanceOf(OncegateException.class);
    }

    @Test
    void reconcile_unknownReadsSentVerified_theOriginalOutcomeStays_andNothingReopens() throws Exception {
        EffectKey key = consumed(provider.unconfirmed());
        Operator ops = operator();

        Operator.Reconciled done = ops.reconcile(key.key(), "alice", "message 1234 is in the channel");
        Operator.Reconciled again = ops.reconcile(key.key(), "bob", "me too");

        assertThat(done.created()).isTrue();
        assertThat(again.created()).isFalse();
        assertThat(again.reconciliation().by()).isEqualTo("alice");
        KeyHistory h = ops.inspect(key.key());
        assertThat(h.state()).isEqualTo(ScopeState.SENT_VERIFIED);
        assertThat(h.scopes().get(0).outcome().outcome()).as("the original record stays").isEqualTo(Outcome.SEND_STATUS_UNKNOWN);
        assertThat(h.scopes().get(0).reconciliation().evidence()).contains("1234");
        try (Attempt late = zk.newGate("task-late").enter(key)) {
            assertThat(late.decision()).isInstanceOfSatisfying(Decision.StopSent.class,
                    s -> assertThat(s.evidence().detail()).contains("reconciled"));
        }
        assertThat(provider.deliveries()).isEqualTo(1);
    }

    @Test
    void reconcile_armedWithoutOutcome_fencesTheExecutorStillAtWork_soItsNotSentCannotReopen() throws Exception {
        EffectKey key = Scenarios.freshKey();
        try (CrossingInFlight a = CrossingInFlight.start(zk.newGate("task-a"), key, provider.rejects("rejected late"))) {
            assertThat(a.awaitInAction(Timing.EVENTUALLY)).isTrue();
            operator().reconcile(key.key(), "alice", "the file is in the channel");

            Crossing late = a.releaseAndAwait(Timing.EVENTUALLY);

            assertThat(late).isInstanceOfSatisfying(Crossing.Crossed.class, c -> {
                assertThat(c.outcome()).isEqualTo(Outcome.NOT_SENT);
                assertThat(c.recorded()).as("fenced by the reconciliation").isFalse();
            });
        }
        KeyHistory h = operator().inspect(key.key());
        assertThat(h.scopes()).singleElement().satisfies(s -> assertThat(s.state()).isEqualTo(ScopeState.SENT_VERIFIED));
        try (Attempt next = zk.newGate("task-b").enter(key)) {
            assertThat(next.decision()).isInstanceOf(Decision.StopSent.class);
        }
        assertThat(provider.deliveries()).isZero();
    }

    @Test
    void reconcile_refusesKeysThatAreNotUnknown() throws Exception {
        Operator ops = operator();
        EffectKey verified = consumed(provider.verified());
        EffectKey absent = Scenarios.freshKey();

        assertThatThrownBy(() -> ops.reconcile(verified.key(), "a", "b")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("sent_verified already");
        assertThatThrownBy(() -> ops.reconcile(absent.key(), "a", "b")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("does not exist");
    }

    @Test
    void list_walksEveryBucket_unknownIncludesArmed_andNoFilterHidesAnUnreadableKey() throws Exception {
        EffectKey verified = consumed(provider.verified());
        EffectKey unknown = consumed(provider.unconfirmed());
        EffectKey armed = Scenarios.freshKey();
        Worker crashed = zk.newWorker("task-crash");
        try (CrossingInFlight inFlight = CrossingInFlight.start(crashed.gate(), armed, provider.verified())) {
            assertThat(inFlight.awaitInAction(Timing.EVENTUALLY)).isTrue();
            crashed.crash(); // armed, and no outcome will come
        }
        EffectKey broken = consumed(provider.verified());
        zk.newClient().setData().forPath(broken.path(zk.namespace()) + "/0", "{oops".getBytes(StandardCharsets.UTF_8));
        Operator ops = operator();

        List<Operator.KeySummary> all = new ArrayList<>();
        Operator.ListReport report = ops.list(Operator.ListQuery.all(), all::add);
        List<Operator.KeySummary> unknownOnes = new ArrayList<>();
        ops.list(new Operator.ListQuery(ScopeState.SEND_STATUS_UNKNOWN, null, 0), unknownOnes::add);
        List<Operator.KeySummary> limited = new ArrayList<>();
        ops.list(new Operator.ListQuery(null, null, 2), limited::add);
        List<Operator.KeySummary> old = new ArrayList<>();
        ops.list(new Operator.ListQuery(null, Duration.ofDays(1), 0), old::add);

        assertThat(report.scanned()).isEqualTo(4);
        assertThat(report.unreadable()).isEqualTo(1);
        assertThat(all).extracting(Operator.KeySummary::key).containsExactlyInAnyOrder(verified.key(), unknown.key(),
                armed.key(), broken.key());
        assertThat(all).filteredOn(s -> s.key().equals(broken.key())).singleElement().satisfies(s -> {
            assertThat(s.state()).isNull();
            assertThat(s.problem()).contains(broken.path(zk.namespace()) + "/0");
        });
        assertThat(unknownOnes).as("armed reads as unknown; an unreadable key may be in any state, so no filter hides it")
                .extracting(Operator.KeySummary::key).containsExactlyInAnyOrder(unknown.key(), armed.key(), broken.key());
        assertThat(limited).hasSize(2);
        assertThat(old).as("nothing readable is a day old; the unreadable key's age is unknown")
                .extracting(Operator.KeySummary::key).containsExactly(broken.key());
    }

    @Test
    void list_countsEachKeysPendingAuthorization_andEveryUnreadableRecord() throws Exception {
        // Given a consumed key with a pending authorization, one whose authorization opened scope 1,
        // and one with two corrupt records
        Operator ops = operator();
        EffectKey pending = consumed(provider.unconfirmed());
        ops.authorize(pending.key(), 0, "alice", "the customer saw nothing");
        EffectKey used = consumed(provider.verified());
        ops.authorize(used.key(), 0, "bob", "resend requested");
        try (Attempt again = zk.newGate("task-b").enter(used)) {
            again.cross(provider.verified());
        }
        EffectKey broken = consumed(provider.verified());
        String scope = broken.path(zk.namespace()) + "/0";
        zk.newClient().setData().forPath(scope, "{oops".getBytes(StandardCharsets.UTF_8));
        zk.newClient().setData().forPath(scope + "/armed/outcome", "[]".getBytes(StandardCharsets.UTF_8));

        // When the operator lists every key
        List<Operator.KeySummary> all = new ArrayList<>();
        ops.list(Operator.ListQuery.all(), all::add);

        // Then each summary counts what the exporter needs, without reading the key again
        assertThat(all).filteredOn(s -> s.key().equals(pending.key())).singleElement().satisfies(s -> {
            assertThat(s.unusedAuthorizations()).isEqualTo(1);
            assertThat(s.unreadableRecords()).isZero();
        });
        assertThat(all).filteredOn(s -> s.key().equals(used.key())).singleElement().satisfies(s -> {
            assertThat(s.state()).isEqualTo(ScopeState.SENT_VERIFIED);
            assertThat(s.unusedAuthorizations()).as("used: it opened scope 1").isZero();
        });
        assertThat(all).filteredOn(s -> s.key().equals(broken.key())).singleElement().satisfies(s -> {
            assertThat(s.state()).isNull();
            assertThat(s.unreadableRecords()).isEqualTo(ops.inspect(broken.key()).unreadable().size()).isGreaterThanOrEqualTo(2);
        });
    }

    @Test
    void gc_removesOnlyConsumedKeysPastRetention_dryRunRemovesNothing_andARemovedKeyIsOpenAgain() throws Exception {
        EffectKey verified = consumed(provider.verified());
        EffectKey unknown = consumed(provider.unconfirmed());
        EffectKey open;
        open = Scenarios.freshKey();
        try (Attempt a = zk.newGate("task-open").enter(open)) {
            assertThat(a.decision().proceeds()).isTrue(); // left before arming: open
        }
        Operator ops = operator();
        Duration retention = Timing.scaled(500);
        assertThat(ops.gc(Duration.ofDays(1), false, e -> { }).removed()).as("a day has not passed").isZero();

        // Once the server's clock has passed the retention (ages are the server's)
        List<Operator.GcEntry> dry = new ArrayList<>();
        Scenarios.eventually("both consumed keys are past retention by the server's clock", () -> {
            dry.clear();
            return gc(ops, retention, true, dry::add).removed() == 2;
        });
        assertThat(dry).extracting(Operator.GcEntry::key).containsExactlyInAnyOrder(verified.key(), unknown.key());
        assertThat(zk.newClient().checkExists().forPath(verified.path(zk.namespace()))).as("dry run").isNotNull();

        List<Operator.GcEntry> removed = new ArrayList<>();
        Operator.GcReport report = ops.gc(retention, false, removed::add);

        assertThat(report.removed()).isEqualTo(2);
        assertThat(removed).allSatisfy(e -> assertThat(e.removed()).isTrue());
        assertThat(zk.newClient().checkExists().forPath(verified.path(zk.namespace()))).isNull();
        assertThat(zk.newClient().checkExists().forPath(open.path(zk.namespace()))).as("open keys are kept").isNotNull();
        // the removed key is open again: the documented price of retention
        Gate again = zk.newGate("task-again");
        try (Attempt a = again.enter(verified)) {
            assertThat(a.decision().proceeds()).isTrue();
        }
    }

    /** {@link Operator#gc} for a polling condition. */
    static Operator.GcReport gc(Operator ops, Duration olderThan, boolean dryRun,
                                java.util.function.Consumer<Operator.GcEntry> each) {
        try {
            return ops.gc(olderThan, dryRun, each);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
