package dev.oncegate;

import org.apache.curator.utils.PathUtils;

/**
 * The ZooKeeper layout of SPEC §6, as paths. Stateless and thread-safe.
 *
 * <pre>
 * NS/genesis                      namespace identity (random id, created)
 * NS/genesis/ID                   the same id as a path, for the multis to check (a re-initialised
 *                                 namespace has another id, so a stale executor's write fails)
 * NS/keys/K0K1/K2K3/KEY           key record
 * KEY/authorizations/after-N      operator redelivery record for the consumed scope N
 * KEY/N                           scope N; its data holds the lease, its version is the fencing token
 * KEY/N/latch/...                 Curator LeaderLatch (container parent)
 * KEY/N/armed                     immutable arming record, created once (the arming barrier: one per scope),
 *                                 never empty, so never removable: its child is the outcome
 * KEY/N/armed/outcome             the outcome, created empty with the armed record and written once
 *                                 (version 0 → 1) by the executor, or by an operator's reconciliation
 * KEY/N/armed-ATTEMPT, KEY/N/outcome  the same records before schema 4 (still read)
 * KEY/authorizations/reconciled-N operator reconciliation of scope N (unknown → sent_verified)
 * NS/backlog/KIND/H/ENTRY         the backlog index: a hint for operators, never read by a decision
 *                                 ({@link BacklogIndex})
 * NS/keys/doctor-SEQ              oncegate doctor's ephemeral probe (the server's clock, the create
 *                                 permission); gone with its session, and not a bucket
 * </pre>
 *
 * <p>ZooKeeper checks versions only, and a recreated znode restarts at version 0: a version alone
 * cannot tell two incarnations of a path apart. So every executor write also checks a path that
 * exists only in the incarnation it was issued for: its own election node (lease writes, arming
 * and the outcome) and the genesis id (arming, key creation).
 */
final class Layout {

    static final String GENESIS = "genesis";
    static final String KEYS = "keys";
    static final String AUTHORIZATIONS = "authorizations";
    static final String LATCH = "latch";
    /** The armed record's name (schema 4). */
    static final String ARMED = "armed";
    /** Prefix of the armed record's name before schema 4; the attempt id follows. */
    static final String ARMED_PREFIX = "armed-";
    /** Prefix of an authorization's name; the consumed scope it follows comes after it. */
    static final String AFTER_PREFIX = "after-";
    static final String OUTCOME = "outcome";
    /**
     * Prefix of an operator's reconciliation of scope n; it lives under {@code authorizations},
     * where only operators may create (workers may create under a scope, so one there could be forged).
     */
    static final String RECONCILED_PREFIX = "reconciled-";

    private Layout() {
    }

    static String checkNamespace(String namespace) {
        if (namespace == null) {
            throw new NullPointerException("namespace");
        }
        if (namespace.equals("/") || namespace.endsWith("/") || !namespace.startsWith("/")) {
            throw new IllegalArgumentException("namespace: '" + namespace
                    + "' must be an absolute ZooKeeper path below the root, like /oncegate (no trailing '/')");
        }
        try {
            PathUtils.validatePath(namespace);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("namespace: '" + namespace + "' is not a valid ZooKeeper path: "
                    + e.getMessage(), e);
        }
        if (namespace.startsWith("/zookeeper")) {
            throw new IllegalArgumentException("namespace: /zookeeper is reserved by ZooKeeper");
        }
        return namespace;
    }

    static String genesis(String ns) {
        return ns + "/" + GENESIS;
    }

    /** The genesis id as a path: checked by the multis that must not land in a re-initialised namespace. */
    static String genesisMarker(String ns, String genesisId) {
        return genesis(ns) + "/" + genesisId;
    }

    static String keys(String ns) {
        return ns + "/" + KEYS;
    }

    /** The prefix of a health check's ephemeral probe under the keys ({@code create -e -s}). */
    static String probe(String ns) {
        return keys(ns) + "/doctor-";
    }

    /** Whether a child name of {@code NS/keys} or of a first-level bucket is a bucket: two lower-case hex digits. */
    static boolean isBucket(String name) {
        return name.length() == 2 && Character.digit(name.charAt(0), 16) >= 0 && Character.digit(name.charAt(1), 16) >= 0
                && name.equals(name.toLowerCase(java.util.Locale.ROOT));
    }

    static String bucket(String ns, String key) {
        return keys(ns) + "/" + key.substring(0, 2) + "/" + key.substring(2, 4);
    }

    static String keyPath(String ns, String key) {
        return bucket(ns, key) + "/" + key;
    }

    static String authorizations(String keyPath) {
        return keyPath + "/" + AUTHORIZATIONS;
    }

    static String scope(String keyPath, int scope) {
        return keyPath + "/" + scope;
    }

    static String latch(String scopePath) {
        return scopePath + "/" + LATCH;
    }

    /** The authorization that redelivers after the consumed scope {@code n}. */
    static String authorization(String keyPath, int n) {
        return authorizations(keyPath) + "/" + AFTER_PREFIX + n;
    }

    /** The scope an authorization's name redelivers after, or -1 when the name is not {@code after-<n>}. */
    static int authorizedAfter(String name) {
        return name.startsWith(AFTER_PREFIX) ? scopeNumber(name.substring(AFTER_PREFIX.length())) : -1;
    }

    /** The scope's armed record (schema 4). */
    static String armed(String scopePath) {
        return scopePath + "/" + ARMED;
    }

    /** The scope's outcome (schema 4): the armed record's child, created with it, written once. */
    static String outcome(String scopePath) {
        return armed(scopePath) + "/" + OUTCOME;
    }

    /** A scope's outcome as records before schema 4 placed it, beside the armed record. */
    static String legacyOutcome(String scopePath) {
        return scopePath + "/" + OUTCOME;
    }

    /** The reconciliation of scope {@code n} of the key at {@code keyPath}. */
    static String reconciliation(String keyPath, int n) {
        return authorizations(keyPath) + "/" + RECONCILED_PREFIX + n;
    }

    /** The key of a scope path ({@code KEY/n} → {@code KEY}). */
    static String keyOfScope(String scopePath) {
        return scopePath.substring(0, scopePath.lastIndexOf('/'));
    }

    /** What kind of oncegate znode {@code path} is in namespace {@code ns}: the basis of its ACL. */
    enum Kind {
        ABOVE, NAMESPACE, GENESIS, KEYS, KEY, AUTHORIZATIONS, AUTHORIZATION, SCOPE, LATCH, ELECTION_NODE, RECORD, ARMED, OUTCOME,
        /** {@code NS/backlog} and its kind parents ({@link BacklogIndex}). */
        INDEX,
        /** {@code NS/backlog/KIND/H}: where entries are created and removed. */
        INDEX_BUCKET,
        /** {@code NS/backlog/KIND/H/ENTRY}: a hint, empty, never rewritten. */
        INDEX_ENTRY
    }

    static Kind kind(String ns, String path) {
        if (!path.equals(ns) && !path.startsWith(ns + "/")) {
            return Kind.ABOVE;
        }
        if (path.equals(ns)) {
            return Kind.NAMESPACE;
        }
        String[] p = path.substring(ns.length() + 1).split("/");
        if (p[0].equals(GENESIS)) {
            return Kind.GENESIS;
        }
        if (p[0].equals(BacklogIndex.ROOT)) {
            return p.length <= 2 ? Kind.INDEX : p.length == 3 ? Kind.INDEX_BUCKET : p.length == 4 ? Kind.INDEX_ENTRY : Kind.RECORD;
        }
        if (!p[0].equals(KEYS)) {
            return Kind.RECORD; // nothing else belongs here: the most restrictive kind
        }
        // keys / k0k1 / k2k3 / KEY / (authorizations | n) / …
        if (p.length <= 3) {
            return Kind.KEYS;
        }
        if (p.length == 4) {
            return Kind.KEY;
        }
        if (p[4].equals(AUTHORIZATIONS)) {
            return p.length == 5 ? Kind.AUTHORIZATIONS : Kind.AUTHORIZATION;
        }
        if (p.length == 5) {
            return Kind.SCOPE;
        }
        if (p[5].equals(LATCH)) {
            return p.length == 6 ? Kind.LATCH : Kind.ELECTION_NODE;
        }
        if (p[5].equals(ARMED)) {
            return p.length == 6 ? Kind.ARMED : p.length == 7 && p[6].equals(OUTCOME) ? Kind.OUTCOME : Kind.RECORD;
        }
        return Kind.RECORD;
    }

    /** The scope number a child name of a key denotes, or -1 when it is not a scope. */
    static int scopeNumber(String childName) {
        if (childName.isEmpty() || childName.length() > 9) {
            return -1;
        }
        for (int i = 0; i < childName.length(); i++) {
            char c = childName.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
        }
        if (childName.length() > 1 && childName.charAt(0) == '0') {
            return -1;
        }
        return Integer.parseInt(childName);
    }
}
