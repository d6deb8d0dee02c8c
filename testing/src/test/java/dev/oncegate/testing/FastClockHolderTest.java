package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.StopReason;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A hung holder is taken over even when its clock runs fast: lease expiry written by the holder's
 * clock cannot block everyone; a contender that watched the same lease version unchanged for a
 * whole TTL on its own clock takes the lease over (cause {@code unrenewed}), which fences the holder.
 */
class FastClockHolderTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    @Test
    void holderAnHourAhead_hangsWhileConnected_aContenderTakesOverAfterOneTtl() throws Exception {
        // Given a holder whose clock runs an hour fast: its lease "expires" an hour from now
        Attempt holder = zk.newGate("fast-clock", b -> b.leaseTtl(Timing.SHORT_LEASE)
                .clock(Clock.offset(Clock.systemUTC(), Duration.ofHours(1)))).enter(zk.key());
        assertThat(holder.decision().proceeds()).isTrue();

        // When it hangs (connected, no checkpoint) and a contender with a true clock waits for it
        Crossing taken;
        try (Attempt contender = zk.newGate("true-clock", b -> b.leaseTtl(Timing.SHORT_LEASE)).enter(zk.key(), Timing.WAIT)) {
            // Then the contender takes the lease over well before the holder's hour is up
            assertThat(contender.decision()).isInstanceOf(Decision.Proceed.class);
            taken = contender.cross(zk.provider().verified());
        }
        // and the hung holder is fenced when it wakes
        Crossing late = holder.cross(zk.provider().verified());
        holder.close();

        assertThat(taken).isInstanceOfSatisfying(Crossing.Crossed.class, c -> assertThat(c.recorded()).isTrue());
        assertThat(late).isInstanceOfSatisfying(Crossing.Refused.class,
                r -> assertThat(r.stop().reason()).isIn(StopReason.FENCED, StopReason.SENT_VERIFIED));
        assertThat(zk.provider().ledger()).singleElement().satisfies(d -> assertThat(d.taskId()).isEqualTo("true-clock"));
    }
}
