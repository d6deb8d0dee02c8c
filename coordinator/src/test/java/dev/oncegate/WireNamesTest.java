package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;

import org.junit.jupiter.api.Test;

/**
 * The wire names are a contract: they are in records that outlive any release, in the CLI's
 * JSON and in metric tags. Spelled out here, so that renaming an enum constant cannot change
 * one silently.
 */
class WireNamesTest {

    @Test
    void outcomes_areSpelledAsInTheRecords() {
        assertThat(Arrays.stream(Outcome.values()).map(Outcome::wireName))
                .containsExactly("sent_verified", "send_status_unknown", "not_sent");
        for (Outcome o : Outcome.values()) {
            assertThat(Outcome.fromWireName(o.wireName())).isSameAs(o);
        }
        assertThatThrownBy(() -> Outcome.fromWireName("SENT_VERIFIED"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("outcome: ");
    }

    @Test
    void stopReasons_areSpelledAsInTheJsonLogsAndTags() {
        assertThat(Arrays.stream(StopReason.values()).map(StopReason::wireName)).containsExactly(
                "sent_verified", "send_status_unknown", "armed_without_outcome", "executor_active",
                "wait_expired", "fenced", "zookeeper_unreachable", "connection_lost", "unreadable_record",
                "permission_denied", "namespace_not_initialised", "namespace_replaced", "zookeeper_rolled_back",
                "marks_unreadable", "write_result_unknown", "interrupted", "zookeeper_error");
    }

    @Test
    void identityKinds_areSpelledAsInTheCanonicalKeyText() {
        assertThat(Arrays.stream(IdentityKind.values()).map(IdentityKind::wireName))
                .containsExactly("stable", "display-name");
        for (IdentityKind k : IdentityKind.values()) {
            assertThat(IdentityKind.fromWireName(k.wireName())).isSameAs(k);
        }
        assertThatThrownBy(() -> IdentityKind.fromWireName("display_name"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("identity: expected 'stable' or 'display-name', got 'display_name'");
    }

    @Test
    void scopeStatesAndAuthorizationStatuses_areSpelledAsInTheCli() {
        assertThat(Arrays.stream(ScopeState.values()).map(ScopeState::wireName)).containsExactly(
                "open", "leased", "armed", "sent_verified", "send_status_unknown", "not_sent");
        assertThat(Arrays.stream(KeyHistory.AuthorizationStatus.values()).map(KeyHistory.AuthorizationStatus::wireName))
                .containsExactly("used", "unused", "stale", "premature", "unreadable", "ignored");
    }
}
