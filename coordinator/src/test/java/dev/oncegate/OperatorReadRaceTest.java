package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

/**
 * An operator command reads a key in several calls (its children, then each scope's data), so a
 * contender can open the next scope with an authorization, and deliver in it, between the two:
 * the command then holds a scope version that already counts the opening, beside a list of
 * scopes that does not have the new one. Neither {@code gc} nor {@code reconcile} may act on
 * that stale newest scope. Each test puts the redelivery exactly there (before the operator's
 * first read of scope 0's data). And a story with a scope missing (an admin's {@code deleteall},
 * a partial restore) is no ground for an operator's write either.
 */
class OperatorReadRaceTest extends ArmedScopeFixture {

    /** Scope 0 armed by "a" and ended {@code outcome}, its election left, and an authorization to redeliver after it. */
    void consumedAndAuthorized(Outcome outcome) throws Exception {
        Armed a = armAs("a");
        protocol.executor().recordOutcome(keyPath, 0, a.node(), outcome(outcome, "a"), a.secret());
        leaveElection(a.node());
        client.create().forPath(Layout.authorization(keyPath, 0), "{\"by\":\"bob\",\"reason\":\"resend\"}"
                .getBytes(StandardCharsets.UTF_8));
    }

    /** An operator whose first read of scope 0's data is preceded by a contender's redelivery ending {@code outcome}. */
    DefaultOperator operatorRacedBy(Outcome outcome) {
        RecordingOps recording = new RecordingOps(client, "ops");
        AtomicBoolean done = new AtomicBoolean();
        String scopeZero = Layout.scope(keyPath, 0);
        recording.around((call, args, send) -> {
            if (call.method().equals("getData") && call.ops().equals(List.of(scopeZero)) && done.compareAndSet(false, true)) {
                ScopeReads.ScopeRead read = protocol.reads().readScopeOnce(keyPath, 0);
                assertThat(protocol.executor().openAuthorizedScope(keyPath, read.view(), read.authorization()))
                        .isEqualTo(ExecutorWrites.Opening.OPENED);
                Armed b = armAs(1, "b");
                protocol.executor().recordOutcome(keyPath, 1, b.node(), outcome(outcome, "b"), b.secret());
                leaveElection(b.node());
            }
            return send.send();
        });
        return new DefaultOperator(new NamespaceState(recording.ops(), ns, Clock.systemUTC(), ZxidMarks.inMemory(), false),
                "ops-host");
    }

    private void leaveElection(String node) throws Exception {
        if (client.checkExists().forPath(node) != null) {
            client.delete().forPath(node);
        }
    }

    @Test
    void gcWhileAContenderRedelivers_keepsTheKey_andItsNewScope() throws Exception {
        // Given scope 0 delivered long enough ago, and an authorization to deliver again
        consumedAndAuthorized(Outcome.SENT_VERIFIED);
        DefaultOperator operator = operatorRacedBy(Outcome.SENT_VERIFIED);

        // When retention runs, and scope 1 is opened and delivered between its reads of the key
        List<Operator.GcEntry> entries = new ArrayList<>();
        Operator.GcReport report = operator.gc(Duration.ofMillis(1), false, entries::add);

        // Then the key is not removed: it still says scope 1 was delivered, so no contender delivers it again
        assertThat(report.removed()).isZero();
        assertThat(entries).singleElement().satisfies(e -> assertThat(e.removed()).isFalse());
        assertThat(client.checkExists().forPath(keyPath)).isNotNull();
        assertThat(protocol.reads().readScope(keyPath, 1).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }

    @Test
    void reconcileWhileAnAuthorizationOpensTheNextScope_isRefused_andReconcilesNothing() throws Exception {
        // Given scope 0 ended send_status_unknown, and an authorization to deliver again
        consumedAndAuthorized(Outcome.SEND_STATUS_UNKNOWN);
        DefaultOperator operator = operatorRacedBy(Outcome.SEND_STATUS_UNKNOWN);

        // When an operator reconciles the key, and scope 1 is opened (and ends unknown) between its reads
        // Then it is refused, as the README says (exit 2), and neither scope is reconciled
        assertThatThrownBy(() -> operator.reconcile(key.key(), "alice", "the file is in the channel"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("scope 1");
        assertThat(client.checkExists().forPath(Layout.reconciliation(keyPath, 0))).isNull();
        assertThat(client.checkExists().forPath(Layout.reconciliation(keyPath, 1))).isNull();
        assertThat(protocol.reads().readScope(keyPath, 1).state()).isEqualTo(ScopeState.SEND_STATUS_UNKNOWN);
    }

    @Test
    void authorizeOnAKeyWithAScopeMissingBelowTheLatest_isRefused_andWritesNothing() throws Exception {
        // Given scopes 0, 1 and 2 delivered (through after-0 and after-1), and then scope 1 deleted by an admin
        consumedAndAuthorized(Outcome.SENT_VERIFIED);
        for (int n = 1; n <= 2; n++) {
            ScopeReads.ScopeRead read = protocol.reads().readScopeOnce(keyPath, n - 1);
            assertThat(protocol.executor().openAuthorizedScope(keyPath, read.view(), read.authorization()))
                    .isEqualTo(ExecutorWrites.Opening.OPENED);
            Armed armed = armAs(n, "x" + n);
            protocol.executor().recordOutcome(keyPath, n, armed.node(), outcome(Outcome.SENT_VERIFIED, "x" + n), armed.secret());
            leaveElection(armed.node());
            if (n == 1) {
                client.create().forPath(Layout.authorization(keyPath, 1), "{\"by\":\"bob\",\"reason\":\"again\"}"
                        .getBytes(StandardCharsets.UTF_8));
            }
        }
        client.delete().deletingChildrenIfNeeded().forPath(Layout.scope(keyPath, 1));
        byte[] evidenceOfScopeTwo = client.getData().forPath(Layout.authorization(keyPath, 1));

        // When an operator authorizes a redelivery after scope 2, the latest
        Operator operator = Operator.builder(client).namespace(ns).build();

        // Then it is refused until the story is repaired (exit 2), and no authorization is written or changed
        assertThatThrownBy(() -> operator.authorize(key.key(), 2, "alice", "the customer asked"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cannot be read")
                .hasMessageContaining("scope 1 is missing");
        assertThat(client.checkExists().forPath(Layout.authorization(keyPath, 2))).isNull();
        assertThat(client.getData().forPath(Layout.authorization(keyPath, 1))).isEqualTo(evidenceOfScopeTwo);
    }
}
