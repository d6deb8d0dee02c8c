package dev.oncegate;

import org.apache.zookeeper.data.Stat;

/**
 * An operator's authorization to redeliver after the consumed scope {@code after}, as read from
 * {@code KEY/authorizations/after-<n>}: absent, present (parsed), or present but unreadable.
 * Immutable.
 *
 * @param path     the authorization's znode
 * @param after    the consumed scope it follows
 * @param presence absent, present or unreadable
 * @param record   the parsed record when present, else null
 * @param version  the znode's data version (-1 when absent)
 * @param czxid    the zxid of its creation (0 when absent): an authorization created before its
 *                 scope was armed (consumed) was not an informed decision about that scope, and is never honoured
 * @param problem  why it cannot be read, when unreadable
 */
record AuthorizationView(String path, int after, Presence presence, Records.Authorization record, int version,
                         long czxid, String problem) {

    enum Presence { ABSENT, PRESENT, UNREADABLE }

    static AuthorizationView absent(String path, int after) {
        return new AuthorizationView(path, after, Presence.ABSENT, null, -1, 0, null);
    }

    static AuthorizationView present(String path, int after, Stat stat, Records.Authorization record) {
        return new AuthorizationView(path, after, Presence.PRESENT, record, stat.getVersion(), stat.getCzxid(), null);
    }

    static AuthorizationView unreadable(String path, int after, Stat stat, String problem) {
        return new AuthorizationView(path, after, Presence.UNREADABLE, null, stat.getVersion(), stat.getCzxid(), problem);
    }

    /**
     * Whether this authorization opens the scope after {@code consumed}: present, readable, for
     * exactly that scope, which is consumed, and created after the scope was armed (its czxid above
     * the armed record's, an immutable record's zxid: nothing a worker can write moves it). Whether
     * only operators could create it is checked apart, on the {@code authorizations} znode's ACL.
     */
    boolean honours(ScopeView consumed) {
        return honours(consumed.scope(), consumed.state(), consumed.armedZxid());
    }

    /** {@link #honours(ScopeView)} for scope {@code scope} in {@code state}, armed at {@code armedZxid} (0: unknown). */
    boolean honours(int scope, ScopeState state, long armedZxid) {
        return presence == Presence.PRESENT && state != null && state.consumed() && scope == after && armedZxid > 0
                && czxid > armedZxid;
    }
}
