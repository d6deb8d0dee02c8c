package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** The kit's race helper without a server: all contenders start together; failures name the contender. */
class RaceTest {

    @Test
    void together_startsEveryCallBeforeAnyFinishes_andReturnsResultsInOrder() throws Exception {
        // Given three calls that each finish only once all three have started
        CountDownLatch started = new CountDownLatch(3);
        // When they race
        List<Integer> results = Race.together(
                () -> waitForAll(started, 1), () -> waitForAll(started, 2), () -> waitForAll(started, 3));
        // Then each saw the others start, and the results keep the calls' order
        assertThat(results).containsExactly(1, 2, 3);
    }

    @Test
    void together_aFailingCall_failsTheRaceNamingItsPosition() {
        assertThatThrownBy(() -> Race.together(() -> "fine", () -> {
            throw new IOException("provider down");
        })).isInstanceOf(IllegalStateException.class).hasMessageContaining("contender 1")
                .hasRootCauseInstanceOf(IOException.class);
    }

    private static int waitForAll(CountDownLatch started, int result) throws InterruptedException {
        started.countDown();
        if (!started.await(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("the other contenders never started");
        }
        return result;
    }
}
