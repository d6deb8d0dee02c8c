package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.KeyHistory;
import dev.oncegate.Outcome;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SPEC §4 pitfall "a create or multi can be applied on the server while the client sees
 * ConnectionLoss, so every record carries the writer's attempt id and a retry recognises its
 * own write": the lease write and the outcome write are retried after a lost reply and must
 * recognise themselves, never stop the executor or write twice. (The arming write is the one
 * write that is never retried: {@link ArmingUnderConnectionLossTest}.)
 */
class AmbiguousWriteRecognitionTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standaloneWithAmbiguousWrites();

    Worker a;

    @BeforeEach
    void fresh() {
        a = zk.newWorker("task-a");
    }

    @SuppressWarnings("unchecked")
    private static String attemptOf(Map<String, Object> record, String field) {
        return (String) ((Map<String, Object>) record.get(field)).get("attempt");
    }

    @Test
    void leaseWriteReplyLost_retryRecognisesItsOwnLeaseAndProceeds() throws Exception {
        // Given the reply to the next setData on a scope znode (the lease CAS) will be lost
        int before = AmbiguousWriteCnxnFactory.dropped();
        AmbiguousWriteCnxnFactory.dropNextSetData("/0");

        // When a contender enters the fresh key
        Crossing crossing;
        try (Attempt attempt = a.gate().enter(zk.key(), Timing.scaled(5_000))) {
            // Then it proceeds with the token its (applied) lease write produced
            assertThat(AmbiguousWriteCnxnFactory.dropped()).isEqualTo(before + 1);
            assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.Proceed.class,
                    p -> assertThat(p.token().version()).isEqualTo(1));
            crossing = attempt.cross(zk.provider().verified());
        }
        // and delivers exactly once
        assertThat(crossing).isInstanceOf(Crossing.Crossed.class);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(a.gate().inspect(zk.key().key()).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }

    @Test
    void outcomeWriteReplyLost_retryRecognisesItsOwnOutcome() throws Exception {
        // Given an executor, and the reply to the next outcome multi will be lost
        Attempt attempt = a.gate().enter(zk.key());
        assertThat(attempt.decision().proceeds()).isTrue();
        int before = AmbiguousWriteCnxnFactory.dropped();
        AmbiguousWriteCnxnFactory.dropNextSetData("/armed/outcome");

        // When it crosses and delivers
        Crossing crossing = attempt.cross(zk.provider().verified());
        attempt.close();

        // Then its retried outcome write recognised itself: recorded, once, by this attempt
        assertThat(AmbiguousWriteCnxnFactory.dropped()).isEqualTo(before + 1);
        assertThat(crossing).isInstanceOfSatisfying(Crossing.Crossed.class, c -> {
            assertThat(c.outcome()).isEqualTo(Outcome.SENT_VERIFIED);
            assertThat(c.recorded()).isTrue();
        });
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        KeyHistory history = a.gate().inspect(zk.key().key());
        assertThat(history.state()).isEqualTo(ScopeState.SENT_VERIFIED);
        assertThat(history.scopes().get(0).outcome().by().attempt()).isEqualTo(history.scopes().get(0).armed().by().attempt());
    }

    @Test
    void notSentOutcomeReplyLost_retryRecognisesItAndScopeOneOpensOnce() throws Exception {
        // Given an executor, and the reply to the next outcome multi will be lost
        Attempt attempt = a.gate().enter(zk.key());
        int before = AmbiguousWriteCnxnFactory.dropped();
        AmbiguousWriteCnxnFactory.dropNextSetData("/armed/outcome");

        // When its provider proves not_sent
        Crossing crossing = attempt.cross(zk.provider().rejects("rejected before upload"));
        attempt.close();
        assertThat(AmbiguousWriteCnxnFactory.dropped()).isEqualTo(before + 1);

        // Then the not_sent outcome is recorded once, and scope 1 is open
        assertThat(crossing).isInstanceOfSatisfying(Crossing.Crossed.class, c -> {
            assertThat(c.outcome()).isEqualTo(Outcome.NOT_SENT);
            assertThat(c.recorded()).isTrue();
        });
        KeyHistory history = a.gate().inspect(zk.key().key());
        assertThat(history.scopes()).hasSize(2);
        assertThat(Scenarios.outcomeOf(history, 0)).isEqualTo("not_sent");
        assertThat(history.state()).isEqualTo(ScopeState.OPEN);

        // and the next contender proceeds there and delivers exactly once
        try (Worker b = zk.newWorker("task-b");
             Attempt next = b.gate().enter(zk.key())) {
            assertThat(next.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isEqualTo(1));
            assertThat(next.cross(zk.provider().verified())).isInstanceOf(Crossing.Crossed.class);
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);
    }
}
