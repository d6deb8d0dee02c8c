package dev.oncegate;

import java.util.List;
import java.util.function.Predicate;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

/**
 * Every znode of a namespace against the ACL its roles give it ({@link Acls}): the walk that
 * {@code oncegate acl} repairs with and {@code oncegate doctor} reports from. Depth first, a
 * znode's children listed before its ACL is read, one {@code getChildren} per znode: oncegate's
 * layout keeps every child list short (two bucket levels of at most 256 names, a key's scopes, a
 * scope's records and election), so no large parent is ever listed. A znode that vanishes
 * meanwhile (an election node, a key gc removed) is skipped with everything beneath it; one created
 * beneath a znode already listed is not seen (a later walk sees it).
 *
 * <p>Stateless; thread-safe.
 */
final class AclWalk {

    private AclWalk() {
    }

    /** What the walk tells of the znodes whose ACL is not their role ACL. */
    interface Visitor {
        /**
         * {@code path}'s ACL is {@code actual} (digest hashes shown as {@code user:x} to an identity
         * without ADMIN on it), not {@code expected}.
         */
        void differs(String path, List<ACL> actual, Stat stat, List<ACL> expected) throws Exception;

        /** The walking identity may not read {@code path} (its ACL, or its children). */
        void unreadable(String path) throws Exception;
    }

    /**
     * Walks {@code ns} (the namespace's own znode included), comparing each znode's ACL with what
     * {@code roles} give a znode of its kind; {@code skip} names znodes whose ACL is not compared (their
     * children are walked).
     *
     * @return how many znodes were walked
     */
    static long walk(CuratorFramework client, String ns, Acls roles, Predicate<String> skip, Visitor visitor)
            throws Exception {
        return walk(client, ns, ns, roles, skip, visitor);
    }

    private static long walk(CuratorFramework client, String ns, String path, Acls roles, Predicate<String> skip,
                             Visitor visitor) throws Exception {
        List<String> children;
        try {
            children = client.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException gone) {
            return 0;
        } catch (KeeperException.NoAuthException e) {
            visitor.unreadable(path);
            return 1;
        }
        if (!skip.test(path)) {
            Stat stat = new Stat();
            try {
                List<ACL> actual = client.getACL().storingStatIn(stat).forPath(path);
                List<ACL> expected = roles.forPath(ns, path);
                if (!Acls.same(actual, expected)) {
                    visitor.differs(path, actual, stat, expected);
                }
            } catch (KeeperException.NoNodeException gone) {
                return 0;
            } catch (KeeperException.NoAuthException e) {
                visitor.unreadable(path);
            }
        }
        long walked = 1;
        for (String child : children) {
            walked += walk(client, ns, path + "/" + child, roles, skip, visitor);
        }
        return walked;
    }
}
