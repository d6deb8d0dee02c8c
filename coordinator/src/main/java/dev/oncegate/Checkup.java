package dev.oncegate;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * A namespace's health as one client sees it ({@link Operator#checkup}): the genesis as a gate
 * would judge it, the role of the client's identity and whether the namespace's ACLs let it do
 * what that role needs, whether every znode of the namespace carries its role ACL, and the server's clock. What to make of it (thresholds against a lease
 * TTL, say) is the caller's; what is wrong is said here, each problem with its fix.
 *
 * <p>Immutable and thread-safe.
 *
 * @param genesis       the namespace's genesis; null when it has none, or it could not be read
 * @param problem       why a gate would stop in this namespace now ({@code namespace_not_initialised},
 *                      {@code unreadable_record}, {@code permission_denied}, {@code zookeeper_rolled_back}, {@code marks_unreadable}); null when none
 * @param problemDetail what that means and what to do; null when no problem
 * @param aclsOn        whether the genesis names the three roles (access control on)
 * @param role          the role of the identity checked; null when access control is off, or it is none of the roles
 * @param access        what the identity cannot do that its role needs, or may do beyond it; empty when all is well
 * @param acls          every znode of the namespace against its role ACL; null when access control is off
 *                      (every znode is then world-writable by design) or the genesis could not be read
 * @param clock         the server's clock, from a probe; null when the identity may not create the probe
 *                      (an operator, say) or the namespace has no genesis
 */
public record Checkup(Genesis genesis, StopReason problem, String problemDetail, boolean aclsOn, Role role,
                      List<Finding> access, AclSweep acls, ServerClock clock) {

    public Checkup {
        access = List.copyOf(access);
    }

    /** The three roles of access control (SPEC §6). */
    public enum Role {
        /** Creates keys, scopes, leases, armed records and outcomes; deletes nothing. */
        WORKER,
        /** Reads everything; creates authorizations and reconciliations. */
        OPERATOR,
        /** Everything: initialises namespaces and runs retention. */
        ADMIN
    }

    /**
     * One thing about access that is not as the role needs it.
     *
     * @param path    the znode concerned
     * @param failure true when the identity cannot do what its role needs (its commands fail closed), or
     *                an ACL is not what the roles make it; false when the identity may do more than its
     *                role (access control is looser than designed)
     * @param problem what is wrong
     * @param fix     what to do
     */
    public record Finding(String path, boolean failure, String problem, String fix) {
        public Finding {
            Objects.requireNonNull(path, "path");
            Objects.requireNonNull(problem, "problem");
            Objects.requireNonNull(fix, "fix");
        }
    }

    /**
     * Every znode of the namespace read against the ACL its kind gets from the genesis' roles (the
     * README's "Access control"), walked bucket by bucket with the checking identity. A znode with
     * another ACL is one that {@code oncegate acl} did not reach or that was changed by hand, or an
     * election node (ephemeral) of a client whose ACL provider does not follow the roles.
     *
     * @param rolesEpoch    the genesis znode's version: the roles epoch every key creation checks
     * @param znodes        how many znodes were walked
     * @param differing     how many carry an ACL other than their role ACL, or could not be read by this identity
     * @param worldWritable how many of those let anyone at all ({@code world:anyone}) create, write, delete or
     *                      change the ACL
     * @param examples      the first few of them, each as {@code PATH [ACL] (…; its role ACL: [ACL])}
     */
    public record AclSweep(int rolesEpoch, long znodes, long differing, long worldWritable, List<String> examples) {
        public AclSweep {
            examples = List.copyOf(examples);
        }
    }

    /**
     * The server's clock next to this process's, from one create: ZooKeeper stamps a znode's
     * {@code ctime} with the clock of the server that ordered the write (the leader).
     *
     * @param sent     this process's clock when the create was sent
     * @param received this process's clock when the reply came
     * @param server   the znode's {@code ctime}
     * @param zxid     the znode's {@code czxid}: how far the ensemble has come
     */
    public record ServerClock(Instant sent, Instant received, Instant server, long zxid) {

        /** How far this process's clock is ahead of the server's (negative: behind), from the round trip's midpoint. */
        public Duration skew() {
            Instant midpoint = sent.plus(Duration.between(sent, received).dividedBy(2));
            return Duration.between(server, midpoint);
        }

        /** How far off {@link #skew()} may be: half the round trip, plus the millisecond of {@code ctime}. */
        public Duration uncertainty() {
            return Duration.between(sent, received).dividedBy(2).plusMillis(1);
        }
    }
}
