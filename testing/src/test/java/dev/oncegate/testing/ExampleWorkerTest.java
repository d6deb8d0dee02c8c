package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The test a user writes for their own worker, exactly as the README shows it: the kit's
 * extension gives a real ZooKeeper, the recording provider counts deliveries, a pause point
 * holds the executor past its lease, and the checker judges the history.
 */
class ExampleWorkerTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    /** The worker under test: sends the report unless the fleet already did. */
    static Decision sendReport(Gate gate, EffectKey report, RecordingProvider slack, PausePoint pause) throws Exception {
        try (Attempt attempt = gate.enter(report, Duration.ofSeconds(20))) {
            if (attempt.decision() instanceof Decision.Proceed) {
                pause.reached(); // e.g. a long GC pause right before the upload
                Crossing crossing = attempt.cross(slack.verified());
                return crossing instanceof Crossing.Refused refused ? refused.stop() : attempt.decision();
            }
            return attempt.decision();
        }
    }

    @Test
    void pausedSibling_isFenced_andTheReportIsDeliveredOnce() throws Exception {
        // Given two sibling workers with a 2 s lease, and the first executor paused before its upload
        RecordingProvider slack = new RecordingProvider();
        EffectKey report = EffectKey.of(Destination.stable("slack", "C024BE91L"), "Q3 report".getBytes(StandardCharsets.UTF_8));
        Gate a = zk.newGate("sibling-a", b -> b.leaseTtl(Duration.ofSeconds(2)));
        Gate b = zk.newGate("sibling-b", b2 -> b2.leaseTtl(Duration.ofSeconds(2)));
        PausePoint pause = new PausePoint();
        CompletableFuture<Decision> first = CompletableFuture.supplyAsync(() -> call(() -> sendReport(a, report, slack, pause)));
        assertThat(pause.awaitReached(Duration.ofSeconds(20))).isTrue();

        // When the second sibling takes the lapsed lease over and delivers, then the first wakes up
        Decision second = sendReport(b, report, slack, PausePoint.none());
        pause.release();

        // Then exactly one delivery, the paused executor was refused, and the history is safe
        assertThat(second).isInstanceOf(Decision.Proceed.class);
        assertThat(first.get()).isNotInstanceOf(Decision.Proceed.class);
        assertThat(slack.deliveries()).isEqualTo(1);
        try (Gate reader = zk.newGate("auditor")) {
            AtMostOnceChecker.Verdict verdict = AtMostOnceChecker.check(List.of(reader.inspect(report.key())),
                    slack.ledger(), true);
            assertThat(verdict.violations()).isEmpty();
            assertThat(verdict.outcomes()).containsEntry("sent_verified", 1);
        }
    }

    @Test
    void waitingSiblingsSessionExpiresOnTheServer_itStillLearnsTheOutcome_oneDelivery() throws Exception {
        // Given sibling A elected and paused before its upload, and sibling B waiting for it
        RecordingProvider slack = new RecordingProvider();
        EffectKey report = EffectKey.of(Destination.stable("slack", "C024BE91L"), "Q4 report".getBytes(StandardCharsets.UTF_8));
        Gate a = zk.newGate("sibling-a");
        Worker b = zk.newWorker("sibling-b");
        PausePoint pause = new PausePoint();
        CompletableFuture<Decision> first = CompletableFuture.supplyAsync(() -> call(() -> sendReport(a, report, slack, pause)));
        assertThat(pause.awaitReached(Duration.ofSeconds(20))).isTrue();
        CompletableFuture<Decision> waiter = CompletableFuture.supplyAsync(
                () -> call(() -> sendReport(b.gate(), report, slack, PausePoint.none())));

        // When the server expires B's session while it waits, and A goes on
        Faults.expireSession(b.client(), Duration.ofSeconds(5));
        pause.release();

        // Then A delivered, B learned it (stop_sent), and there was one delivery
        assertThat(first.get()).isInstanceOf(Decision.Proceed.class);
        assertThat(waiter.get()).isInstanceOf(Decision.StopSent.class);
        assertThat(slack.deliveries()).isEqualTo(1);
    }

    private interface Step<T> {
        T run() throws Exception;
    }

    private static <T> T call(Step<T> step) {
        try {
            return step.run();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
