package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;

/**
 * What contenders leave behind: no election nodes once their attempts end (interrupted ones
 * included), and on a consumed key only the permanent znodes of SPEC §6, compact.
 */
class ContenderHygieneTest extends ServerScenario {

    @Test
    void interruptedWaiter_leavesTheElectionAndNeverDelivers() throws Exception {
        // Given A holds the lease and B waits on another thread
        Worker a = worker("task-a");
        Worker b = worker("task-b");
        Attempt attemptA = track(a.gate().enter(key));
        ExecutorService pool = pool(1);
        Future<Attempt> enteredB = Scenarios.enterAsync(pool, b.gate(), key, Timing.WAIT);
        Scenarios.eventually("B waits in the election", () -> Scenarios.latchMembers(a.client(), keyPath(), 0) == 2);

        // When B's thread is interrupted
        pool.shutdownNow();

        // Then B's enter ends with InterruptedException and B's latch node goes away
        assertThatThrownBy(() -> enteredB.get(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS))
                .hasCauseInstanceOf(InterruptedException.class);
        Scenarios.eventually("B left the election", () -> Scenarios.latchMembers(a.client(), keyPath(), 0) == 1);
        // and A still crosses alone
        assertThat(attemptA.cross(provider.verified())).isInstanceOf(Crossing.Crossed.class);
        assertThat(provider.deliveries()).isEqualTo(1);
    }

    @Test
    void consumedKey_leavesOnlyPermanentCompactZnodesAndNoElectionNodes() throws Exception {
        // Given four contenders on one key: one delivers, three stop
        List<Worker> workers = List.of(worker("w0"), worker("w1"), worker("w2"), worker("w3"));
        ExecutorService pool = pool(4);
        List<Future<String>> results = workers.stream().map(w -> pool.submit(() -> {
            try (Attempt attempt = w.gate().enter(key, Timing.WAIT)) {
                if (attempt.decision() instanceof Decision.Proceed) {
                    return attempt.cross(provider.verified()) instanceof Crossing.Crossed ? "crossed" : "refused";
                }
                return attempt.decision().kind();
            }
        })).toList();
        for (Future<String> f : results) {
            f.get(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS);
        }
        assertThat(provider.deliveries()).isEqualTo(1);

        // Then no election node is left (the latch parent is a container the server reaps)
        var client = workers.get(0).client();
        Scenarios.eventually("no latch nodes left", () -> Scenarios.latchMembers(client, keyPath(), 0) == 0);
        // and the key holds exactly the permanent records, each compact
        assertThat(client.getChildren().forPath(keyPath())).containsExactlyInAnyOrder("0", "authorizations");
        String armed = Scenarios.armedNode(client, keyPath() + "/0");
        assertThat(armed).isNotNull();
        String armedName = armed.substring(armed.lastIndexOf('/') + 1);
        assertThat(client.getChildren().forPath(keyPath() + "/0")).contains(armedName, "outcome")
                .isSubsetOf(armedName, "outcome", "latch");
        for (String path : List.of(keyPath(), keyPath() + "/authorizations", keyPath() + "/0",
                armed, keyPath() + "/0/outcome")) {
            Stat stat = client.checkExists().forPath(path);
            assertThat(stat.getEphemeralOwner()).as(path + " is persistent").isZero();
            assertThat(stat.getDataLength()).as(path + " is compact").isLessThan(1024);
        }
    }
}
