package dev.oncegate.testing;

import dev.oncegate.Operator;
import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.oncegate.Attempt;
import dev.oncegate.BoundaryAction;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.Gate;
import dev.oncegate.KeyHistory;
import dev.oncegate.Outcome;
import dev.oncegate.ProvenNotSentException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * SPEC §3/§6: an authorization is bound to the consumed scope it follows
 * ({@code authorizations/after-<n>}); it opens at most scope n+1, is never honoured for a later
 * scope, and one consumed scope has at most one authorization — so redundant authorizations
 * (a second paste, a racing operator, a retried create) never add deliveries.
 */
class AuthorizationBindingTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    static final String QUOTA = "the provider rejected the upload: quota exceeded";
    static final byte[] RECIPE = "{\"by\":\"alice\",\"reason\":\"customer says nothing arrived\"}".getBytes(StandardCharsets.UTF_8);

    /** The zkCli recipe: {@code create KEY/authorizations/after-<n> '{"by":…,"reason":…}'}. */
    void authorizeFromZkCli(CuratorFramework client, int after) throws Exception {
        client.create().forPath(zk.keyPath() + "/authorizations/after-" + after, RECIPE);
    }

    /** Task A's worker, after it consumed the key crossing with {@code action}. */
    Worker consumedWith(BoundaryAction action) throws InterruptedException {
        Worker a = zk.newWorker("task-a");
        try (Attempt attempt = a.gate().enter(zk.key())) {
            attempt.cross(action);
        }
        return a;
    }

    Decision enterAndDeliver(Gate gate) throws InterruptedException {
        try (Attempt a = gate.enter(zk.key(), Timing.WAIT)) {
            if (a.decision() instanceof Decision.Proceed) {
                Crossing c = a.cross(zk.provider().verified());
                assertThat(c).isInstanceOf(Crossing.Crossed.class);
            }
            return a.decision();
        }
    }

    @Test
    void authorizationIssuedWhileArmed_thenTheExecutorProvesNotSent_noScopeIsOpenedTwice() throws Exception {
        // Given A armed scope 0 and is slow; an operator sees "armed" (reads as unknown) and authorizes after-0
        Worker a = zk.newWorker("task-a");
        Crossing first;
        try (CrossingInFlight inFlight = CrossingInFlight.start(a.gate(), zk.key(), zk.provider().rejects(QUOTA))) {
            assertThat(inFlight.awaitInAction(Timing.EVENTUALLY)).isTrue();
            authorizeFromZkCli(a.client(), 0);
            // When A's action proves not_sent, then B and later C enter
            first = inFlight.releaseAndAwait(Timing.EVENTUALLY);
        }
        Decision b = enterAndDeliver(zk.newGate("task-b"));
        Decision c = enterAndDeliver(zk.newGate("task-c"));

        // Then exactly one delivery happened, in scope 1; the authorization for scope 0 opened nothing more
        assertThat(first).isInstanceOfSatisfying(Crossing.Crossed.class, x -> {
            assertThat(x.outcome()).isEqualTo(Outcome.NOT_SENT);
            assertThat(x.recorded()).isTrue();
        });
        assertThat(b).isInstanceOf(Decision.Proceed.class);
        assertThat(c).isInstanceOf(Decision.StopSent.class);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(zk.provider().ledger().get(0).scope()).isEqualTo(1);
        KeyHistory history = a.gate().inspect(zk.key().key());
        assertThat(Scenarios.outcomes(history)).containsExactly("not_sent", "sent_verified");
        assertThat(history.authorizations()).singleElement().satisfies(auth -> {
            assertThat(auth.name()).isEqualTo("after-0");
            assertThat(auth.usedBy()).isEqualTo(-1);
            assertThat(auth.status()).isEqualTo(KeyHistory.AuthorizationStatus.STALE);
        });
    }

    @Test
    void authorizationOpensTheNextScopeWhileTheExecutorStillActs_itsNotSentIsStillRecorded() throws Exception {
        // Given A armed scope 0 and is slow, and an operator authorized after-0
        Worker a = zk.newWorker("task-a");
        Decision c;
        Crossing first;
        try (CrossingInFlight inFlight = CrossingInFlight.start(a.gate(), zk.key(), zk.provider().rejects(QUOTA))) {
            assertThat(inFlight.awaitInAction(Timing.EVENTUALLY)).isTrue();
            authorizeFromZkCli(a.client(), 0);
            // When C uses the authorization (scope 1) and delivers, and only then A proves not_sent
            c = enterAndDeliver(zk.newGate("task-c"));
            first = inFlight.releaseAndAwait(Timing.EVENTUALLY);
        }

        // Then A's not_sent is recorded (the next scope exists already: it is written without it)
        assertThat(c).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isEqualTo(1));
        assertThat(first).isInstanceOfSatisfying(Crossing.Crossed.class, x -> assertThat(x.recorded()).isTrue());
        KeyHistory history = a.gate().inspect(zk.key().key());
        assertThat(history.scopes()).extracting(KeyHistory.Scope::state).containsExactly(ScopeState.NOT_SENT, ScopeState.SENT_VERIFIED);
        assertThat(history.authorizations()).singleElement().satisfies(auth -> assertThat(auth.status()).isEqualTo(KeyHistory.AuthorizationStatus.USED));
        // and nobody delivers again
        assertThat(enterAndDeliver(zk.newGate("task-d"))).isInstanceOf(Decision.StopSent.class);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
    }

    @Test
    void recipePastedTwice_orAnOldStyleRecord_opensOneScopeOnly() throws Exception {
        // Given a key consumed with send_status_unknown
        Worker a = consumedWith(zk.provider().unconfirmed());
        // When the operator pastes the recipe twice, and someone adds a record with another name
        authorizeFromZkCli(a.client(), 0);
        assertThatThrownBy(() -> authorizeFromZkCli(a.client(), 0)).isInstanceOf(KeeperException.NodeExistsException.class);
        a.client().create().forPath(zk.keyPath() + "/authorizations/auth-0000000001", RECIPE);

        // and many contenders enter, one after another
        List<Decision> decisions = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            decisions.add(enterAndDeliver(zk.newGate("retry-" + i)));
        }

        // Then exactly one redelivery (scope 1)
        assertThat(decisions).filteredOn(Decision::proceeds).hasSize(1);
        assertThat(zk.provider().deliveries()).isEqualTo(2);
        KeyHistory history = a.gate().inspect(zk.key().key());
        assertThat(history.scopes()).hasSize(2);
        assertThat(history.authorizations()).extracting(KeyHistory.Authorization::name, KeyHistory.Authorization::status)
                .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple("after-0", KeyHistory.AuthorizationStatus.USED),
                        org.assertj.core.groups.Tuple.tuple("auth-0000000001", KeyHistory.AuthorizationStatus.IGNORED));
    }

    @Test
    void authorizationForAnEarlierScope_isNeverHonouredForALaterOne() throws Exception {
        // Given scope 0 consumed, authorized and redelivered in scope 1 (consumed too)
        Worker a = consumedWith(zk.provider().unconfirmed());
        authorizeFromZkCli(a.client(), 0);
        assertThat(enterAndDeliver(zk.newGate("task-b"))).isInstanceOf(Decision.Proceed.class);

        // When more contenders come (after-0 exists, no after-1)
        Decision late = enterAndDeliver(zk.newGate("task-c"));

        // Then they stop: after-0 was used for scope 1 and means nothing for scope 1's consumption
        assertThat(late).isInstanceOf(Decision.StopSent.class);
        assertThat(zk.provider().deliveries()).isEqualTo(2);
        assertThat(a.gate().inspect(zk.key().key()).authorizeCommand())
                .isEqualTo("create " + zk.keyPath() + "/authorizations/after-1 '{\"by\":\"<you>\",\"reason\":\"<why>\"}'");
    }

    @Test
    void authorizationCreatedBeforeItsScopeWasConsumed_isPremature_andNeverHonoured() throws Exception {
        // Given an operator "pre-authorizes" scope 0 while it is still open
        Worker a = zk.newWorker("task-a");
        try (Attempt attempt = a.gate().enter(zk.key())) {
            authorizeFromZkCli(a.client(), 0);
            attempt.cross(zk.provider().verified());
        }

        // When contenders come after scope 0 was consumed
        Decision late = enterAndDeliver(zk.newGate("task-b"));

        // Then the early record is not an informed decision about scope 0: nothing is redelivered
        assertThat(late).isInstanceOf(Decision.StopSent.class);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(a.gate().inspect(zk.key().key()).authorizations()).singleElement()
                .satisfies(auth -> assertThat(auth.status()).isEqualTo(KeyHistory.AuthorizationStatus.PREMATURE));
    }

    /** The status {@code inspect} gives each authorization, by name. */
    Map<String, KeyHistory.AuthorizationStatus> statuses(Worker w) throws InterruptedException {
        Map<String, KeyHistory.AuthorizationStatus> out = new TreeMap<>();
        w.gate().inspect(zk.key().key()).authorizations().forEach(a -> out.put(a.name(), a.status()));
        return out;
    }

    @Test
    void authorizationForANotSentScope_opensNothingOnceALaterScopeIsConsumed() throws Exception {
        // Given scope 0 proven not_sent (which opened scope 1) and scope 1 delivered
        Worker a = zk.newWorker("task-a");
        try (Attempt attempt = a.gate().enter(zk.key())) {
            attempt.cross(zk.provider().rejects(QUOTA));
        }
        assertThat(enterAndDeliver(zk.newGate("task-b"))).isInstanceOf(Decision.Proceed.class);
        // When an operator authorizes after scope 0 (not the latest consumed scope), and contenders come
        authorizeFromZkCli(a.client(), 0);
        Decision c = enterAndDeliver(zk.newGate("task-c"));
        Decision d = enterAndDeliver(zk.newGate("task-d"));

        // Then after-0 opens nothing: scope 1 stays the latest, delivered once
        assertThat(List.of(c, d)).allSatisfy(x -> assertThat(x).isInstanceOf(Decision.StopSent.class));
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(zk.provider().ledger().get(0).scope()).isEqualTo(1);
        KeyHistory history = a.gate().inspect(zk.key().key());
        assertThat(history.scopes()).extracting(KeyHistory.Scope::state).containsExactly(ScopeState.NOT_SENT, ScopeState.SENT_VERIFIED);
        assertThat(statuses(a)).containsExactly(Map.entry("after-0", KeyHistory.AuthorizationStatus.STALE));
    }

    @Test
    void authorizationWrittenWhileItsScopeIsOpen_isPremature_andOpensNothingOnceTheScopeIsConsumed() throws Exception {
        // Given scope 0 proven not_sent, so scope 1 is open and nobody entered it yet
        Worker a = zk.newWorker("task-a");
        try (Attempt attempt = a.gate().enter(zk.key())) {
            attempt.cross(zk.provider().rejects(QUOTA));
        }
        // When an operator "pre-authorizes" scope 1 while it is open
        authorizeFromZkCli(a.client(), 1);

        // Then it is premature (no decision about a scope that has not ended), and a new attempt would just enter scope 1
        KeyHistory early = a.gate().inspect(zk.key().key());
        assertThat(statuses(a)).containsExactly(Map.entry("after-1", KeyHistory.AuthorizationStatus.PREMATURE));
        assertThat(early.state()).isEqualTo(ScopeState.OPEN);
        assertThat(early.nextAttempt()).startsWith("Scope 1 is open");
        // and once scope 1 is delivered, it opens no scope 2
        assertThat(enterAndDeliver(zk.newGate("task-b"))).isInstanceOf(Decision.Proceed.class);
        assertThat(enterAndDeliver(zk.newGate("task-c"))).isInstanceOf(Decision.StopSent.class);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(a.gate().inspect(zk.key().key()).scopes()).hasSize(2);
        assertThat(statuses(a)).containsExactly(Map.entry("after-1", KeyHistory.AuthorizationStatus.PREMATURE));
    }

    @Test
    void authorizationForAScopeThatDoesNotExist_opensNothing_evenOnceThatScopeIsConsumed() throws Exception {
        // Given scope 0 delivered; an operator authorizes after it, and (in advance) after scopes 1 and 5
        Worker a = consumedWith(zk.provider().verified());
        authorizeFromZkCli(a.client(), 0);
        authorizeFromZkCli(a.client(), 1);
        authorizeFromZkCli(a.client(), 5);
        assertThat(statuses(a)).containsExactly(Map.entry("after-0", KeyHistory.AuthorizationStatus.UNUSED),
                Map.entry("after-1", KeyHistory.AuthorizationStatus.PREMATURE),
                Map.entry("after-5", KeyHistory.AuthorizationStatus.PREMATURE));

        // When contenders come: after-0 opens scope 1, which is delivered and so consumed
        List<Decision> decisions = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            decisions.add(enterAndDeliver(zk.newGate("retry-" + i)));
        }

        // Then after-1, written before scope 1 existed, opens no scope 2: one redelivery only
        assertThat(decisions).filteredOn(Decision::proceeds).singleElement()
                .satisfies(p -> assertThat(((Decision.Proceed) p).scope()).isEqualTo(1));
        assertThat(zk.provider().deliveries()).isEqualTo(2);
        assertThat(a.gate().inspect(zk.key().key()).scopes()).extracting(KeyHistory.Scope::state)
                .containsExactly(ScopeState.SENT_VERIFIED, ScopeState.SENT_VERIFIED);
        assertThat(statuses(a)).containsExactly(Map.entry("after-0", KeyHistory.AuthorizationStatus.USED),
                Map.entry("after-1", KeyHistory.AuthorizationStatus.PREMATURE),
                Map.entry("after-5", KeyHistory.AuthorizationStatus.PREMATURE));
    }

    @Test
    void twoOperatorsAuthorizingAtOnce_writeOneRecord_andOneScopeOpens() throws Exception {
        // Given a consumed key
        Worker a = consumedWith(zk.provider().verified());
        // When two operators (two sessions) authorize at the same moment
        Gate alice = zk.newGate("alice");
        Gate bob = zk.newGate("bob");
        List<Operator.Authorized> results = Race.together(
                () -> alice.operator().authorize(zk.key().key(), 0, "alice", "resend to the customer"),
                () -> bob.operator().authorize(zk.key().key(), 0, "bob", "resend too"));

        // Then one record was written, the other operator was told about it
        assertThat(results).filteredOn(Operator.Authorized::created).hasSize(1);
        assertThat(results).allSatisfy(r -> {
            assertThat(r.path()).isEqualTo(zk.keyPath() + "/authorizations/after-0");
            assertThat(r.status()).isEqualTo(KeyHistory.AuthorizationStatus.UNUSED);
        });
        assertThat(results.get(0).by()).isEqualTo(results.get(1).by());
        assertThat(a.client().getChildren().forPath(zk.keyPath() + "/authorizations")).containsExactly("after-0");
        // and exactly one redelivery follows
        assertThat(enterAndDeliver(zk.newGate("task-b"))).isInstanceOf(Decision.Proceed.class);
        assertThat(enterAndDeliver(zk.newGate("task-c"))).isInstanceOf(Decision.StopSent.class);
        assertThat(zk.provider().deliveries()).isEqualTo(2);
    }

    @Test
    void sameAuthorizeAgain_afterARedeliveryUsedIt_isRefusedNamingTheScopeDeliveredSince() throws Exception {
        // Given scope 0 consumed, authorized by an operator, and redelivered in scope 1 with it
        Worker a = consumedWith(zk.provider().verified());
        Operator ops = zk.newGate("ops").operator();
        assertThat(ops.authorize(zk.key().key(), 0, "alice", "ticket 4711").created()).isTrue();
        assertThat(enterAndDeliver(zk.newGate("task-b"))).isInstanceOf(Decision.Proceed.class);

        // When the same authorization is asked for again (a wrapper's retry, a second operator on the ticket)
        Throwable repeat = catchThrowable(() -> ops.authorize(zk.key().key(), 0, "alice", "ticket 4711"));
        List<String> written = a.client().getChildren().forPath(zk.keyPath() + "/authorizations");
        Decision third = enterAndDeliver(zk.newGate("task-c"));

        // Then it is refused naming scope 1, nothing is written, and nobody delivers a third time
        assertThat(written).as("authorizations after the repeat (" + repeat + "); then " + third).containsExactly("after-0");
        assertThat(repeat).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("scope 0 of key " + zk.key().key() + " is not its latest scope")
                .hasMessageContaining("scope 1 (opened by after-0) is sent_verified");
        assertThat(third).isInstanceOf(Decision.StopSent.class);
        assertThat(zk.provider().deliveries()).isEqualTo(2);
    }

    @Test
    void authorizeAfterAScopeThatDoesNotExist_isRefused_andWritesNothing() throws Exception {
        // Given a key consumed in scope 0
        Worker a = consumedWith(zk.provider().verified());

        // When an operator authorizes after scope 1, which nobody opened
        Operator ops = zk.newGate("ops").operator();
        Throwable early = catchThrowable(() -> ops.authorize(zk.key().key(), 1, "alice", "one more, in advance"));

        // Then it is refused, nothing is written, and the next contender stops sent
        assertThat(early).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has no scope 1")
                .hasMessageContaining("its latest scope is 0 (sent_verified)");
        assertThat(a.client().getChildren().forPath(zk.keyPath() + "/authorizations")).isEmpty();
        assertThat(enterAndDeliver(zk.newGate("task-b"))).isInstanceOf(Decision.StopSent.class);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
    }

    @Test
    void authorize_refusesAKeyThatIsNotConsumed_andWritesNothing() throws Exception {
        Gate gate = zk.newGate("ops");
        assertThatThrownBy(() -> gate.operator().authorize(zk.key().key(), 0, "ops", "why")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("does not exist");
        try (Attempt attempt = gate.enter(zk.key())) {
            BoundaryAction never = ctx -> {
                throw new ProvenNotSentException("validation failed before upload");
            };
            attempt.cross(never);
        }
        assertThatThrownBy(() -> gate.operator().authorize(zk.key().key(), 1, "ops", "why")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not consumed");
        assertThat(zk.newClient().getChildren().forPath(zk.keyPath() + "/authorizations")).isEmpty();
    }
}
