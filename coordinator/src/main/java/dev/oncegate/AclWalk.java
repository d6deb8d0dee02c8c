package dev.oncegate;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.zookeeper.CreateMode;
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

        /**
         * When repairing: {@code path}, a {@code KEY/authorizations} znode whose ACL let someone other
         * than an operator create there ({@code weakness}) under the roles its readers went by, holds
         * records that were created while it did, so its ACL was left as it is ({@link #replaceWeak}).
         */
        void held(String path, String weakness) throws Exception;
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
     * An {@code authorizations} znode found there that lets others than an operator create under it is
     * replaced only while empty, as {@code oncegate acl} does ({@link #replaceWeak}).
     *
     * @throws OncegateException naming the znodes this client may not read or change, those it left
     *                           holding records it cannot vouch for, or those still appearing with other
     *                           ACLs after the last pass
     */
    static void secure(CuratorFramework client, String ns, Acls roles) throws Exception {
        java.util.Set<String> locked = new java.util.TreeSet<>();
        java.util.Set<String> held = new java.util.TreeSet<>();
        List<String> changed = new java.util.ArrayList<>();
        int pass = 0;
        do {
            if (++pass > DefaultOperator.ROLE_PASSES) {
                throw new OncegateException("namespace " + ns + " was initialised, but after " + DefaultOperator.ROLE_PASSES
                        + " passes znodes still appear under it with other ACLs (such as " + String.join(", ", changed)
                        + "): something keeps creating them. Stop it, run `oncegate acl`, and check with `oncegate doctor`");
            }
            changed.clear();
            // Nobody went by these roles before (no genesis): every weak authorizations znode is held.
            walk(client, ns, roles, path -> false, true, roles::authorizationsWeakness, new Visitor() {
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

                @Override
                public void held(String path, String weakness) {
                    held.add(path);
                }
            });
        } while (!changed.isEmpty());
        if (!held.isEmpty()) {
            throw new OncegateException("namespace " + ns + " was initialised, but " + heldMessage(held));
        }
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
     * <p>One kind is not simply set: a {@code KEY/authorizations} znode whose ACL its readers refused
     * until this walk ({@code refused} says why, or null; null for the function itself when they
     * refused none). Readers refuse every authorization under such a znode (SPEC §4.9), and its role
     * ACL would make them honour whatever was forged there meanwhile: so it is replaced by an empty one
     * with its role ACL, in one multi that fails when it has children, and when it has, it is left as
     * it is ({@link #replaceWeak}, {@link Visitor#held}).
     *
     * @return how many znodes were walked
     * @throws KeeperException for any failure but a vanished znode or, when reading, a missing
     *                         permission (which the visitor is told of); when repairing, NoAuth too
     */
    static long walk(CuratorFramework client, String ns, Acls roles, Predicate<String> skip, boolean repair,
                     Function<List<ACL>, String> refused, Visitor visitor) throws Exception {
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
                    String weakness = repair && refused != null && Layout.kind(ns, r.path()) == Layout.Kind.AUTHORIZATIONS
                            ? refused.apply(r.acl()) : null;
                    if (weakness != null) {
                        replaceWeak(client, r.path(), r.acl(), r.stat(), expected, weakness, visitor);
                    } else if (repair) {
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

    /**
     * {@code multi(delete(path, its version), create(path, empty, expected))}: a weak
     * {@code authorizations} znode replaced whole, so that nothing created under it while it was weak
     * ever sits under its role ACL. ZooKeeper refuses the delete while it has children (NotEmpty), even
     * one created since it was listed: then its ACL is left as it is, and readers go on refusing what
     * is there ({@link Visitor#held}). Synchronous, on the walking thread: such znodes are rare (a
     * stolen worker credential made them before any honest contender). Curator's retry of a multi whose
     * reply was lost meets either the empty znode it made (replaced again, harmlessly) or an
     * operator's authorization made since (NotEmpty, and the role ACL shows the replacement landed).
     */
    private static void replaceWeak(CuratorFramework client, String path, List<ACL> actual, Stat stat, List<ACL> expected,
                                    String weakness, Visitor visitor) throws Exception {
        try {
            client.transaction().forOperations(
                    client.transactionOp().delete().withVersion(stat.getVersion()).forPath(path),
                    client.transactionOp().create().withMode(CreateMode.PERSISTENT).withACL(expected).forPath(path, new byte[0]));
            visitor.differs(path, actual, stat, expected);
        } catch (KeeperException.NotEmptyException | KeeperException.BadVersionException e) {
            if (Acls.same(client.getACL().forPath(path), expected)) {
                visitor.differs(path, actual, stat, expected); // replaced by this walk's own multi, its reply lost
            } else {
                visitor.held(path, weakness);
            }
        } catch (KeeperException.NoNodeException gone) {
            // removed meanwhile (gc, an admin's deleteall), with everything beneath it
        } catch (KeeperException.NoAuthException e) {
            visitor.unreadable(path);
        }
    }

    /** What {@code oncegate acl} and {@code init} say of the {@code authorizations} znodes they left as they were. */
    static String heldMessage(java.util.Collection<String> held) {
        List<String> named = held.stream().limit(5).toList();
        return held.size() + " authorizations znode(s) let identities other than an operator create there and hold"
                + " records created while they did: " + String.join(", ", named) + (held.size() > named.size() ? ", …" : "")
                + ". Their ACL was left as it is, so contenders go on refusing those records (their role ACL would make"
                + " them honour an after-N forged there). Look at each after-N and reconciled-N record there (`oncegate"
                + " inspect --key KEY`, zkCli `get`), delete those no operator made (zkCli `delete PATH`, as the admin),"
                + " then run `oncegate acl` again: it replaces an empty one with its role ACL; an operator then"
                + " authorizes again what should be redelivered";
    }

    private static BackgroundCallback callback(Kind kind, String path, List<ACL> actual, Stat actualStat,
                                               BlockingQueue<Reply> replies) {
        return (client, event) -> replies.add(new Reply(kind, path, event.getResultCode(), event.getChildren(),
                event.getACLList(), event.getStat(), actual, actualStat));
    }
}
