package dev.oncegate;

import java.util.HashSet;
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
 *   <tr><td>KEY/N/armed</td><td>CREATE READ (its outcome, created with it)</td><td>READ</td></tr>
 *   <tr><td>KEY/N/armed/outcome</td><td>READ WRITE (written once, version 0 → 1)</td><td>READ WRITE (reconcile)</td></tr>
 *   <tr><td>NS/backlog, NS/backlog/KIND</td><td>READ</td><td>READ</td></tr>
 *   <tr><td>NS/backlog/KIND/H (index bucket)</td><td>CREATE READ DELETE</td><td>CREATE READ DELETE</td></tr>
 *   <tr><td>NS/backlog/KIND/H/ENTRY</td><td>READ</td><td>READ</td></tr>
 * </table>
 *
 * So nothing grants a worker or an operator DELETE on a parent of a record (only the election
 * container, whose children are ephemeral, and the backlog index's buckets, whose entries are hints
 * that no decision reads: {@link BacklogIndex}), WRITE on an immutable record, or CREATE under
 * {@code authorizations} (authorizations, reconciliations) to a worker. The armed record and its
 * outcome are created by the arming executor with these ACLs, whoever created the scope above
 * them, and the armed record is never empty: nobody but the admin can ever remove either. Above the namespace oncegate changes nothing (the
 * client's own ACL applies). Without roles every znode is {@code world:anyone:cdrwa}.
 *
 * <h2>Roles epoch</h2>
 * The roles a gate writes with come from one read of the genesis, and {@code oncegate acl} may
 * name other roles in it at any time. So the ACLs a gate writes with carry the version of the
 * genesis znode they were read from, its <em>roles epoch</em> ({@link #epoch()}): every rewrite
 * of the genesis moves it, and the key-creation multi checks it, so a key is never created with
 * the ACLs of roles the genesis no longer names (see {@link ExecutorWrites#createKey}). ACLs for a
 * target rather than from a read ({@code acl}'s, {@code init}'s) have no epoch.
 *
 * <p>Immutable and thread-safe.
 */
final class Acls {

    /** The epoch of ACLs that were not read from a genesis. */
    static final int NO_EPOCH = -1;

    static final Acls OPEN = new Acls(null, NO_EPOCH);

    private final Genesis.Roles roles;
    private final int epoch;

    private Acls(Genesis.Roles roles, int epoch) {
        this.roles = roles;
        this.epoch = epoch;
    }

    /** The ACLs of {@code roles}, not bound to a version of the genesis. */
    static Acls of(Genesis.Roles roles) {
        return roles == null ? OPEN : new Acls(roles, NO_EPOCH);
    }

    /** The ACLs of the roles a genesis named at data version {@code epoch}. */
    static Acls of(Genesis.Roles roles, int epoch) {
        if (epoch < 0) {
            throw new IllegalArgumentException("epoch: a znode version, at least 0, got " + epoch);
        }
        return new Acls(roles, epoch);
    }

    boolean on() {
        return roles != null;
    }

    /** The data version of the genesis these ACLs' roles were read from; {@link #NO_EPOCH} when not read from one. */
    int epoch() {
        return epoch;
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
            case ARMED -> acl(Perms.CREATE | r, r);
            case OUTCOME -> acl(r | Perms.WRITE, r | Perms.WRITE);
            case LATCH -> acl(Perms.CREATE | r | Perms.DELETE, r);
            case INDEX, INDEX_ENTRY -> acl(r, r);
            case INDEX_BUCKET -> acl(Perms.CREATE | r | Perms.DELETE, Perms.CREATE | r | Perms.DELETE);
        };
    }

    /**
     * Why {@code acl}, found on {@code KEY/authorizations}, lets someone other than an operator
     * create an authorization there (or remove one, or change the ACL), or null when it does not,
     * or when roles are off. A worker credential can create a key, and so its
     * {@code authorizations} znode, with any ACL it likes, before any honest contender does: a
     * reader never honours an authorization without asking this.
     *
     * <p>The limit of the answer: ZooKeeper shows a reader without ADMIN permission every digest id
     * as {@code user:x}, its password hidden, so an entry naming the operator's or the admin's user
     * with another password looks the same as theirs. What this catches: a world, IP or unknown
     * identity, the worker, or any entry beyond the three roles allowed to create. The admin sees
     * the real ACLs ({@code oncegate doctor} run as the admin reports every znode whose ACL is not
     * its role ACL; the README's "Threat model" says what remains).
     */
    String authorizationsWeakness(List<ACL> acl) {
        if (roles == null) {
            return null;
        }
        for (ACL entry : acl) {
            boolean admin = is(entry, roles.admin());
            boolean operator = is(entry, roles.operator());
            int perms = entry.getPerms();
            String who = entry.getId().getScheme() + ":" + entry.getId().getId();
            if (!admin && (perms & (Perms.ADMIN | Perms.DELETE)) != 0) {
                return who + " may change its ACL or delete what is under it";
            }
            if (!admin && !operator && (perms & Perms.CREATE) != 0) {
                return who + " may create authorizations";
            }
        }
        return null;
    }

    /**
     * {@link #authorizationsWeakness}, but only for what no role's ACL ever gives: why {@code acl} lets
     * the world, an address, a scheme other than digest or the worker create on {@code
     * KEY/authorizations}, remove what is there or change its ACL; null when only digest identities
     * other than the worker may (the operator's and the admin's, or other ones: a previous role's,
     * or an invented one). What {@code oncegate acl} holds after a call that stopped halfway.
     */
    String authorizationsWeaknessBeyondDigests(List<ACL> acl) {
        if (roles == null) {
            return null;
        }
        for (ACL entry : acl) {
            boolean writes = (entry.getPerms() & (Perms.CREATE | Perms.ADMIN | Perms.DELETE)) != 0;
            if (writes && (!isDigest(entry) || is(entry, roles.worker()))) {
                return entry.getId().getScheme() + ":" + entry.getId().getId() + " may create authorizations, remove"
                        + " them or change the ACL";
            }
        }
        return null;
    }

    /** Whether {@code entry} names the digest identity {@code digestId}, as a reader sees it (its password maybe hidden). */
    private static boolean is(ACL entry, String digestId) {
        return isDigest(entry) && (entry.getId().getId().equals(digestId) || entry.getId().getId().equals(redacted(digestId)));
    }

    /** A digest id as ZooKeeper shows it to an identity without ADMIN on the znode: {@code user:x}. */
    private static String redacted(String digestId) {
        return digestId.replaceAll(":.*", ":x");
    }

    List<ACL> forPath(String ns, String path) {
        return forKind(Layout.kind(ns, path));
    }

    /**
     * Whether {@code actual} grants what {@code expected} grants, no more and no less, in any order.
     * ZooKeeper shows a digest's hash only to an identity with ADMIN on the znode ({@code user:x} to
     * others); read so, digests are compared by their user.
     */
    static boolean same(List<ACL> actual, List<ACL> expected) {
        List<ACL> comparable = actual.stream().anyMatch(a -> isDigest(a) && a.getId().getId().endsWith(":x"))
                ? expected.stream().map(a -> isDigest(a) ? new ACL(a.getPerms(), new Id("digest", redacted(a.getId().getId())))
                        : a).toList()
                : expected;
        return actual.size() == comparable.size() && new HashSet<>(actual).equals(new HashSet<>(comparable));
    }

    private static boolean isDigest(ACL a) {
        return a.getId().getScheme().equals("digest");
    }

    /** Whether {@code acl} lets anyone at all (world:anyone) create, write, delete or change the ACL. */
    static boolean worldWritable(List<ACL> acl) {
        int writes = Perms.CREATE | Perms.WRITE | Perms.DELETE | Perms.ADMIN;
        return acl.stream().anyMatch(a -> a.getId().equals(Ids.ANYONE_ID_UNSAFE) && (a.getPerms() & writes) != 0);
    }

    /**
     * The role ACL. Not {@code List.of}: ZooKeeper's {@code create} asks the list whether it
     * contains null, which an immutable {@code List.of} answers with a NullPointerException (the
     * path Curator's ACL provider takes, for a LeaderLatch's election node).
     */
    private List<ACL> acl(int worker, int operator) {
        return java.util.Collections.unmodifiableList(java.util.Arrays.asList(new ACL(Perms.ALL, new Id("digest", roles.admin())),
                new ACL(worker, new Id("digest", roles.worker())),
                new ACL(operator, new Id("digest", roles.operator()))));
    }
}
