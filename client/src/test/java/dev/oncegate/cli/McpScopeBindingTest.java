package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;

import dev.oncegate.EffectKey;
import dev.oncegate.KeyHistory;
import dev.oncegate.Outcome;
import dev.oncegate.ScopeState;
import dev.oncegate.testing.Worker;
import dev.oncegate.testing.ZooKeeperExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An LLM agent repeats calls. Once an MCP session has held a key in two scopes (scope 0 ended
 * {@code not_sent}, scope 1 proceeded), a {@code record_outcome} or {@code cross_effect} naming the
 * key alone may be a repeat of scope 0's call: it must name its scope, and one naming another
 * scope than the one held writes nothing. Else a repeated {@code not_sent} of scope 0 became scope
 * 1's outcome, opened scope 2, and a sibling delivered again (a review's finding).
 */
class McpScopeBindingTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    @Test
    void aRepeatedNotSentOfAnEarlierScope_isRefused_andTheScopeItNamesDecides() throws Exception {
        // Given a session whose agent crossed scope 0 and proved not_sent, then proceeded and crossed in scope 1
        Worker agent = zk.newWorker("mcp-agent");
        McpSession session = new McpSession(agent.gate(), () -> { });
        EffectKey key = zk.newKey();
        assertThat(session.check(key, Duration.ZERO).awaitEntry().proceeds()).isTrue();
        assertThat(session.cross(key.key(), null).armed()).isNotNull();
        session.record(key.key(), null, Outcome.NOT_SENT, "the compose dialog failed to open; nothing was submitted");
        assertThat(session.check(key, Duration.ZERO).awaitEntry().proceeds()).isTrue();
        assertThatThrownBy(() -> session.cross(key.key(), null)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("name the scope");
        assertThat(session.cross(key.key(), 1).armed()).isNotNull();

        // When scope 0's report arrives again, by key alone, or naming scope 0
        assertThatThrownBy(() -> session.record(key.key(), null, Outcome.NOT_SENT,
                "the compose dialog failed to open; nothing was submitted"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("name the scope");
        assertThatThrownBy(() -> session.record(key.key(), 0, Outcome.NOT_SENT,
                "the compose dialog failed to open; nothing was submitted"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("scope 1, not 0");

        // Then neither wrote anything, and the agent's own report of scope 1 is what is recorded
        session.record(key.key(), 1, Outcome.SENT_VERIFIED, "message id 42");
        KeyHistory h = agent.gate().inspect(key.key());
        assertThat(h.scopes()).hasSize(2);
        assertThat(h.state()).isEqualTo(ScopeState.SENT_VERIFIED);
        try (var next = zk.newWorker("sibling").gate().enter(key)) {
            assertThat(next.decision().proceeds()).isFalse();
        }
    }
}
