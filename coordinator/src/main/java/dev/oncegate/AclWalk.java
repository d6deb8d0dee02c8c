package dev.oncegate;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

/**
 * Every znode of a namespace against the ACL its roles give it ({@link Acls}): the walk that
 * {@code oncegate acl} repairs with and {@code oncegate doctor} reports from.
 *
 * <p>A znode's children are listed ({@code getChildren}) before its ACL is read ({@code getACL})
 * and, when repairing, set ({@code setACL}); oncegate's layout keeps every child list short (two
 * bucket levels of at most 256 names, a key's scopes, a scope's records and election), so no large
 * parent is ever listed. A znode that vanishes meanwhile (an election node, a key gc removed) is
 * skipped with everything beneath it; one created beneath a znode already listed is not seen (a
 * later walk sees it). The requests are pipelined: up to {@link #WINDOW} are in flight at once
 * (Curator background operations, retried by the client's retry policy), taken depth first from a
 * stack, so memory stays bounded by the window and the fan-out; one at a time, a walk of 100,000
 * znodes took over a minute.
 *
 * <p>Not thread-safe as a walk, and needs none: the {@link Visitor} is called on the walking thread
 * only; Curator's threads merely hand replies over through a queue.
 */
final class AclWalk {

    /** How many requests a walk keeps in flight. */
    static final int WINDOW = 256;
    /** How long a walk waits for any one reply before it gives up (Curator's retries come first). */
    private static final long REPLY_TIMEOUT_MS = 120_000;

    private AclWalk() {
    }

    /** What the walk tells of the znodes whose ACL is not their role ACL; called on the walking thread. */
    interface Visitor {
        /**
         * {@code path}'s ACL is {@code actual} (digest hashes shown as {@code user:x} to an identity
         * without ADMIN on it), not {@code expected}; when the walk repairs, it has been set to
         * {@code expected} by now.
         */
        void differs(String path, List<ACL> actual, Stat stat, List<ACL> expected) throws Exception;

        /** The walking identity may not read {@code path} (its ACL, or its children). */
        void unreadable(String path) throws Exception;
    }

    private enum Kind { CHILDREN, ACL, SET_ACL }

    /** One request's reply, handed from Curator's thread to the walking one. */
    private record Reply(Kind kind, String path, int rc, List<String> children, List<ACL> acl, Stat stat,
                         List<ACL> actual, Stat actualStat) {
    }

    /**
     * Repairing passes over {@code ns} (the genesis included) by an admin initialising it: the
     * znodes found there before the genesis (created by anyone, with any ACL) are given their role
     * ACL. A pass lists a znode's children before it sets the znode's ACL, so what was created under
     * a parent still open meanwhile is met by the next pass; the passes end with one that changes
     * no persistent znode, at most {@link DefaultOperator#ROLE_PASSES}. What this client may not
     * read or change fails the call, naming it, once every other znode has its role ACL.
     *
     * @throws OncegateException naming the znodes this client may not read or change, or those still
     *                           appearing with other ACLs after the last pass
     */
    static void secure(CuratorFramework client, String ns, Acls roles) throws Exception {
        java.util.Set<String> locked = new java.util.TreeSet<>();
        List<String> changed = new java.util.ArrayList<>();
        int pass = 0;
        do {
            if (++pass > DefaultOperator.ROLE_PASSES) {
                throw new OncegateException("namespace " + ns + " was initialised, but after " + DefaultOperator.ROLE_PASSES
                        + " passes znodes still appear under it with other ACLs (such as " + String.join(", ", changed)
                        + "): something keeps creating them. Stop it, run `oncegate acl`, and check with `oncegate doctor`");
            }
            changed.clear();
            walk(client, ns, roles, path -> false, true, new Visitor() {
                @Override
                public void differs(String path, List<ACL> actual, Stat stat, List<ACL> expected) {
                    if (stat.getEphemeralOwner() == 0 && changed.size() < 3) {
                        changed.add(path); // set to its role ACL; an ephemeral node goes with its session
                    }
                }

                @Override
                public void unreadable(String path) {
                    locked.add(path);
                }
            });
        } while (!changed.isEmpty());
        if (!locked.isEmpty()) {
            List<String> named = locked.stream().limit(5).toList();
            throw new OncegateException("namespace " + ns + " was initialised, but " + locked.size() + " znode(s) that"
                    + " were there before it keep an ACL this admin may not read or change: " + String.join(", ", named)
                    + (locked.size() > named.size() ? ", …" : "") + " (every other znode has its role ACL now). Have the"
                    + " ZooKeeper super user (the server's zookeeper.DigestAuthenticationProvider.superDigest) look at"
                    + " them and delete them, then check with `oncegate doctor`");
        }
    }

    /**
     * Walks {@code ns} (the namespace's own znode included), comparing each znode's ACL with what
     * {@code roles} give a znode of its kind, and with {@code repair} setting that ACL where it differs;
     * {@code skip} names znodes whose ACL is neither compared nor set (their children are walked).
     *
     * @return how many znodes were walked
     * @throws KeeperException for any failure but a vanished znode or, when reading, a missing
     *                         permission (which the visitor is told of); when repairing, NoAuth too
     */
    static long walk(CuratorFramework client, String ns, Acls roles, Predicate<String> skip, boolean repair,
                     Visitor visitor) throws Exception {
        BlockingQueue<Reply> replies = new LinkedBlockingQueue<>();
        Deque<String> toList = new ArrayDeque<>(List.of(ns));
        int inFlight = 0;
        long walked = 0;
        while (inFlight > 0 || !toList.isEmpty()) {
            while (inFlight < WINDOW && !toList.isEmpty()) {
                String path = toList.pop();
                client.getChildren().inBackground(callback(Kind.CHILDREN, path, null, null, replies)).forPath(path);
                inFlight++;
            }
            Reply r = replies.poll(REPLY_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            if (r == null) {
                throw KeeperException.create(KeeperException.Code.OPERATIONTIMEOUT, ns);
            }
            inFlight--;
            KeeperException.Code code = KeeperException.Code.get(r.rc());
            if (code == KeeperException.Code.NONODE) {
                continue; // gone meanwhile, with everything beneath it
            }
            if (code == KeeperException.Code.NOAUTH && r.kind() != Kind.SET_ACL) {
                visitor.unreadable(r.path());
                continue;
            }
            if (code != KeeperException.Code.OK) {
                throw KeeperException.create(code, r.path());
            }
            switch (r.kind()) {
                case CHILDREN -> {
                    walked++;
                    for (String child : r.children()) {
                        toList.push(r.path() + "/" + child);
                    }
                    if (!skip.test(r.path())) {
                        client.getACL().inBackground(callback(Kind.ACL, r.path(), null, null, replies)).forPath(r.path());
                        inFlight++;
                    }
                }
                case ACL -> {
                    List<ACL> expected = roles.forPath(ns, r.path());
                    if (Acls.same(r.acl(), expected)) {
                        continue;
                    }
                    if (repair) {
                        client.setACL().withACL(expected)
                                .inBackground(callback(Kind.SET_ACL, r.path(), r.acl(), r.stat(), replies)).forPath(r.path());
                        inFlight++;
                    } else {
                        visitor.differs(r.path(), r.acl(), r.stat(), expected);
                    }
                }
                case SET_ACL -> visitor.differs(r.path(), r.actual(), r.actualStat(), roles.forPath(ns, r.path()));
            }
        }
        return walked;
    }

    private static BackgroundCallback callback(Kind kind, String path, List<ACL> actual, Stat actualStat,
                                               BlockingQueue<Reply> replies) {
        return (client, event) -> replies.add(new Reply(kind, path, event.getResultCode(), event.getChildren(),
                event.getACLList(), event.getStat(), actual, actualStat));
    }
}
