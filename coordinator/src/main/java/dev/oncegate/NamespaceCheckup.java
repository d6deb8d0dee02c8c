package dev.oncegate;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs.Perms;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

/**
 * {@link Operator#checkup}: reads what a gate reads before it decides anything (the genesis, its
 * id marker, this host's rollback witness); with access control on, walks every znode of the
 * namespace ({@link AclWalk}, bucket by bucket) comparing its ACL with what {@link Acls} derives
 * from the roles the genesis names now; and creates one ephemeral probe where the identity's role
 * may create ({@link OperatorWrites#probe}), which proves that permission and reads the server's
 * clock. Nothing else is written. Without access control nothing is walked: every znode is
 * {@code world:anyone:cdrwa} by design.
 *
 * <p>Stateless; thread-safe (one call uses only its own locals and the thread-safe {@link NamespaceState}).
 */
final class NamespaceCheckup {

    private static final String REAPPLY = "as the admin, run `oncegate acl --worker … --operator … --admin …` with the"
            + " namespace's identities: it re-applies every znode's role ACL (deploy/RUNBOOK.md, 'Rotate credentials')";
    /** How many of the znodes without their role ACL a checkup names. */
    static final int EXAMPLES = 5;

    private NamespaceCheckup() {
    }

    /** The checkup of {@code ns} for the identity whose digest id is {@code digestId} (null: none). */
    static Checkup run(NamespaceState ns, String digestId) throws Exception {
        String genesisPath = Layout.genesis(ns.namespace);
        Decision.Stop stop;
        try {
            stop = ns.checkGenesis();
        } catch (KeeperException.NoAuthException e) {
            return problem(StopReason.PERMISSION_DENIED, "this identity may not read " + genesisPath + ": it is none of"
                    + " the namespace's roles (give --auth with the worker's, operator's or admin's USER:PASSWORD)");
        } catch (UnreadableRecordException e) {
            return problem(StopReason.UNREADABLE_RECORD, e.getMessage());
        }
        if (stop != null) {
            return problem(stop.reason(), stop.evidence().detail());
        }
        Genesis genesis = ns.currentGenesis();
        Genesis.Roles roles = genesis.roles();
        Checkup.Role role = roleOf(roles, digestId);
        List<Checkup.Finding> access = new ArrayList<>();
        if (roles != null && role == null) {
            access.add(new Checkup.Finding(genesisPath, true, (digestId == null ? "no identity given"
                    : "identity " + user(digestId) + " (digest " + digestId + ") is") + " none of the namespace's roles"
                    + " (worker " + user(roles.worker()) + ", operator " + user(roles.operator()) + ", admin "
                    + user(roles.admin()) + "): its runs stop with permission_denied",
                    "authenticate as the role's identity (--auth / --auth-file / ONCEGATE_AUTH); a wrong password is"
                            + " another digest"));
        }
        Checkup.AclSweep sweep = roles == null ? null : sweep(ns, Acls.of(roles));
        boolean mayCreate = roles == null || role == Checkup.Role.WORKER || role == Checkup.Role.ADMIN;
        long highest = ns.highestZxid();
        String keys = Layout.keys(ns.namespace);
        OperatorWrites.Probe probe = null;
        try {
            probe = ns.protocol.operator().probe();
            if (!mayCreate) {
                access.add(new Checkup.Finding(keys, false, "this identity (" + (role == null ? "no role" : roleName(role))
                        + ") may create keys, which only workers and the admin may", REAPPLY));
            }
        } catch (KeeperException.NoAuthException e) {
            if (mayCreate) {
                access.add(new Checkup.Finding(keys, true, "this identity (" + (role == null ? "access control off"
                        : roleName(role)) + ") may not create under " + keys + ", which every new key needs: its runs stop"
                        + " with permission_denied", roles == null ? "give " + keys + " the open ACL again (zkCli `setAcl "
                        + keys + " world:anyone:cdrwa`), or turn access control on with `oncegate acl`" : REAPPLY));
            }
        } catch (KeeperException.NoNodeException e) {
            access.add(new Checkup.Finding(keys, true, keys + " is missing: a namespace initialised by an older oncegate",
                    "run `oncegate init --namespace " + ns.namespace + "` once: it adds what is missing and changes nothing else"));
        }
        Checkup.ServerClock clock = probe == null ? null : new Checkup.ServerClock(probe.sent(), probe.received(),
                java.time.Instant.ofEpochMilli(probe.stat().getCtime()), probe.stat().getCzxid());
        Decision.StopUnavailable blind = ns.witnessStop(genesisPath, -1);
        if (blind == null) {
            blind = ns.rollbackKept(genesisPath, -1);
        }
        if (blind != null) {
            return new Checkup(genesis, blind.reason(), blind.evidence().detail(), roles != null, role, access, sweep, clock);
        }
        if (clock != null && highest > clock.zxid()) {
            return new Checkup(genesis, StopReason.ZOOKEEPER_ROLLED_BACK, "this host saw zxid " + highest + " of namespace "
                    + ns.namespace + " (genesis " + genesis.id() + ") but the ensemble is at " + clock.zxid() + ": it was"
                    + " restored from an older snapshot and may have forgotten outcomes; every worker of this host stops"
                    + " before arming. Restore the latest data if you can (deploy/RUNBOOK.md, 'ZooKeeper data lost, or"
                    + " restored from a backup')", roles != null, role, access, sweep, clock);
        }
        return new Checkup(genesis, null, null, roles != null, role, access, sweep, clock);
    }

    private static Checkup problem(StopReason reason, String detail) {
        return new Checkup(null, reason, detail, false, null, List.of(), null, null);
    }

    static Checkup.Role roleOf(Genesis.Roles roles, String digestId) {
        if (roles == null || digestId == null) {
            return null;
        }
        if (digestId.equals(roles.admin())) {
            return Checkup.Role.ADMIN;
        }
        if (digestId.equals(roles.operator())) {
            return Checkup.Role.OPERATOR;
        }
        return digestId.equals(roles.worker()) ? Checkup.Role.WORKER : null;
    }

    /** Every znode of the namespace against its role ACL, read with the checking identity. */
    private static Checkup.AclSweep sweep(NamespaceState ns, Acls acls) throws Exception {
        long[] counts = {0, 0}; // differing, world-writable
        List<String> examples = new ArrayList<>();
        long walked = AclWalk.walk(ns.curator(), ns.namespace, acls, path -> false, false, null, new AclWalk.Visitor() {
            @Override
            public void differs(String path, List<ACL> actual, Stat stat, List<ACL> expected) {
                boolean open = Acls.worldWritable(actual);
                counts[0]++;
                counts[1] += open ? 1 : 0;
                if (examples.size() < EXAMPLES) {
                    examples.add(path + " " + render(actual, true) + " (" + (open ? "world-writable; " : "")
                            + (stat.getEphemeralOwner() != 0 ? "ephemeral, gone with its session; " : "")
                            + "its role ACL: " + render(expected, true) + ")");
                }
            }

            @Override
            public void unreadable(String path) {
                counts[0]++;
                if (examples.size() < EXAMPLES) {
                    examples.add(path + " (this identity may not read it, which every role may)");
                }
            }

            @Override
            public void held(String path, String weakness) {
                throw new AssertionError("a walk that does not repair held " + path);
            }
        });
        return new Checkup.AclSweep(ns.acls().epoch(), walked, counts[0], counts[1], examples);
    }

    /** {@code [scheme:id:perms,…]}, sorted; digest ids shortened to their user when {@code brief}. */
    private static String render(List<ACL> acl, boolean brief) {
        return acl.stream().map(a -> a.getId().getScheme() + ":"
                        + (brief && a.getId().getScheme().equals("digest") ? user(a.getId().getId()) : a.getId().getId())
                        + ":" + perms(a.getPerms()))
                .sorted().collect(Collectors.joining(",", "[", "]"));
    }

    private static String perms(int p) {
        StringBuilder s = new StringBuilder();
        s.append((p & Perms.CREATE) != 0 ? "c" : "").append((p & Perms.DELETE) != 0 ? "d" : "")
                .append((p & Perms.READ) != 0 ? "r" : "").append((p & Perms.WRITE) != 0 ? "w" : "")
                .append((p & Perms.ADMIN) != 0 ? "a" : "");
        return s.toString();
    }

    /** The user of a digest id ({@code user:hash}); other ids as they are. */
    private static String user(String id) {
        int colon = id.indexOf(':');
        return colon < 0 ? id : id.substring(0, colon);
    }

    private static String roleName(Checkup.Role role) {
        return role.name().toLowerCase(java.util.Locale.ROOT);
    }
}
