package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.oncegate.Attempt;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.Operator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Retention says what it did also when the reply to its removal is lost: the key is gone (open
 * again, to the next contender), so gc must report it removed, not kept. An admin who reads
 * "kept: it changed while being removed" for a key that is open again is misled about the one
 * thing retention must be plain about.
 */
class GcRetryTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standaloneWithAmbiguousWrites();

    @Test
    void gcWhoseRemovalReplyIsLost_reportsTheKeyRemoved_andItIsGone() throws Exception {
        // Given a delivered key
        Gate gate = zk.newGate("worker");
        EffectKey key = zk.newKey();
        try (Attempt attempt = gate.enter(key)) {
            attempt.cross(zk.provider().verified());
        }
        // and the reply to the multi that removes it will be lost (it is applied)
        int dropped = AmbiguousWriteCnxnFactory.dropped();
        AmbiguousWriteCnxnFactory.dropNextMultiDeleting(key.key());

        // When retention removes every consumed key (none is younger than zero)
        List<Operator.GcEntry> entries = new ArrayList<>();
        Operator.GcReport report = gate.operator().gc(Duration.ZERO, false, entries::add);

        // Then the reply was lost, the key is gone, and gc says it removed it
        assertThat(AmbiguousWriteCnxnFactory.dropped()).isEqualTo(dropped + 1);
        assertThat(zk.newClient().checkExists().forPath(key.path(zk.namespace()))).isNull();
        assertThat(entries).filteredOn(e -> e.key().equals(key.key())).singleElement()
                .satisfies(e -> assertThat(e.removed()).as(e.toString()).isTrue());
        assertThat(report.removed()).isGreaterThanOrEqualTo(1);
    }
}
