package dev.oncegate.cli;

import java.util.Locale;

import dev.oncegate.Genesis;
import dev.oncegate.OncegateAcl;
import dev.oncegate.OncegateException;
import org.apache.zookeeper.KeeperException;

/**
 * Who this client is in a namespace under access control, told from the digest ids its genesis
 * names: the role the identity has, or why it has none. ZooKeeper's digest authentication never
 * fails (a wrong password is only another identity, which no ACL names), so a wrong password and
 * a user without a role differ only in what the genesis says, and the genesis is readable by the
 * three roles alone: an identity that can read it is told its role; one that cannot is told that
 * a wrong password and a missing role look alike from where it stands, and to check the password.
 *
 * <p>Used to check a role before a command acts (gc) and to turn a refusal
 * ({@link KeeperException.NoAuthException}) into a sentence that says what to do.
 *
 * <p>Stateless; thread-safe.
 */
final class Access {

    /** The roles, in the order of what each may do. */
    enum Role { WORKER, OPERATOR, ADMIN }

    private Access() {
    }

    /** The role of {@code identity} in {@code roles}, or null when it has none. */
    static Role roleOf(Genesis.Roles roles, Credentials identity) {
        if (roles == null || identity == null) {
            return null;
        }
        String digest = identity.digest();
        return digest.equals(roles.admin()) ? Role.ADMIN : digest.equals(roles.operator()) ? Role.OPERATOR
                : digest.equals(roles.worker()) ? Role.WORKER : null;
    }

    /**
     * Why {@code identity} may not do what needs {@code needed}: unauthenticated, a user the
     * namespace does not name, or another role; and what to give instead. {@code rolesRead}
     * false: the genesis could not be read with this identity, and then a wrong password and a
     * missing role cannot be told apart.
     */
    static String whyNot(Genesis.Roles roles, boolean rolesRead, Credentials identity, Role needed) {
        String give = "give the " + name(needed) + "'s identity (--auth, --auth-file, ONCEGATE_AUTH or ONCEGATE_AUTH_FILE)";
        if (identity == null) {
            return "no identity was given (unauthenticated): " + give;
        }
        if (!rolesRead) {
            return identity.user() + " (from " + identity.source() + ") cannot even read the namespace's genesis, so a"
                    + " wrong password and a user without a role look alike here: check the password, or " + give;
        }
        if (roles == null) {
            return "the namespace's genesis names no roles, yet a znode refused " + identity.user() + ": its ACL is not the"
                    + " namespace's (`oncegate doctor` lists such znodes)";
        }
        Role role = roleOf(roles, identity);
        if (role != null) {
            return identity.user() + " is the namespace's " + name(role) + ", and this needs the " + name(needed) + ": " + give;
        }
        return identity.user() + " (from " + identity.source() + ") is none of the namespace's identities (worker "
                + user(roles.worker()) + ", operator " + user(roles.operator()) + ", admin " + user(roles.admin()) + "): "
                + give;
    }

    /**
     * {@link #whyNot} for {@code zk}'s identity, reading the roles with its client (a genesis
     * this identity cannot read says so).
     */
    static String whyNot(ZooKeeperConnection zk, Role needed) throws InterruptedException {
        try {
            return whyNot(OncegateAcl.roles(zk.client(), zk.namespace()), true, zk.identity(), needed);
        } catch (OncegateException unreadable) {
            return whyNot(null, false, zk.identity(), needed);
        }
    }

    /**
     * Checks, before a command acts, that {@code zk}'s identity has the role {@code needed} (or
     * is the admin), when the namespace's genesis names roles and this identity can read it;
     * otherwise leaves it to ZooKeeper, whose refusal the command explains with {@link #whyNot}.
     *
     * @throws UnavailableException saying which role this identity has, or why none, and what to give (exit 13)
     */
    static void require(ZooKeeperConnection zk, Role needed, String what) throws InterruptedException {
        Genesis.Roles roles;
        try {
            roles = OncegateAcl.roles(zk.client(), zk.namespace());
        } catch (OncegateException unreadable) {
            return;
        }
        Role role = roleOf(roles, zk.identity());
        if (roles != null && role != needed && role != Role.ADMIN) {
            throw new UnavailableException("permission denied: " + what + " needs the " + name(needed) + " role: "
                    + whyNot(roles, true, zk.identity(), needed));
        }
    }

    /**
     * {@code e} with what to do, when a ZooKeeper refusal (no permission) is among its causes:
     * an {@link UnavailableException} (exit 13) that says which role was needed, and what this
     * identity is; else {@code e} itself.
     */
    static RuntimeException explained(RuntimeException e, ZooKeeperConnection zk, Role needed) throws InterruptedException {
        KeeperException.NoAuthException refusal = refusal(e);
        if (refusal == null) {
            return e;
        }
        return new UnavailableException(denied(refusal) + ": " + whyNot(zk, needed), e);
    }

    /** The refusal in {@code e}'s causes, or null. */
    static KeeperException.NoAuthException refusal(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof KeeperException.NoAuthException noAuth) {
                return noAuth;
            }
        }
        return null;
    }

    /** {@code permission denied at PATH} or, when ZooKeeper names none (a multi-operation), without it. */
    static String denied(KeeperException.NoAuthException e) {
        return e.getPath() != null ? "permission denied at " + e.getPath() : "permission denied";
    }

    private static String user(String digestId) {
        int colon = digestId.indexOf(':');
        return colon < 0 ? digestId : digestId.substring(0, colon);
    }

    private static String name(Role role) {
        return role.name().toLowerCase(Locale.ROOT);
    }
}
