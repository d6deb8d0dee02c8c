package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;

import dev.oncegate.Attempt;
import dev.oncegate.Decision;
import dev.oncegate.Gate;
import dev.oncegate.StopReason;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** SPEC §9 "unavailable history": a record this identity may not read stops it with permission_denied. */
class PermissionDeniedTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    static final String OPERATOR = "operator:s3cret";

    private CuratorFramework operatorClient() {
        CuratorFramework client = CuratorFrameworkFactory.builder().connectString(zk.connectString())
                .sessionTimeoutMs((int) Timing.SESSION.toMillis()).connectionTimeoutMs(3000)
                .retryPolicy(new RetryNTimes(3, 200))
                .authorization("digest", OPERATOR.getBytes(StandardCharsets.UTF_8)).build();
        client.start();
        return zk.track(client);
    }

    private static List<ACL> operatorOnly() throws Exception {
        return List.of(new ACL(ZooDefs.Perms.ALL, new Id("digest", DigestAuthenticationProvider.generateDigest(OPERATOR))));
    }

    /** The operator's client enters (creating the key and scope 0) and leaves without crossing. */
    private CuratorFramework keyCreatedByOperator() throws Exception {
        CuratorFramework operator = operatorClient();
        try (Gate gate = Gate.builder(operator).namespace(zk.namespace()).taskId("operator").build();
             Attempt a = gate.enter(zk.key())) {
            assertThat(a.decision().proceeds()).isTrue();
        }
        return operator;
    }

    @Test
    void keyNodeReadableOnlyByOperator_unauthenticatedContenderStopsPermissionDenied() throws Exception {
        // Given the key node is readable only by a digest identity
        CuratorFramework operator = keyCreatedByOperator();
        operator.setACL().withACL(operatorOnly()).forPath(zk.keyPath());

        // When an unauthenticated worker enters
        Worker w = zk.newWorker("task-b");
        try (Attempt attempt = w.gate().enter(zk.key(), Timing.scaled(1_000))) {
            // Then it fails closed with permission_denied, naming the node
            assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopUnavailable.class, s -> {
                assertThat(s.reason()).isEqualTo(StopReason.PERMISSION_DENIED);
                assertThat(s.evidence().path()).isEqualTo(zk.keyPath());
            });
        }
        assertThat(zk.provider().deliveries()).isZero();
        // and nothing was armed (read as the operator)
        assertThat(Scenarios.armedNode(operator, zk.keyPath() + "/0")).isNull();
        assertThat(operator.getACL().forPath(zk.keyPath())).isEqualTo(operatorOnly());
    }

    @Test
    void scopeNodeReadableOnlyByOperator_unauthenticatedContenderStopsPermissionDenied() throws Exception {
        // Given scope 0 (not the key) is readable only by a digest identity
        CuratorFramework operator = keyCreatedByOperator();
        operator.setACL().withACL(operatorOnly()).forPath(zk.keyPath() + "/0");

        // When an unauthenticated worker enters, willing to wait
        Worker w = zk.newWorker("task-b");
        try (Attempt attempt = w.gate().enter(zk.key(), Timing.scaled(1_000))) {
            // Then it fails closed with permission_denied
            assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopUnavailable.class,
                    s -> assertThat(s.reason()).isEqualTo(StopReason.PERMISSION_DENIED));
        }
        assertThat(zk.provider().deliveries()).isZero();
        assertThat(Scenarios.armedNode(operator, zk.keyPath() + "/0")).isNull();
        assertThat(operator.checkExists().forPath(zk.keyPath() + "/1")).isNull();
    }

    @Test
    void electionNodeCannotBeCreated_contenderStopsPermissionDeniedPromptly() throws Exception {
        // Given workers may read and write scope 0 but not create the election node beneath it
        // (a latch that cannot create its node does not throw from start(): SPEC §4 pitfall)
        CuratorFramework operator = keyCreatedByOperator();
        List<ACL> readWrite = List.of(new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.WRITE, ZooDefs.Ids.ANYONE_ID_UNSAFE));
        if (operator.checkExists().forPath(zk.keyPath() + "/0/latch") != null) {
            operator.setACL().withACL(readWrite).forPath(zk.keyPath() + "/0/latch");
        }
        operator.setACL().withACL(readWrite).forPath(zk.keyPath() + "/0");

        // When an unauthenticated worker (2 s lease) enters, willing to wait a little
        Worker w = zk.newWorker("task-b", b -> b.leaseTtl(Timing.SHORT_LEASE));
        long started = System.nanoTime();
        try (Attempt attempt = w.gate().enter(zk.key(), Timing.scaled(3_000))) {
            // Then it fails closed with permission_denied (not "busy": nobody is executing)
            assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopUnavailable.class,
                    s -> assertThat(s.reason()).isEqualTo(StopReason.PERMISSION_DENIED));
        }
        // well before an election could have timed out (a generous bound: a loaded CI machine is slow)
        assertThat(java.time.Duration.ofNanos(System.nanoTime() - started)).isLessThan(Timing.scaled(10_000));
        assertThat(zk.provider().deliveries()).isZero();
        assertThat(Scenarios.armedNode(operator, zk.keyPath() + "/0")).isNull();
    }
}
