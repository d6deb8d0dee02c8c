package dev.oncegate.testing;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.Genesis;
import dev.oncegate.OncegateAcl;
import dev.oncegate.Operator;
import dev.oncegate.ZxidMarks;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;

/**
 * A namespace of a test with access control on (SPEC §6): initialised by the admin with the three
 * role identities, and clients authenticated as each role, every one of them closed after the test
 * by the extension that opened the server. What a worker host holds is {@link #WORKER}: the
 * credential a stolen-credential test abuses.
 *
 * <p>Immutable; thread-safe.
 */
final class RoleNamespace {

    static final String WORKER = "worker:w-s3cret";
    static final String OPERATOR = "ops:o-s3cret";
    static final String ADMIN = "admin:a-s3cret";

    private final ZooKeeperExtension zk;
    private final String namespace;
    private final Genesis.Roles roles;

    private RoleNamespace(ZooKeeperExtension zk, String namespace, Genesis.Roles roles) {
        this.zk = zk;
        this.namespace = namespace;
        this.roles = roles;
    }

    /** A new namespace on {@code zk}'s server, initialised by the admin with roles on. */
    static RoleNamespace create(ZooKeeperExtension zk) throws InterruptedException {
        Genesis.Roles roles = new Genesis.Roles(OncegateAcl.digest(WORKER), OncegateAcl.digest(OPERATOR),
                OncegateAcl.digest(ADMIN));
        RoleNamespace ns = new RoleNamespace(zk, "/roles-" + UUID.randomUUID(), roles);
        Gate.initialize(ns.client(ADMIN), ns.namespace, roles, ZxidMarks.inMemory());
        return ns;
    }

    String namespace() {
        return namespace;
    }

    /** A started client authenticated as {@code credentials} that gives what it creates its role ACL (as oncegate's CLI does). */
    CuratorFramework client(String credentials) {
        AtomicReference<Genesis.Roles> known = new AtomicReference<>(roles);
        CuratorFramework client = CuratorFrameworkFactory.builder().connectString(zk.connectString())
                .sessionTimeoutMs((int) Timing.SESSION.toMillis()).connectionTimeoutMs(3000)
                .retryPolicy(new RetryNTimes(3, 200))
                .authorization("digest", credentials.getBytes(StandardCharsets.UTF_8))
                .aclProvider(OncegateAcl.provider(namespace, known::get)).build();
        client.start();
        return zk.track(client);
    }

    /** A worker's gate: its own session, authenticated with the worker credential. */
    Gate gate(String taskId, Consumer<Gate.Builder> configure) {
        Gate.Builder builder = Gate.builder(client(WORKER)).namespace(namespace).taskId(taskId).host("test-host");
        configure.accept(builder);
        return zk.track(builder.build());
    }

    Gate gate(String taskId) {
        return gate(taskId, b -> { });
    }

    /** An operator (authorize, reconcile), authenticated as the operator. */
    Operator operator() {
        return Operator.builder(client(OPERATOR)).namespace(namespace).build();
    }

    /** The admin's operator (gc, acl), authenticated as the admin. */
    Operator admin() {
        return Operator.builder(client(ADMIN)).namespace(namespace).build();
    }

    /** The znode path of {@code key} in this namespace. */
    String keyPath(EffectKey key) {
        return key.path(namespace);
    }

    /** The JSON of a key record for {@code key}, as any worker may write it (schema 4). */
    static byte[] keyRecord(EffectKey key) {
        return ("{\"v\":4,\"p\":\"" + key.destination().provider() + "\",\"i\":\"" + key.destination().identity().wireName()
                + "\",\"d\":\"" + key.destination().id() + "\",\"s\":\"" + key.sha256() + "\",\"c\":\"" + Instant.now()
                + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    /** The JSON of an open scope opened for {@code why}, as any worker may write it (schema 4). */
    static byte[] openScope(String why) {
        return ("{\"v\":4,\"o\":\"" + why + "\",\"t\":\"" + Instant.now() + "\",\"h\":null}").getBytes(StandardCharsets.UTF_8);
    }

    /** A forged executor outcome: well-formed, but revealing a secret nobody committed to. */
    static byte[] forgedOutcome(String outcome) {
        return ("{\"v\":4,\"o\":\"" + outcome + "\",\"d\":\"forged\",\"s\":\"" + "ab".repeat(16) + "\",\"b\":{\"t\":\"rogue\","
                + "\"h\":\"rogue-host\",\"p\":1,\"s\":\"1\",\"a\":\"0000000000000000\"},\"k\":1,\"z\":1,\"t\":\""
                + Instant.now() + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    /** The role ACLs' world-writable opposite, for znodes a rogue creates. */
    static List<org.apache.zookeeper.data.ACL> worldWritable() {
        return org.apache.zookeeper.ZooDefs.Ids.OPEN_ACL_UNSAFE;
    }
}
