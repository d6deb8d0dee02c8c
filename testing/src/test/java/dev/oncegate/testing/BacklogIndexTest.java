package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.OncegateAcl;
import dev.oncegate.Operator;
import dev.oncegate.ScopeState;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The backlog index (issue 17 §5) against a real server: the protocol's own multis keep it (arming,
 * outcome, authorize, the authorized opening, reconcile, gc), it is only ever a hint (a forged entry
 * shows nothing, a removed one hides nothing from the walk, a forged entry cannot stop an arming), a
 * namespace of an older release without it works as before, and its ACLs are the roles'.
 */
class BacklogIndexTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    static String entry(String namespace, String kind, EffectKey key, int n) {
        return namespace + "/backlog/" + kind + "/" + key.key().charAt(0) + "/" + key.key() + (n < 0 ? "" : "-" + n);
    }

    String entry(String kind, EffectKey key, int n) {
        return entry(zk.namespace(), kind, key, n);
    }

    static Operator operator(CuratorFramework client, String namespace) {
        return Operator.builder(client).namespace(namespace).build();
    }

    Operator operator() {
        return operator(zk.newClient(), zk.namespace());
    }

    /** The keys {@link Operator#backlog} lists for {@code state} (null: the whole backlog). */
    static List<String> backlog(Operator operator, ScopeState state) throws InterruptedException {
        List<String> keys = new ArrayList<>();
        Operator.BacklogReport report = operator.backlog(new Operator.ListQuery(state, null, 0), s -> keys.add(s.key()));
        assertThat(report.indexed()).isTrue();
        return keys;
    }

    /** One crossing of {@code key} through {@code gate}, with {@code action} at the boundary. */
    static void cross(Gate gate, EffectKey key, dev.oncegate.BoundaryAction action) throws InterruptedException {
        try (Attempt a = gate.enter(key)) {
            a.cross(action);
        }
    }

    static boolean exists(CuratorFramework client, String path) throws Exception {
        return client.checkExists().forPath(path) != null;
    }

    @Test
    void arming_createsTheArmedEntry_andTheVerifiedOutcomeRemovesIt() throws Exception {
        // Given an executor inside its action (armed, no outcome yet)
        CuratorFramework client = zk.newClient();
        EffectKey key = zk.key();
        try (CrossingInFlight a = CrossingInFlight.start(zk.newGate("task-a"), key, zk.provider().verified())) {
            assertThat(a.awaitInAction(Timing.EVENTUALLY)).isTrue();

            // Then its armed entry exists and the backlog shows the key armed
            assertThat(exists(client, entry("armed", key, 0))).isTrue();
            assertThat(backlog(operator(), ScopeState.ARMED)).containsExactly(key.key());

            // When the action completes
            a.releaseAndAwait(Timing.EVENTUALLY);
        }

        // Then the outcome's multi removed the entry: the backlog is empty
        assertThat(exists(client, entry("armed", key, 0))).isFalse();
        assertThat(backlog(operator(), null)).isEmpty();
        assertThat(zk.provider().deliveriesOf(key.key())).isEqualTo(1);
    }

    @Test
    void unknownOutcome_movesTheEntryToUnknown_andReconcileRemovesIt() throws Exception {
        // Given a crossing whose outcome is unknown
        CuratorFramework client = zk.newClient();
        EffectKey key = zk.key();
        cross(zk.newGate("task-a"), key, zk.provider().unconfirmed());
        assertThat(exists(client, entry("armed", key, 0))).isFalse();
        assertThat(exists(client, entry("unknown", key, 0))).isTrue();
        assertThat(backlog(operator(), ScopeState.SEND_STATUS_UNKNOWN)).containsExactly(key.key());

        // When an operator reconciles it as delivered
        operator().reconcile(key.key(), "alice", "the channel shows it");

        // Then the entry is gone with it
        assertThat(exists(client, entry("unknown", key, 0))).isFalse();
        assertThat(backlog(operator(), null)).isEmpty();
    }

    /**
     * The outcome's multi removes the armed entry and creates the unknown one: when the armed entry
     * is already gone (removed by hand, or never made), only that op may be dropped, not the unknown
     * entry with it, or the one key an operator must look at is missing from the backlog until a walk.
     */
    @Test
    void unknownOutcome_whoseArmedEntryIsAlreadyGone_stillEntersTheUnknownEntry() throws Exception {
        // Given an executor inside its action, and its armed entry removed meanwhile
        CuratorFramework client = zk.newClient();
        EffectKey key = zk.key();
        try (CrossingInFlight a = CrossingInFlight.start(zk.newGate("task-a"), key, zk.provider().unconfirmed())) {
            assertThat(a.awaitInAction(Timing.EVENTUALLY)).isTrue();
            client.delete().forPath(entry("armed", key, 0));

            // When its outcome is recorded send_status_unknown
            assertThat(a.releaseAndAwait(Timing.EVENTUALLY)).isInstanceOfSatisfying(Crossing.Crossed.class,
                    c -> assertThat(c.recorded()).isTrue());
        }

        // Then the key is in the unknown backlog, from the index alone
        assertThat(exists(client, entry("unknown", key, 0))).isTrue();
        assertThat(backlog(operator(), ScopeState.SEND_STATUS_UNKNOWN)).containsExactly(key.key());
    }

    @Test
    void authorize_createsTheAuthorizedEntry_andTheRedeliveryRemovesItAndTheUnknownOne() throws Exception {
        // Given an unknown key, authorized for one redelivery
        CuratorFramework client = zk.newClient();
        EffectKey key = zk.key();
        cross(zk.newGate("task-a"), key, zk.provider().unconfirmed());
        operator().authorize(key.key(), 0, "alice", "the customer lost it");
        assertThat(exists(client, entry("authorized", key, 0))).isTrue();
        List<Operator.KeySummary> listed = new ArrayList<>();
        operator().backlog(Operator.ListQuery.all(), listed::add);
        assertThat(listed).singleElement().satisfies(s -> assertThat(s.unusedAuthorizations()).isEqualTo(1));

        // When the next contender opens scope 1 with it and delivers
        try (Attempt b = zk.newGate("task-b").enter(key)) {
            assertThat(b.decision().proceeds()).isTrue();
            b.cross(zk.provider().verified());
        }

        // Then the authorized and unknown entries of scope 0 went in the opening's multi
        assertThat(exists(client, entry("authorized", key, 0))).isFalse();
        assertThat(exists(client, entry("unknown", key, 0))).isFalse();
        assertThat(backlog(operator(), null)).isEmpty();
    }

    @Test
    void gc_removesTheEntriesOfTheKeysItRemoves() throws Exception {
        // Given an unknown key, whose entry is in the index
        CuratorFramework client = zk.newClient();
        EffectKey key = zk.key();
        cross(zk.newGate("task-a"), key, zk.provider().unconfirmed());
        assertThat(exists(client, entry("unknown", key, 0))).isTrue();

        // When retention removes it (no age limit)
        Operator.GcReport report = operator().gc(java.time.Duration.ZERO, false, e -> { });

        // Then its entry went with its records
        assertThat(report.removed()).isEqualTo(1);
        assertThat(exists(client, key.path(zk.namespace()))).isFalse();
        assertThat(exists(client, entry("unknown", key, 0))).isFalse();
    }

    @Test
    void namespaceOfAnOlderRelease_deliversAsBefore_listFallsBackToTheWalk_andInitAddsTheIndexThatTheWalkFills()
            throws Exception {
        // Given a namespace initialised before the index existed (its index removed, as an older init left it)
        CuratorFramework client = zk.newClient();
        client.delete().deletingChildrenIfNeeded().forPath(zk.namespace() + "/backlog");
        Gate gate = zk.newGate("task-a");
        EffectKey unknown = zk.newKey();
        EffectKey delivered = zk.newKey();

        // When gates deliver there
        cross(gate, unknown, zk.provider().unconfirmed());
        cross(gate, delivered, zk.provider().verified());

        // Then they delivered exactly as before, wrote no index, and the backlog read says it has none
        assertThat(zk.provider().deliveries()).isEqualTo(2);
        assertThat(operator().inspect(unknown.key()).state()).isEqualTo(ScopeState.SEND_STATUS_UNKNOWN);
        assertThat(exists(client, zk.namespace() + "/backlog")).isFalse();
        assertThat(operator().backlog(Operator.ListQuery.all(), s -> { }).indexed()).isFalse();

        // When init runs again (the upgrade step): the index appears, empty
        Gate.initialize(client, zk.namespace());
        assertThat(exists(client, entry("unknown", unknown, 0))).isFalse();
        assertThat(backlog(operator(), null)).isEmpty();

        // and the walk finds what came before, and repairs the index
        Operator.IndexCheck check = operator().checkIndex(true, s -> { });
        assertThat(check.indexed()).isTrue();
        assertThat(check.walk().scanned()).isEqualTo(2);
        assertThat(check.missing()).isEqualTo(1);
        assertThat(check.repaired()).isEqualTo(1);
        assertThat(backlog(operator(), ScopeState.SEND_STATUS_UNKNOWN)).containsExactly(unknown.key());

        // and the gate that started before the index writes entries from its next key on
        EffectKey next = zk.newKey();
        cross(gate, next, zk.provider().unconfirmed());
        assertThat(exists(client, entry("unknown", next, 0))).isTrue();
    }

    @Test
    void forgedEntries_showNothing_andCannotStopAnArming() throws Exception {
        // Given roles on, and a worker credential that forges entries: an armed entry for a delivered key,
        // and the armed entry of a key before its executor arms it
        RoleNamespace ns = RoleNamespace.create(zk);
        EffectKey delivered = zk.newKey();
        cross(ns.gate("task-a"), delivered, zk.provider().verified());
        EffectKey next = zk.newKey();
        CuratorFramework rogue = ns.client(RoleNamespace.WORKER);
        rogue.create().forPath(entry(ns.namespace(), "armed", delivered, 0));
        rogue.create().forPath(entry(ns.namespace(), "armed", next, 0));
        rogue.create().forPath(entry(ns.namespace(), "unknown", delivered, 7));

        // When the operator reads the backlog, and a worker delivers the second key
        List<String> listed = new ArrayList<>();
        Operator.BacklogReport report = ns.operator().backlog(Operator.ListQuery.all(), s -> listed.add(s.key()));
        Attempt b = ns.gate("task-b").enter(next);
        assertThat(b.decision().proceeds()).isTrue();
        b.cross(zk.provider().verified());
        b.close();

        // Then nothing forged is shown (each nominated key was read and is delivered), and the arming went through
        assertThat(listed).isEmpty();
        assertThat(report.stale()).isEqualTo(2); // the delivered key, and a key that did not exist yet
        assertThat(zk.provider().deliveriesOf(next.key())).isEqualTo(1);
        // and the operator's walk removes what the records contradict (the outcome's multi removed the third)
        Operator.IndexCheck check = ns.operator().checkIndex(true, s -> { });
        assertThat(check.stale()).isEqualTo(2);
        assertThat(check.repaired()).isEqualTo(2);
        assertThat(exists(ns.client(RoleNamespace.OPERATOR), entry(ns.namespace(), "armed", delivered, 0))).isFalse();
    }

    @Test
    void aRemovedEntry_hidesTheKeyFromTheIndexOnly_theWalkFindsAndRestoresIt() throws Exception {
        // Given roles on, an unknown key, and a worker credential that removes its entry
        RoleNamespace ns = RoleNamespace.create(zk);
        EffectKey key = zk.newKey();
        cross(ns.gate("task-a"), key, zk.provider().unconfirmed());
        ns.client(RoleNamespace.WORKER).delete().forPath(entry(ns.namespace(), "unknown", key, 0));
        assertThat(backlog(ns.operator(), null)).isEmpty(); // visibility lost, nothing else

        // When the operator's walk runs
        List<Operator.KeySummary> walked = new ArrayList<>();
        Operator.IndexCheck check = ns.operator().checkIndex(true, walked::add);

        // Then it counted the key as unknown all the same, found the entry missing, and put it back
        assertThat(walked).singleElement().satisfies(s -> assertThat(s.state()).isEqualTo(ScopeState.SEND_STATUS_UNKNOWN));
        assertThat(check.missing()).isEqualTo(1);
        assertThat(check.repaired()).isEqualTo(1);
        assertThat(backlog(ns.operator(), ScopeState.SEND_STATUS_UNKNOWN)).containsExactly(key.key());
        // and a new contender still stops on the key: the index decided nothing
        try (Attempt c = ns.gate("task-c").enter(key)) {
            assertThat(c.decision().proceeds()).isFalse();
        }
        assertThat(zk.provider().deliveriesOf(key.key())).isEqualTo(1);
    }

    @Test
    void unreadableRecord_theWalkEntersIt_theBacklogShowsIt_andTheWalkRemovesItOnceRepaired() throws Exception {
        // Given a key whose outcome record was damaged by hand
        CuratorFramework client = zk.newClient();
        EffectKey key = zk.key();
        cross(zk.newGate("task-a"), key, zk.provider().verified());
        byte[] outcome = client.getData().forPath(key.path(zk.namespace()) + "/0/armed/outcome");
        client.setData().forPath(key.path(zk.namespace()) + "/0/armed/outcome", "{garbage".getBytes(StandardCharsets.UTF_8));
        assertThat(backlog(operator(), null)).isEmpty(); // no writer could have entered it

        // When the walk meets it
        Operator.IndexCheck check = operator().checkIndex(false, s -> { });

        // Then it entered it (readers do, whatever repair says), and the backlog lists it with its problem
        assertThat(check.walk().unreadable()).isEqualTo(1);
        assertThat(exists(client, entry("unreadable", key, -1))).isTrue();
        List<Operator.KeySummary> listed = new ArrayList<>();
        Operator.BacklogReport report = operator().backlog(new Operator.ListQuery(ScopeState.SEND_STATUS_UNKNOWN, null, 0),
                listed::add);
        assertThat(listed).singleElement().satisfies(s -> {
            assertThat(s.state()).isNull();
            assertThat(s.problem()).isNotBlank();
        });
        assertThat(report.unreadable()).isEqualTo(1);

        // When an admin repairs the record and the walk runs again
        client.setData().forPath(key.path(zk.namespace()) + "/0/armed/outcome", outcome);
        Operator.IndexCheck again = operator().checkIndex(true, s -> { });

        // Then the entry went with the problem
        assertThat(again.walk().unreadable()).isZero();
        assertThat(again.stale()).isEqualTo(1);
        assertThat(exists(client, entry("unreadable", key, -1))).isFalse();
    }

    @Test
    void rolesOn_theIndexHasTheRolesAcls_workersMayNotRemoveABucket_andDoctorFindsNothingAmiss() throws Exception {
        // Given a namespace initialised with roles, and an unknown key in it
        RoleNamespace ns = RoleNamespace.create(zk);
        EffectKey key = zk.newKey();
        cross(ns.gate("task-a"), key, zk.provider().unconfirmed());

        // Then a worker may not remove a bucket (only entries), an operator may read the index,
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ns.client(RoleNamespace.WORKER).delete()
                .forPath(ns.namespace() + "/backlog/armed/0")).isInstanceOf(KeeperException.NoAuthException.class);
        assertThat(backlog(ns.operator(), ScopeState.SEND_STATUS_UNKNOWN)).containsExactly(key.key());
        // and the admin's health check finds every znode, the index's included, with its role ACL
        dev.oncegate.Checkup checkup = ns.admin().checkup(OncegateAcl.digest(RoleNamespace.ADMIN));
        assertThat(checkup.acls().znodes()).isGreaterThan(69);
        assertThat(checkup.acls().differing()).as("%s", checkup.acls().examples()).isZero();
    }
}
