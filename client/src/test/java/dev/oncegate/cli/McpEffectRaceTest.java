package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Crossing;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.Outcome;
import dev.oncegate.testing.Timing;
import dev.oncegate.testing.ZooKeeperExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An MCP agent's tool calls may run in parallel (a model's parallel tool calls, a client that
 * gives up on a slow checkpoint and crosses): a checkpoint that finishes after a cross was asked
 * for must not put the effect back to "proceeding", or a second {@code cross_effect} answers
 * "proceed: submit now" again for the one armed scope, and the outcome can no longer be recorded.
 * Each round races a checkpoint against a cross on a fresh key; the order varies, the answer may not.
 * And a crossing whose outcome could not be recorded is known as such, for the session's exit 1;
 * and a held effect checked again is checked against the records, not answered from memory.
 */
class McpEffectRaceTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    static final int ROUNDS = 20;

    @Test
    void checkpointFinishingAfterTheCross_armsOnce_refusesASecondCross_andRecordsTheOutcome() throws Exception {
        Gate gate = zk.newGate("mcp-agent");
        for (int round = 0; round < ROUNDS; round++) {
            // Given an effect the agent holds
            EffectKey key = zk.newKey();
            McpEffect effect = McpEffect.enter(gate, key, Duration.ZERO, () -> { });
            assertThat(effect.awaitEntry().proceeds()).isTrue();

            // When a checkpoint is under way (its caller waiting for it) and a cross is asked for meanwhile
            CompletableFuture<Object> checkpoint = new CompletableFuture<>();
            Thread caller = new Thread(() -> {
                try {
                    checkpoint.complete(effect.checkpoint("picker"));
                } catch (Exception e) {
                    checkpoint.complete(e);
                }
            }, "checkpoint-caller");
            caller.start();
            while (caller.getState() != Thread.State.WAITING && caller.getState() != Thread.State.TIMED_WAITING
                    && !checkpoint.isDone()) {
                Thread.onSpinWait();
            }
            McpEffect.CrossAnswer first = effect.cross();
            checkpoint.get(Timing.WAIT.toMillis(), TimeUnit.MILLISECONDS);
            caller.join();

            // Then the scope is armed once, a second cross is refused, and the agent's report is recorded
            assertThat(first.armed()).as("round %d", round).isNotNull();
            assertThatThrownBy(effect::cross).as("round %d: a second cross_effect", round)
                    .isInstanceOf(IllegalStateException.class);
            Crossing.Crossed recorded = effect.record(Outcome.SENT_VERIFIED, "receipt " + round);
            assertThat(recorded.outcome()).as("round %d", round).isEqualTo(Outcome.SENT_VERIFIED);
            assertThat(recorded.recorded()).isTrue();
        }
    }

    @Test
    void crossingWhoseOutcomeCannotBeRecorded_isCountedUnrecorded() throws Exception {
        // Given an agent's armed crossing, and an operator who reconciled the key meanwhile: the reconciliation took
        // the scope's one outcome write
        Gate gate = zk.newGate("mcp-agent");
        EffectKey key = zk.newKey();
        McpEffect effect = McpEffect.enter(gate, key, Duration.ZERO, () -> { });
        assertThat(effect.awaitEntry().proceeds()).isTrue();
        assertThat(effect.cross().armed()).isNotNull();
        assertThat(effect.unrecorded()).as("armed, not yet reported").isFalse();
        gate.operator().reconcile(key.key(), "alice", "message 42 is in the inbox");

        // When the agent reports its delivery
        Crossing.Crossed crossed = effect.record(Outcome.SENT_VERIFIED, "receipt");

        // Then it was not recorded, and the effect says so (the session then exits 1, not 0)
        assertThat(crossed.recorded()).isFalse();
        assertThat(effect.unrecorded()).isTrue();
    }

    @Test
    void heldEffectCheckedAgainAfterASiblingDeliveredIt_answersTheStop_notTheOldProceed() throws Exception {
        // Given a session holding an effect on a short lease, which lapses while the agent thinks
        Duration ttl = Timing.SHORT_LEASE;
        Gate mine = zk.newGate("mcp-agent", b -> b.leaseTtl(ttl));
        EffectKey key = zk.newKey();
        McpSession session = new McpSession(mine, () -> { });
        assertThat(session.check(key, Duration.ZERO).decision().proceeds()).isTrue();
        // and a sibling that waited takes the lapsed lease over and delivers
        try (dev.oncegate.Attempt sibling = zk.newGate("sibling").enter(key, Timing.WAIT)) {
            assertThat(sibling.decision().proceeds()).as("%s", sibling.decision()).isTrue();
            assertThat(sibling.cross(zk.provider().verified())).isInstanceOf(Crossing.Crossed.class);
        }

        // When the agent checks the effect again
        McpEffect again = session.check(key, Duration.ZERO);

        // Then it is told to stop (the key was delivered), not "proceed" from what it was told before
        assertThat(again.decision().proceeds()).as("%s", again.decision()).isFalse();
        assertThat(again.decision().kind()).isEqualTo("stop_sent");
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        session.end("the test ended", Timing.WAIT);
    }
}
