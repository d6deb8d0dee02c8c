package dev.oncegate;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;

/**
 * The backlog index: a <b>hint for operators</b>, never a safety input. It names the keys an operator
 * asks about at 3 a.m. (armed without an outcome, {@code send_status_unknown}, with an unused
 * redelivery authorization, with an unreadable record) so that {@code oncegate list --state
 * send_status_unknown} and the exporter's backlog read cost what the backlog costs, not what the
 * keyspace costs.
 *
 * <pre>
 * NS/backlog                             created by init with everything below it, in one multi
 * NS/backlog/KIND                        armed | unknown | authorized | unreadable
 * NS/backlog/KIND/H                      16 buckets, H the key's first hex digit (each child list stays short)
 * NS/backlog/armed/H/KEY-N               created by the arming multi; removed by the outcome multi, a
 *                                        reconciliation, an authorized scope opening after it, gc
 * NS/backlog/unknown/H/KEY-N             created by the outcome multi of send_status_unknown; removed by a
 *                                        reconciliation, the authorized scope opening after it, gc
 * NS/backlog/authorized/H/KEY-N          created with KEY/authorizations/after-N by oncegate authorize;
 *                                        removed by the multi that opens scope N+1 with it, gc
 * NS/backlog/unreadable/H/KEY            created by an operator's reader that met an unreadable record
 *                                        (inspect, the backlog read, the exporter's walk); removed by the walk
 *                                        once the key reads again, gc
 * </pre>
 *
 * <h2>Why it can never decide anything</h2>
 * The worker credential must be able to create and remove entries (the executor's own multis do),
 * so a stolen one can add or hide entries at will: SPEC §4.9 says no reader may trust such a record
 * for a safety decision, and none does. No executor or operator decision reads the index; an entry
 * only <em>nominates</em> a key, and every key a reader reports from it is confirmed by decoding that
 * key's own records ({@link DefaultOperator#backlog}), so a forged entry costs one key read and shows
 * nothing. What a hidden entry costs is visibility: the key is missing from the fast answers until
 * the exporter's full walk ({@link DefaultOperator#checkIndex}), which stays the authoritative count,
 * finds it, reports the disagreement and, where its role may, puts the entry back.
 *
 * <h2>Maintenance never fails a protocol write</h2>
 * Entry ops go <em>last</em> in the protocol's own multis, so a protocol op that fails is always the
 * one reported ({@link ScopeProtocol#failedOp}), and when only an index op fails (its bucket is gone,
 * an entry was forged in advance or removed meanwhile) the multi is sent again without them
 * ({@link ScopeProtocol#multiWithIndex}): the protocol write lands exactly as it did before the index
 * existed, and the index misses one entry, which the walk repairs. Writers include entry ops only
 * when the index exists: a gate learns that from its every first read of a key (one more op in the
 * read-only multi it sends anyway, {@link ScopeReads#readKey}), an operator from one {@code exists}.
 * So a namespace initialised by an older release, which has no index, behaves exactly as before
 * ({@code oncegate init} run again adds the index; the walk fills in what came before).
 *
 * <p>Stateless and thread-safe.
 */
final class BacklogIndex {

    static final String ROOT = "backlog";
    private static final String HEX = "0123456789abcdef";

    /** An entry's kind: a parent of 16 buckets. */
    enum Kind {
        ARMED("armed"), UNKNOWN("unknown"), AUTHORIZED("authorized"), UNREADABLE("unreadable");

        final String dir;

        Kind(String dir) {
            this.dir = dir;
        }
    }

    /**
     * One entry as named.
     *
     * @param scope the scope it is about; -1 for {@link Kind#UNREADABLE} (about the whole key)
     */
    record Entry(Kind kind, String key, int scope, String path) {
    }

    private BacklogIndex() {
    }

    static String root(String ns) {
        return ns + "/" + ROOT;
    }

    static String bucket(String ns, Kind kind, char hex) {
        return root(ns) + "/" + kind.dir + "/" + hex;
    }

    /** The entry of {@code kind} for scope {@code n} of {@code key} ({@code n} ignored for {@link Kind#UNREADABLE}). */
    static String entry(String ns, Kind kind, String key, int n) {
        return bucket(ns, kind, key.charAt(0)) + "/" + (kind == Kind.UNREADABLE ? key : key + "-" + n);
    }

    /** Every bucket of {@code kind}. */
    static List<String> buckets(String ns, Kind kind) {
        List<String> out = new ArrayList<>(HEX.length());
        for (char c : HEX.toCharArray()) {
            out.add(bucket(ns, kind, c));
        }
        return out;
    }

    /** The index's parents, parents first: the root, each kind, each kind's 16 buckets. */
    static List<String> skeleton(String ns) {
        List<String> out = new ArrayList<>();
        out.add(root(ns));
        for (Kind kind : Kind.values()) {
            out.add(root(ns) + "/" + kind.dir);
        }
        for (Kind kind : Kind.values()) {
            out.addAll(buckets(ns, kind));
        }
        return out;
    }

    /** The entry a child {@code name} of a bucket of {@code kind} denotes, or null when it is not one. */
    static Entry parse(String ns, Kind kind, String bucketPath, String name) {
        String key = name;
        int n = -1;
        if (kind != Kind.UNREADABLE) {
            int dash = name.lastIndexOf('-');
            if (dash < 0) {
                return null;
            }
            key = name.substring(0, dash);
            n = Layout.scopeNumber(name.substring(dash + 1));
            if (n < 0) {
                return null;
            }
        }
        if (key.length() != 64 || !key.equals(key.toLowerCase(Locale.ROOT)) || !key.chars().allMatch(c -> HEX.indexOf(c) >= 0)
                || !bucketPath.endsWith("/" + key.charAt(0))) {
            return null;
        }
        return new Entry(kind, key, n, bucketPath + "/" + name);
    }

    /** {@code create} of an entry, for a multi: persistent, empty, readable by every role, removable where its bucket allows. */
    static Op create(ScopeProtocol protocol, String path) throws Exception {
        return protocol.zk.opCreate(path, new byte[0], CreateMode.PERSISTENT, protocol.acl(Layout.Kind.INDEX_ENTRY));
    }

    static Op delete(ScopeProtocol protocol, String path) throws Exception {
        return protocol.zk.opDelete(path, -1);
    }

    /**
     * Which of {@code paths} exist now, in one read-only multi (a removal of an absent entry would only
     * send its multi twice).
     */
    static List<String> present(ZooKeeperOps zk, List<String> paths) throws Exception {
        if (paths.isEmpty()) {
            return List.of();
        }
        List<Op> ops = new ArrayList<>(paths.size());
        for (String p : paths) {
            ops.add(zk.opGetData(p));
        }
        List<OpResult> results = zk.multi(ops);
        List<String> out = new ArrayList<>();
        for (int i = 0; i < paths.size(); i++) {
            OpResult r = results.get(i);
            if (r instanceof OpResult.GetDataResult) {
                out.add(paths.get(i));
            } else if (r instanceof OpResult.ErrorResult e && e.getErr() != KeeperException.Code.NONODE.intValue()) {
                throw KeeperException.create(KeeperException.Code.get(e.getErr()), paths.get(i));
            }
        }
        return out;
    }

    /** Every entry of {@code key} there can be for scopes {@code 0…latest}: what gc and a repair look for. */
    static List<String> allOf(String ns, String key, int latest) {
        List<String> out = new ArrayList<>();
        for (int n = 0; n <= latest; n++) {
            out.add(entry(ns, Kind.ARMED, key, n));
            out.add(entry(ns, Kind.UNKNOWN, key, n));
            out.add(entry(ns, Kind.AUTHORIZED, key, n));
        }
        out.add(entry(ns, Kind.UNREADABLE, key, -1));
        return out;
    }
}
