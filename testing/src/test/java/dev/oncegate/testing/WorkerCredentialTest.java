package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import dev.oncegate.KeyHistory;
import dev.oncegate.StopReason;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The worst a stolen worker credential can do to other contenders is make them stop (the README's
 * "Threat model"). With roles on, the worker credential may create znodes under a key and its
 * scopes and write a scope's data; each test here uses exactly that power, as a rogue holding it
 * would, at the moment it hurts most, and checks the ledger: honest contenders never deliver in a
 * scope that was not legitimately opened, and a scope that may have been delivered never reads
 * {@code not_sent}.
 */
class WorkerCredentialTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    RoleNamespace roles;
    /** The rogue: a client holding the worker credential, and nothing else. */
    CuratorFramework rogue;
    EffectKey key;
    String keyPath;

    @BeforeEach
    void rolesOn() throws Exception {
        roles = RoleNamespace.create(zk);
        rogue = roles.client(RoleNamespace.WORKER);
        key = zk.newKey();
        keyPath = roles.keyPath(key);
    }

    /** The rogue creates the key's bucket levels (as any worker entering a new key does). */
    void bucketsByTheRogue() throws Exception {
        rogue.create().creatingParentsIfNeeded().forPath(keyPath.substring(0, keyPath.lastIndexOf('/')));
    }

    void deliverOnce(String task) throws InterruptedException {
        try (Attempt a = roles.gate(task).enter(key)) {
            assertThat(a.decision().proceeds()).as("%s", a.decision()).isTrue();
            assertThat(a.cross(zk.provider().verified())).isInstanceOf(Crossing.Crossed.class);
        }
    }

    Decision decisionOf(String task) throws InterruptedException {
        try (Attempt a = roles.gate(task).enter(key)) {
            if (a.decision().proceeds()) {
                a.cross(zk.provider().verified());
            }
            return a.decision();
        }
    }

    /** The records' judgement of {@code scope}, as an operator reads them (null: unreadable). */
    KeyHistory inspect() throws InterruptedException {
        return roles.operator().inspect(key.key());
    }

    @Test
    void scopeOpenedByHand_onADeliveredKey_stopsTheNextWorker_andNothingIsDeliveredAgain() throws Exception {
        // Given the key was delivered and verified in scope 0
        deliverOnce("task-a");
        // When the rogue creates scope 1 by hand, as if a not_sent or an authorization had opened it
        rogue.create().withMode(CreateMode.PERSISTENT).forPath(keyPath + "/1", RoleNamespace.openScope("not_sent:0"));

        // Then the next worker stops, naming the scope that was not legitimately opened
        Decision next = decisionOf("task-b");
        assertThat(next).isInstanceOfSatisfying(Decision.StopUnavailable.class, s -> {
            assertThat(s.reason()).isEqualTo(StopReason.UNREADABLE_RECORD);
            assertThat(s.evidence().path()).isEqualTo(keyPath + "/1");
            assertThat(s.evidence().detail()).contains("opened neither by a not_sent");
        });
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(inspect().unreadable()).anySatisfy(u -> assertThat(u.path()).isEqualTo(keyPath + "/1"));
    }

    @Test
    void scopeUnarmedByHand_whileTheExecutorDelivers_theNextWorkerStops_andTheExecutorsOutcomeIsRecorded()
            throws Exception {
        // Given A armed scope 0 and is inside its action
        try (CrossingInFlight a = CrossingInFlight.start(roles.gate("task-a"), key, zk.provider().verified())) {
            assertThat(a.awaitInAction(Timing.EVENTUALLY)).isTrue();
            // When the rogue sets scope 0's data back to open (no holder, no armed flag)
            rogue.setData().forPath(keyPath + "/0", RoleNamespace.openScope("initial"));

            // Then B, entering now, does not proceed: scope 0 is armed by its immutable armed record
            Decision b = decisionOf("task-b");
            assertThat(b).isInstanceOfSatisfying(Decision.StopUnknown.class,
                    s -> assertThat(s.reason()).isEqualTo(StopReason.ARMED_WITHOUT_OUTCOME));
            // and A's outcome, bound to its armed record and not to the scope's data, is recorded
            assertThat(a.releaseAndAwait(Timing.EVENTUALLY))
                    .isInstanceOfSatisfying(Crossing.Crossed.class, c -> assertThat(c.recorded()).isTrue());
        }
        assertThat(decisionOf("task-c")).isInstanceOf(Decision.StopSent.class);
        assertThat(zk.provider().ledger()).extracting(RecordingProvider.Delivery::taskId).containsExactly("task-a");
    }

    @Test
    void forgedNotSentOutcome_onAScopeBeingDelivered_opensNothing_andReadsUnreadableNotNotSent() throws Exception {
        // Given A armed scope 0 and is inside its action
        try (CrossingInFlight a = CrossingInFlight.start(roles.gate("task-a"), key, zk.provider().verified())) {
            assertThat(a.awaitInAction(Timing.EVENTUALLY)).isTrue();
            // When the rogue writes a not_sent outcome for scope 0 and opens scope 1 with it, in one multi as A would
            rogue.transaction().forOperations(
                    rogue.transactionOp().setData().withVersion(0).forPath(keyPath + "/0/armed/outcome",
                            RoleNamespace.forgedOutcome("not_sent")),
                    rogue.transactionOp().create().forPath(keyPath + "/1", RoleNamespace.openScope("not_sent:0")));

            // Then B stops: the outcome does not reveal the secret A's armed record committed to
            Decision b = decisionOf("task-b");
            assertThat(b).isInstanceOfSatisfying(Decision.StopUnavailable.class,
                    s -> assertThat(s.reason()).isEqualTo(StopReason.UNREADABLE_RECORD));
            // and A delivers; its own outcome can no longer be written (the forged one was the outcome's one write)
            assertThat(a.releaseAndAwait(Timing.EVENTUALLY))
                    .isInstanceOfSatisfying(Crossing.Crossed.class, c -> assertThat(c.recorded()).isFalse());
        }
        assertThat(decisionOf("task-c")).isInstanceOf(Decision.StopUnavailable.class);
        assertThat(zk.provider().ledger()).extracting(RecordingProvider.Delivery::taskId).containsExactly("task-a");
        // and no reader takes scope 0, possibly delivered, for not_sent
        KeyHistory h = inspect();
        assertThat(h.scopes().get(0).state()).isNull();
        assertThat(h.unreadable()).anySatisfy(u -> assertThat(u.problem()).contains("secret"));
    }

    @Test
    void forgedNotSentOutcome_beforeTheLeaseHolderArms_opensNothing_andTheHolderDeliversOnce() throws Exception {
        // Given A holds scope 0's lease and has not armed yet
        try (Attempt a = roles.gate("task-a").enter(key)) {
            assertThat(a.decision().proceeds()).isTrue();
            // When the rogue writes a not_sent outcome on the unarmed scope (where records before schema 4 kept
            // it) and opens scope 1 with it
            rogue.transaction().forOperations(
                    rogue.transactionOp().create().forPath(keyPath + "/0/outcome", RoleNamespace.forgedOutcome("not_sent")),
                    rogue.transactionOp().create().forPath(keyPath + "/1", RoleNamespace.openScope("not_sent:0")));

            // Then B stops (an outcome on a scope never armed proves nothing), and A still crosses once
            assertThat(decisionOf("task-b")).isInstanceOf(Decision.StopUnavailable.class);
            assertThat(a.cross(zk.provider().verified())).isInstanceOf(Crossing.Crossed.class);
        }
        assertThat(decisionOf("task-c")).isInstanceOf(Decision.StopUnavailable.class);
        assertThat(zk.provider().ledger()).extracting(RecordingProvider.Delivery::taskId).containsExactly("task-a");
    }

    @Test
    void armedRecordForgedOnAnOpenScope_theLeaseHolderCannotArm_andNobodyDelivers() throws Exception {
        // Given A holds scope 0's lease
        try (Attempt a = roles.gate("task-a").enter(key)) {
            assertThat(a.decision().proceeds()).isTrue();
            // When the rogue creates scope 0's armed record itself
            rogue.create().forPath(keyPath + "/0/armed", "{}".getBytes());

            // Then A's arming meets it: nothing is invoked
            Crossing crossing = a.cross(zk.provider().verified());
            assertThat(crossing).isInstanceOfSatisfying(Crossing.Refused.class,
                    r -> assertThat(r.stop()).isInstanceOf(Decision.StopUnavailable.class));
        }
        assertThat(zk.provider().deliveries()).isZero();
    }

    @Test
    void keyCreatedByTheRogueWithWorldWritableAcls_theRecordsAnHonestExecutorWritesThereCannotBeRemoved()
            throws Exception {
        // Given the rogue created the key first, the key and its scope 0 with ACLs anyone may delete under
        bucketsByTheRogue();
        rogue.transaction().forOperations(
                rogue.transactionOp().create().withACL(RoleNamespace.worldWritable()).forPath(keyPath, RoleNamespace.keyRecord(key)),
                rogue.transactionOp().create().forPath(keyPath + "/authorizations"),
                rogue.transactionOp().create().withACL(RoleNamespace.worldWritable())
                        .forPath(keyPath + "/0", RoleNamespace.openScope("initial")));
        // and an honest worker delivered in scope 0
        deliverOnce("task-a");

        // When the rogue tries to erase that delivery: the outcome, the armed record, the scope
        CuratorFramework anyone = zk.newClient();
        for (String path : new String[] {keyPath + "/0/armed/outcome", keyPath + "/0/armed", keyPath + "/0"}) {
            assertThatThrownBy(() -> anyone.delete().forPath(path)).as(path)
                    .isInstanceOfAny(KeeperException.NoAuthException.class, KeeperException.NotEmptyException.class);
        }
        // and writes scope 0's data back to open
        rogue.setData().forPath(keyPath + "/0", RoleNamespace.openScope("initial"));

        // Then the records stand (the arming executor wrote them with their role ACLs, and an armed record
        // is never empty), and the next worker stops on the delivery
        assertThat(decisionOf("task-b")).isInstanceOf(Decision.StopSent.class);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
    }

    @Test
    void operatorReconcilesAnArmedScope_withRolesOn_andTheExecutorsLateNotSentIsNotRecorded() throws Exception {
        // Given A armed scope 0 and is inside an action that will prove not_sent
        try (CrossingInFlight a = CrossingInFlight.start(roles.gate("task-a"), key, zk.provider().rejects("rejected"))) {
            assertThat(a.awaitInAction(Timing.EVENTUALLY)).isTrue();
            // When the operator (its own credential) reconciles the scope as delivered
            assertThat(roles.operator().reconcile(key.key(), "alice", "the file is in the channel").created()).isTrue();

            // Then A's not_sent can no longer be recorded, and nothing reopens
            assertThat(a.releaseAndAwait(Timing.EVENTUALLY))
                    .isInstanceOfSatisfying(Crossing.Crossed.class, c -> assertThat(c.recorded()).isFalse());
        }
        assertThat(decisionOf("task-b")).isInstanceOf(Decision.StopSent.class);
        assertThat(rogue.checkExists().forPath(keyPath + "/1")).isNull();
        assertThat(zk.provider().deliveries()).isZero();
    }

    @Test
    void authorizationForgedUnderAWorldWritableAuthorizationsZnode_isNotHonoured() throws Exception {
        // Given the rogue created the key first, with an authorizations znode anyone may create under
        // (and a scope 0 with its proper role ACL, so that an honest worker delivers in it)
        keyByTheRogueWithWorldWritableAuthorizations();
        deliverOnce("task-a");
        // When the rogue writes a redelivery authorization for scope 0 there
        rogue.create().forPath(keyPath + "/authorizations/after-0",
                "{\"by\":\"alice\",\"reason\":\"resend\"}".getBytes());

        // Then inspect says a new attempt would stop, and the next worker does stop instead of opening scope 1
        KeyHistory before = inspect();
        assertThat(before.nextStop()).as(before.nextAttempt()).isNotNull();
        assertThat(before.nextStop().reason()).isEqualTo(StopReason.UNREADABLE_RECORD);
        assertThat(before.nextAttempt()).contains("not only operators may create");
        Decision next = decisionOf("task-b");
        assertThat(next).isInstanceOfSatisfying(Decision.StopUnavailable.class, s -> {
            assertThat(s.reason()).isEqualTo(StopReason.UNREADABLE_RECORD);
            assertThat(s.evidence().detail()).contains("not only operators may create");
        });
        assertThat(rogue.checkExists().forPath(keyPath + "/1")).isNull();
        assertThat(zk.provider().deliveries()).isEqualTo(1);
    }
    /** The roles this test's namespace was initialised with, as `oncegate acl` names them again (a rotation to the same). */
    static dev.oncegate.Genesis.Roles sameRoles() {
        return new dev.oncegate.Genesis.Roles(dev.oncegate.OncegateAcl.digest(RoleNamespace.WORKER),
                dev.oncegate.OncegateAcl.digest(RoleNamespace.OPERATOR), dev.oncegate.OncegateAcl.digest(RoleNamespace.ADMIN));
    }

    static org.apache.zookeeper.data.Id digestId(String credentials) {
        return new org.apache.zookeeper.data.Id("digest", dev.oncegate.OncegateAcl.digest(credentials));
    }

    /** The key's authorizations znode created by the rogue, world-writable, with scope 0 as an honest worker would find it. */
    void keyByTheRogueWithWorldWritableAuthorizations() throws Exception {
        bucketsByTheRogue();
        rogue.transaction().forOperations(
                rogue.transactionOp().create().forPath(keyPath, RoleNamespace.keyRecord(key)),
                rogue.transactionOp().create().withACL(RoleNamespace.worldWritable()).forPath(keyPath + "/authorizations"),
                rogue.transactionOp().create().forPath(keyPath + "/0", RoleNamespace.openScope("initial")));
    }

    @Test
    void aclRepair_ofAnAuthorizationsZnodeHoldingAForgery_leavesItRefused_andSaysWhatToDo() throws Exception {
        // Given the rogue's world-writable authorizations znode, a delivery in scope 0, and after-0 forged there,
        // which the next worker refuses
        keyByTheRogueWithWorldWritableAuthorizations();
        deliverOnce("task-a");
        rogue.create().forPath(keyPath + "/authorizations/after-0", "{\"by\":\"alice\",\"reason\":\"resend\"}".getBytes());
        assertThat(decisionOf("task-b").proceeds()).isFalse();

        // When the admin runs `oncegate acl` (a rotation, or the repair the stop's message points at)
        java.util.List<String> changed = new java.util.ArrayList<>();
        assertThatThrownBy(() -> roles.admin().applyRoles(sameRoles(), changed::add))
                .isInstanceOf(dev.oncegate.OncegateException.class)
                .hasMessageContaining(keyPath + "/authorizations")
                .hasMessageContaining("after-");

        // Then that znode keeps its ACL, so the forgery stays refused: the next worker stops, and nothing is delivered again
        assertThat(changed).doesNotContain(keyPath + "/authorizations");
        Decision next = decisionOf("task-c");
        assertThat(next).isInstanceOfSatisfying(Decision.StopUnavailable.class, s -> {
            assertThat(s.reason()).isEqualTo(StopReason.UNREADABLE_RECORD);
            assertThat(s.evidence().detail()).contains("not only operators may create");
        });
        assertThat(inspect().nextStop()).as(inspect().nextAttempt()).isNotNull();
        assertThat(rogue.checkExists().forPath(keyPath + "/1")).isNull();
        assertThat(zk.provider().deliveries()).isEqualTo(1);
    }

    @Test
    void aclRepair_ofAnEmptyWorldWritableAuthorizationsZnode_replacesIt_soOnlyAnOperatorAuthorizes() throws Exception {
        // Given the rogue's world-writable authorizations znode, still empty, and a delivery in scope 0
        keyByTheRogueWithWorldWritableAuthorizations();
        deliverOnce("task-a");

        // When the admin runs `oncegate acl`
        java.util.List<String> changed = new java.util.ArrayList<>();
        roles.admin().applyRoles(sameRoles(), changed::add);

        // Then the znode has its role ACL: the rogue can no longer create there, and an operator's authorization opens scope 1
        assertThat(changed).contains(keyPath + "/authorizations");
        assertThatThrownBy(() -> rogue.create().forPath(keyPath + "/authorizations/after-0", "{}".getBytes()))
                .isInstanceOf(KeeperException.NoAuthException.class);
        assertThat(roles.operator().authorize(key.key(), 0, "alice", "the customer lost the file").created()).isTrue();
        assertThat(decisionOf("task-b").proceeds()).isTrue();
        assertThat(zk.provider().deliveries()).isEqualTo(2);
    }
    @Test
    void aclRepair_ofAnAuthorizationsZnodeAnInventedIdentityMayCreateUnder_leavesItRefused() throws Exception {
        // Given the rogue's key whose authorizations znode lets an identity it invented create there (the roles' last
        // `acl` having finished), a delivery in scope 0, and after-0 made by that identity, which the next worker refuses
        bucketsByTheRogue();
        String invented = "mallory:m-s3cret";
        int read = org.apache.zookeeper.ZooDefs.Perms.READ;
        int create = org.apache.zookeeper.ZooDefs.Perms.CREATE;
        java.util.List<org.apache.zookeeper.data.ACL> acl = java.util.List.of( // the role ACL, and one identity more
                new org.apache.zookeeper.data.ACL(read, digestId(RoleNamespace.WORKER)),
                new org.apache.zookeeper.data.ACL(read | create, digestId(RoleNamespace.OPERATOR)),
                new org.apache.zookeeper.data.ACL(org.apache.zookeeper.ZooDefs.Perms.ALL, digestId(RoleNamespace.ADMIN)),
                new org.apache.zookeeper.data.ACL(read | create, digestId(invented)));
        rogue.transaction().forOperations(
                rogue.transactionOp().create().forPath(keyPath, RoleNamespace.keyRecord(key)),
                rogue.transactionOp().create().withACL(acl).forPath(keyPath + "/authorizations"),
                rogue.transactionOp().create().forPath(keyPath + "/0", RoleNamespace.openScope("initial")));
        deliverOnce("task-a");
        roles.client(invented).create().withACL(org.apache.zookeeper.ZooDefs.Ids.READ_ACL_UNSAFE)
                .forPath(keyPath + "/authorizations/after-0", "{\"by\":\"alice\",\"reason\":\"resend\"}".getBytes());
        assertThat(decisionOf("task-b").proceeds()).isFalse();

        // When the admin runs `oncegate acl`
        assertThatThrownBy(() -> roles.admin().applyRoles(sameRoles(), path -> { }))
                .isInstanceOf(dev.oncegate.OncegateException.class).hasMessageContaining(keyPath + "/authorizations");

        // Then the forgery stays refused, and nothing is delivered again
        assertThat(decisionOf("task-c")).isInstanceOfSatisfying(Decision.StopUnavailable.class,
                s -> assertThat(s.reason()).isEqualTo(StopReason.UNREADABLE_RECORD));
        assertThat(zk.provider().deliveries()).isEqualTo(1);
    }

    @Test
    void aclRepair_afterARotationThatStoppedHalfway_givesTheOperatorsAuthorizationsTheirNewAcl_andTheyAreHonoured() throws Exception {
        // Given a key delivered, and a redelivery an operator authorized: its authorizations znode has these roles' ACL
        deliverOnce("task-a");
        assertThat(roles.operator().authorize(key.key(), 0, "alice", "the customer lost the file").created()).isTrue();
        // and an `acl` naming a new operator password that stopped after naming it in the genesis (its first step),
        // before it reached that znode or set the genesis' own ACL (its last)
        String newOperator = "ops:o-n3w";
        dev.oncegate.Genesis.Roles rotated = new dev.oncegate.Genesis.Roles(dev.oncegate.OncegateAcl.digest(RoleNamespace.WORKER),
                dev.oncegate.OncegateAcl.digest(newOperator), dev.oncegate.OncegateAcl.digest(RoleNamespace.ADMIN));
        CuratorFramework admin = roles.client(RoleNamespace.ADMIN);
        String genesis = roles.namespace() + "/genesis";
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        com.fasterxml.jackson.databind.node.ObjectNode g = (com.fasterxml.jackson.databind.node.ObjectNode) json.readTree(
                admin.getData().forPath(genesis));
        g.putObject("roles").put("worker", rotated.worker()).put("operator", rotated.operator()).put("admin", rotated.admin());
        admin.setData().forPath(genesis, json.writeValueAsBytes(g));

        // When the admin runs that `acl` again
        roles.admin().applyRoles(rotated, path -> { });

        // Then the operator's authorization was not taken for a forgery: it opens scope 1, once
        assertThat(decisionOf("task-b").proceeds()).isTrue();
        assertThat(zk.provider().deliveries()).isEqualTo(2);
        assertThat(decisionOf("task-c").proceeds()).isFalse();
        assertThat(zk.provider().deliveries()).isEqualTo(2);
    }
    @Test
    void aKeyLockedByTheWorkerCredential_isReportedUnreadable_andListGcAndTheIndexWalkGoOnPastIt() throws Exception {
        // Given a delivered key, and a key the rogue created with an ACL of its own alone, in a bucket that sorts first
        deliverOnce("task-a");
        String locked = roles.namespace() + "/keys/00/00/" + "0".repeat(64);
        rogue.create().creatingParentsIfNeeded().forPath(roles.namespace() + "/keys/00/00");
        rogue.create().withACL(java.util.List.of(new org.apache.zookeeper.data.ACL(org.apache.zookeeper.ZooDefs.Perms.ALL,
                digestId(RoleNamespace.WORKER)))).forPath(locked);
        // and an index entry the rogue made to nominate it as send_status_unknown (the worker may create entries)
        rogue.create().forPath(roles.namespace() + "/backlog/unknown/0/" + "0".repeat(64) + "-0");
        dev.oncegate.Operator admin = roles.admin();
        java.util.List<dev.oncegate.Operator.KeySummary> backlog = new java.util.ArrayList<>();
        dev.oncegate.Operator.BacklogReport fromIndex = admin.backlog(dev.oncegate.Operator.ListQuery.all(), backlog::add);
        assertThat(fromIndex.unreadable()).isEqualTo(1);
        assertThat(backlog).extracting(dev.oncegate.Operator.KeySummary::key).containsExactly("0".repeat(64));

        // When the admin lists every key, walks the index and runs gc with no retention at all
        java.util.List<dev.oncegate.Operator.KeySummary> listed = new java.util.ArrayList<>();
        dev.oncegate.Operator.ListReport list = admin.list(dev.oncegate.Operator.ListQuery.all(), listed::add);
        java.util.List<dev.oncegate.Operator.KeySummary> walked = new java.util.ArrayList<>();
        admin.checkIndex(false, walked::add);
        java.util.List<dev.oncegate.Operator.GcEntry> collected = new java.util.ArrayList<>();
        admin.gc(java.time.Duration.ZERO, false, collected::add);

        // Then each walk reports the locked key as unreadable, saying why, and goes on to the delivered one, which gc removes
        assertThat(list.unreadable()).isEqualTo(1);
        assertThat(listed).extracting(dev.oncegate.Operator.KeySummary::key).contains("0".repeat(64), key.key());
        assertThat(listed).filteredOn(k -> k.key().equals("0".repeat(64))).singleElement()
                .satisfies(k -> assertThat(k.problem()).contains("may not read"));
        assertThat(walked).extracting(dev.oncegate.Operator.KeySummary::key).contains("0".repeat(64), key.key());
        assertThat(collected).filteredOn(e -> e.key().equals(key.key())).singleElement()
                .satisfies(e -> assertThat(e.removed()).isTrue());
        assertThat(rogue.checkExists().forPath(keyPath)).isNull();
        assertThat(rogue.checkExists().forPath(locked)).isNotNull();
    }
    @Test
    void aBucketLockedByTheWorkerCredential_failsTheWalkNamingIt_onlyOnceEveryOtherKeyWasWalked() throws Exception {
        // Given a delivered key, and a first-level bucket the rogue created with an ACL of its own alone, which sorts first
        deliverOnce("task-a");
        String bucket = roles.namespace() + "/keys/" + (key.key().startsWith("00") ? "01" : "00");
        rogue.create().withACL(java.util.List.of(new org.apache.zookeeper.data.ACL(org.apache.zookeeper.ZooDefs.Perms.ALL,
                digestId(RoleNamespace.WORKER)))).forPath(bucket);

        // When the admin lists every key
        java.util.List<dev.oncegate.Operator.KeySummary> listed = new java.util.ArrayList<>();
        Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(
                () -> roles.admin().list(dev.oncegate.Operator.ListQuery.all(), listed::add));

        // Then the delivered key was listed, and the call fails naming the bucket and who can repair it
        assertThat(listed).extracting(dev.oncegate.Operator.KeySummary::key).containsExactly(key.key());
        assertThat(thrown).isInstanceOf(dev.oncegate.OncegateException.class).hasMessageContaining(bucket)
                .hasMessageContaining("every other key was walked").hasMessageContaining("superDigest");
    }
}
