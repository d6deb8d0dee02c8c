package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.KeyHistory;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;

/**
 * SPEC §3/§4.8 and §9 "informed redelivery with exactly one executor": an operator's
 * authorization (the zkCli recipe: {@code create KEY/authorizations/after-<n> '{…}'}) opens one new scope on a
 * consumed key; it is used once.
 */
class InformedRedeliveryTest extends ServerScenario {

    static final int CONTENDERS = 6;

    @Test
    void authorizationOnUnknownKey_exactlyOneOfManyContendersRedeliversOnce() throws Exception {
        // Given a key consumed with send_status_unknown
        Worker first = worker("task-a");
        try (Attempt a = first.gate().enter(key)) {
            a.cross(provider.unconfirmed());
        }
        assertThat(provider.deliveries()).isEqualTo(1);

        // When an operator authorizes a redelivery (as with zkCli `create .../authorizations/after-0 '{…}'`)
        String auth = first.client().create().withMode(CreateMode.PERSISTENT)
                .forPath(keyPath() + "/authorizations/after-0",
                        "{\"by\":\"alice\",\"reason\":\"customer confirmed nothing arrived\"}".getBytes(StandardCharsets.UTF_8));
        // and several contenders enter at once
        List<Worker> workers = new ArrayList<>();
        for (int i = 0; i < CONTENDERS; i++) {
            workers.add(worker("retry-" + i));
        }
        ExecutorService pool = pool(CONTENDERS);
        CyclicBarrier start = new CyclicBarrier(CONTENDERS);
        List<Future<String>> results = new ArrayList<>();
        for (Worker w : workers) {
            results.add(pool.submit(() -> {
                start.await(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS);
                try (Attempt attempt = w.gate().enter(key, Timing.WAIT)) {
                    if (attempt.decision() instanceof Decision.Proceed p) {
                        return attempt.cross(provider.verified()) instanceof Crossing.Crossed ? "crossed@" + p.scope() : "refused";
                    }
                    return attempt.decision().kind();
                }
            }));
        }
        List<String> kinds = new ArrayList<>();
        for (Future<String> f : results) {
            kinds.add(f.get(Timing.EVENTUALLY.toMillis() * 2, TimeUnit.MILLISECONDS));
        }

        // Then exactly one redelivery, in scope 1; the others stop sent
        assertThat(kinds).filteredOn(k -> k.equals("crossed@1")).hasSize(1);
        assertThat(kinds).filteredOn(k -> k.equals("stop_sent")).hasSize(CONTENDERS - 1);
        assertThat(provider.deliveries()).isEqualTo(2);
        assertThat(provider.ledger().get(1).scope()).isEqualTo(1);
        KeyHistory history = first.gate().inspect(key.key());
        assertThat(history.scopes()).hasSize(2);
        assertThat(Scenarios.outcomeOf(history, 0)).isEqualTo("send_status_unknown");
        assertThat(Scenarios.outcomeOf(history, 1)).isEqualTo("sent_verified");
        String authName = auth.substring(auth.lastIndexOf('/') + 1);
        assertThat(history.scopes().get(1).opened()).isEqualTo(authName);
        assertThat(history.authorizations()).singleElement().satisfies(a -> {
            assertThat(a.name()).isEqualTo(authName);
            assertThat(a.usedBy()).isEqualTo(1);
            assertThat(a.status()).isEqualTo(KeyHistory.AuthorizationStatus.USED);
            assertThat(a.by()).isEqualTo("alice");
        });

        // and the authorization is used up: later contenders stop
        try (Attempt late = worker("late").gate().enter(key)) {
            assertThat(late.decision()).isInstanceOf(Decision.StopSent.class);
        }
        assertThat(provider.deliveries()).isEqualTo(2);
    }
}
