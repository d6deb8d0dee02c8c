package dev.oncegate;

import org.apache.curator.utils.PathUtils;

/**
 * The ZooKeeper layout of SPEC §6, as paths. Stateless and thread-safe.
 *
 * <pre>
 * NS/genesis                      namespace identity
 * NS/keys/K0K1/K2K3/KEY           key record
 * KEY/authorizations/auth-N       operator redelivery records
 * KEY/N                           scope N; its data holds the lease, its version is the fencing token
 * KEY/N/latch/...                 Curator LeaderLatch (container parent)
 * KEY/N/armed                     immutable arming record
 * KEY/N/outcome                   immutable outcome record
 * </pre>
 */
final class Layout {

    static final String GENESIS = "genesis";
    static final String KEYS = "keys";
    static final String AUTHORIZATIONS = "authorizations";
    static final String LATCH = "latch";
    static final String ARMED = "armed";
    static final String OUTCOME = "outcome";

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

    static String keys(String ns) {
        return ns + "/" + KEYS;
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

    static String armed(String scopePath) {
        return scopePath + "/" + ARMED;
    }

    static String outcome(String scopePath) {
        return scopePath + "/" + OUTCOME;
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
