package dev.oncegate;

import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

import org.apache.curator.framework.api.ACLProvider;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;

/**
 * Access control for oncegate's znodes (SPEC §6): three digest identities — worker, operator,
 * admin — named in the namespace's genesis, and the ACL each znode kind gets from them.
 *
 * <p>The gate writes every record of the protocol with its ACL itself. Curator's
 * {@code LeaderLatch} creates the election nodes through the client's {@link ACLProvider}, so a
 * client under access control should be built with {@link #provider}:
 *
 * <pre>{@code
 * AtomicReference<Genesis.Roles> roles = new AtomicReference<>();
 * CuratorFramework curator = CuratorFrameworkFactory.builder().connectString(zk)
 *         .authorization("digest", "worker:s3cret".getBytes(UTF_8))
 *         .aclProvider(OncegateAcl.provider("/oncegate", roles::get))
 *         .retryPolicy(new ExponentialBackoffRetry(1000, 3)).build();
 * curator.start();
 * roles.set(OncegateAcl.roles(curator, "/oncegate"));  // from the genesis, once connected
 * }</pre>
 *
 * <p>Stateless; thread-safe.
 */
public final class OncegateAcl {

    private OncegateAcl() {
    }

    /**
     * The digest id of {@code user:password}, as ZooKeeper computes it
     * ({@code user:base64(sha1(user:password))}): what {@code oncegate init} stores, never the password.
     *
     * @throws IllegalArgumentException when the text is not {@code user:password} with both parts non-empty
     */
    public static String digest(String userColonPassword) {
        Objects.requireNonNull(userColonPassword, "credentials");
        int colon = userColonPassword.indexOf(':');
        if (colon <= 0 || colon == userColonPassword.length() - 1) {
            throw new IllegalArgumentException("credentials: expected USER:PASSWORD with both parts non-empty");
        }
        try {
            return DigestAuthenticationProvider.generateDigest(userColonPassword);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM has no SHA-1, which ZooKeeper's digest scheme needs", e);
        }
    }

    /**
     * An {@link ACLProvider} that gives every znode under {@code namespace} its oncegate ACL,
     * from the roles {@code roles} supplies (null: access control off, {@code world:anyone}), and
     * leaves everything else — including the namespace's own parents — to ZooKeeper's open default.
     */
    public static ACLProvider provider(String namespace, Supplier<Genesis.Roles> roles) {
        String ns = Layout.checkNamespace(namespace);
        Objects.requireNonNull(roles, "roles");
        return new ACLProvider() {
            @Override
            public List<ACL> getDefaultAcl() {
                return ZooDefs.Ids.OPEN_ACL_UNSAFE;
            }

            @Override
            public List<ACL> getAclForPath(String path) {
                List<ACL> acl = Acls.of(roles.get()).forPath(ns, path);
                return acl != null ? acl : ZooDefs.Ids.OPEN_ACL_UNSAFE;
            }
        };
    }

    /**
     * The roles the namespace's genesis names, read with {@code client}: null when access control
     * is off there.
     *
     * @throws OncegateException when the namespace has no genesis or it cannot be read (say, for lack of permission)
     */
    public static Genesis.Roles roles(org.apache.curator.framework.CuratorFramework client, String namespace)
            throws InterruptedException {
        String ns = Layout.checkNamespace(namespace);
        try {
            return new ScopeProtocol(client, ns, java.time.Clock.systemUTC(), z -> { }, () -> Acls.OPEN).reads().readGenesis()
                    .orElseThrow(() -> new OncegateException("namespace " + ns + " has no genesis: run `oncegate init`"))
                    .roles();
        } catch (InterruptedException | OncegateException e) {
            throw e;
        } catch (Exception e) {
            throw new OncegateException("could not read the genesis of " + ns + ": " + e
                    + " (check the connect string and this identity's credentials)", e);
        }
    }
}
