package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import dev.oncegate.Attempt;
import dev.oncegate.Decision;
import dev.oncegate.Gate;
import dev.oncegate.KeyHistory;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SPEC §3/§4.8 and §9 "informed redelivery with exactly one executor": an operator's
 * authorization (the zkCli recipe: {@code create KEY/authorizations/after-<n> '{…}'}) opens one new scope on a
 * consumed key; it is used once.
 */
class InformedRedeliveryTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    static final int CONTENDERS = 6;

    @Test
    void authorizationOnUnknownKey_exactlyOneOfManyContendersRedeliversOnce() throws Exception {
        // Given a key consumed with send_status_unknown
        Worker first = zk.newWorker("task-a");
        try (Attempt a = first.gate().enter(zk.key())) {
            a.cross(zk.provider().unconfirmed());
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);

        // When an operator authorizes a redelivery (as with zkCli `create .../authorizations/after-0 '{…}'`)
        String auth = first.client().create().withMode(CreateMode.PERSISTENT)
                .forPath(zk.keyPath() + "/authorizations/after-0",
                        "{\"by\":\"alice\",\"reason\":\"customer confirmed nothing arrived\"}".getBytes(StandardCharsets.UTF_8));
        // and several contenders enter at once
        List<Gate> gates = new ArrayList<>();
        for (int i = 0; i < CONTENDERS; i++) {
            gates.add(zk.newGate("retry-" + i));
        }
        List<Race.Entry> entries = Race.of(gates).enter(zk.key(), Timing.WAIT, zk.provider().verified());

        // Then exactly one redelivery, in scope 1; the others stop sent
        assertThat(entries).filteredOn(e -> e.crossed() && e.decision() instanceof Decision.Proceed p && p.scope() == 1)
                .hasSize(1);
        assertThat(entries).filteredOn(e -> e.decision() instanceof Decision.StopSent).hasSize(CONTENDERS - 1);
        assertThat(zk.provider().deliveries()).isEqualTo(2);
        assertThat(zk.provider().ledger().get(1).scope()).isEqualTo(1);
        KeyHistory history = first.gate().inspect(zk.key().key());
        assertThat(Scenarios.outcomes(history)).containsExactly("send_status_unknown", "sent_verified");
        String authName = auth.substring(auth.lastIndexOf('/') + 1);
        assertThat(history.scopes().get(1).opened()).isEqualTo(authName);
        assertThat(history.authorizations()).singleElement().satisfies(a -> {
            assertThat(a.name()).isEqualTo(authName);
            assertThat(a.usedBy()).isEqualTo(1);
            assertThat(a.status()).isEqualTo(KeyHistory.AuthorizationStatus.USED);
            assertThat(a.by()).isEqualTo("alice");
        });

        // and the authorization is used up: later contenders stop
        try (Attempt late = zk.newWorker("late").gate().enter(zk.key())) {
            assertThat(late.decision()).isInstanceOf(Decision.StopSent.class);
        }
        assertThat(zk.provider().deliveries()).isEqualTo(2);
    }
}
