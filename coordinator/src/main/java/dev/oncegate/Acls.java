package dev.oncegate;

import java.util.List;

import org.apache.zookeeper.ZooDefs.Ids;
import org.apache.zookeeper.ZooDefs.Perms;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;

/**
 * The ACL of every znode kind (SPEC §6), from the genesis' three role identities. ZooKeeper
 * checks CREATE and DELETE on the <em>parent</em> and has no per-field write rules, so:
 *
 * <table>
 *   <caption>permissions per role (A = admin: always ALL)</caption>
 *   <tr><th>znode</th><th>worker</th><th>operator</th></tr>
 *   <tr><td>NS, NS/genesis, NS/genesis/ID</td><td>READ</td><td>READ</td></tr>
 *   <tr><td>NS/keys and its two bucket levels</td><td>CREATE READ</td><td>READ</td></tr>
 *   <tr><td>KEY</td><td>CREATE READ (scopes n+1)</td><td>READ</td></tr>
 *   <tr><td>KEY/authorizations</td><td>READ</td><td>CREATE READ</td></tr>
 *   <tr><td>KEY/authorizations/after-N, reconciled-N</td><td>READ</td><td>READ</td></tr>
 *   <tr><td>KEY/N (scope: its data is the lease)</td><td>CREATE READ WRITE</td><td>READ WRITE (reconcile)</td></tr>
 *   <tr><td>KEY/N/latch (election container)</td><td>CREATE READ DELETE</td><td>READ</td></tr>
 *   <tr><td>KEY/N/latch/* (election nodes)</td><td>READ</td><td>READ</td></tr>
 *   <tr><td>KEY/N/armed-*, outcome</td><td>READ</td><td>READ</td></tr>
 * </table>
 *
 * So nothing grants a worker or an operator DELETE on a parent of a record (only the election
 * container, whose children are ephemeral), WRITE on an immutable record, or CREATE under
 * {@code authorizations} (authorizations, reconciliations) to a worker. Above the namespace oncegate changes nothing (the
 * client's own ACL applies). Without roles every znode is {@code world:anyone:cdrwa}.
 *
 * <p>Immutable and thread-safe.
 */
final class Acls {

    static final Acls OPEN = new Acls(null);

    private final Genesis.Roles roles;

    private Acls(Genesis.Roles roles) {
        this.roles = roles;
    }

    static Acls of(Genesis.Roles roles) {
        return roles == null ? OPEN : new Acls(roles);
    }

    boolean on() {
        return roles != null;
    }

    /** The ACL for a znode of this kind; null above the namespace (the client's own provider decides). */
    List<ACL> forKind(Layout.Kind kind) {
        if (roles == null) {
            return kind == Layout.Kind.ABOVE ? null : Ids.OPEN_ACL_UNSAFE;
        }
        int r = Perms.READ;
        return switch (kind) {
            case ABOVE -> null;
            case NAMESPACE, GENESIS, AUTHORIZATION, ELECTION_NODE, RECORD -> acl(r, r);
            case KEYS, KEY -> acl(Perms.CREATE | r, r);
            case AUTHORIZATIONS -> acl(r, Perms.CREATE | r);
            case SCOPE -> acl(Perms.CREATE | r | Perms.WRITE, r | Perms.WRITE);
            case LATCH -> acl(Perms.CREATE | r | Perms.DELETE, r);
        };
    }

    List<ACL> forPath(String ns, String path) {
        return forKind(Layout.kind(ns, path));
    }

    private List<ACL> acl(int worker, int operator) {
        return List.of(new ACL(Perms.ALL, new Id("digest", roles.admin())),
                new ACL(worker, new Id("digest", roles.worker())),
                new ACL(operator, new Id("digest", roles.operator())));
    }
}
