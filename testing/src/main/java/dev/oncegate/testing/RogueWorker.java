package dev.oncegate.testing;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.oncegate.EffectKey;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;

/**
 * A holder of a stolen worker credential, for tests of the README's "Threat model": on a client
 * authenticated as the worker, it does, one seeded random choice at a time, whatever the worker
 * role permits to a key — rewrites a scope's data (un-arming it, faking a lease, corrupting it),
 * opens scopes by hand, forges armed records and outcomes ({@code not_sent} above all, with a
 * random secret, with a secret another outcome revealed, and in the layout of older schemas),
 * rewrites outcomes, removes election nodes, tries to authorize, delete and re-permission, and
 * creates keys before any honest contender with ACLs that let anyone do anything under them.
 * Every refusal of ZooKeeper's is part of the game: it is reported, never thrown.
 *
 * <p>Whatever it does, honest contenders must at worst stop: they never deliver in a scope that
 * was not legitimately opened, and a scope that may have been delivered never reads
 * {@code not_sent}. A test checks that on its own ledger, not through oncegate.
 *
 * <p>Not thread-safe: one thread drives it (its choices come from the seeded {@link Random}).
 */
public final class RogueWorker {

    private static final Pattern SECRET = Pattern.compile("\"s\":\"([0-9a-f]{32})\"");

    private final CuratorFramework client;
    private final String namespace;
    private final Random random;

    /**
     * @param client    started, authenticated with the worker credential (and nothing else)
     * @param namespace the namespace to attack
     * @param random    every choice comes from it: a seeded one makes the run repeatable
     */
    public RogueWorker(CuratorFramework client, String namespace, Random random) {
        this.client = Objects.requireNonNull(client, "client");
        this.namespace = Objects.requireNonNull(namespace, "namespace");
        this.random = Objects.requireNonNull(random, "random");
    }

    /**
     * One random attack on {@code key}, as the worker role permits (or is refused).
     *
     * @return what it did and what ZooKeeper answered, one line
     */
    public String strike(EffectKey key) throws InterruptedException {
        String keyPath = key.path(namespace);
        int latest = latestScope(keyPath);
        int n = latest < 0 ? 0 : latest - (latest > 0 && random.nextInt(4) == 0 ? 1 : 0);
        String scope = keyPath + "/" + n;
        int choice = random.nextInt(16);
        return switch (choice) {
            case 0 -> attempt("un-arm " + scope, () -> client.setData().forPath(scope, openScope("initial")));
            case 1 -> attempt("fake lease on " + scope, () -> client.setData().forPath(scope, fakeLease()));
            case 2 -> attempt("open scope " + (latest + 1) + " by hand", () -> client.transaction().forOperations(
                    create(keyPath + "/" + (latest + 1), openScope(random.nextBoolean() ? "not_sent:" + latest : "after-" + latest))));
            case 3 -> attempt("arm " + scope + " itself", () -> client.transaction().forOperations(
                    create(scope + "/armed", armed(secret())), create(scope + "/armed/outcome", new byte[0])));
            case 4 -> attempt("forge not_sent of " + scope + " and open the next scope", () -> client.transaction().forOperations(
                    client.transactionOp().setData().withVersion(0).forPath(scope + "/armed/outcome", outcome("not_sent", secret())),
                    create(keyPath + "/" + (n + 1), openScope("not_sent:" + n))));
            case 5 -> attempt("replay a revealed secret as not_sent in " + scope, () -> {
                String secret = revealedSecret(keyPath, latest);
                client.setData().forPath(scope + "/armed/outcome", outcome("not_sent", secret != null ? secret : secret()));
            });
            case 6 -> attempt("rewrite the outcome of " + scope, () -> client.setData().forPath(scope + "/armed/outcome",
                    outcome(random.nextBoolean() ? "not_sent" : "sent_verified", secret())));
            case 7 -> attempt("legacy not_sent beside " + scope + "'s armed record, and the next scope", () ->
                    client.transaction().forOperations(create(scope + "/outcome", legacyNotSent()),
                            create(keyPath + "/" + (n + 1), openScope("not_sent:" + n))));
            case 8 -> attempt("legacy armed record under " + scope, () -> client.transaction().forOperations(
                    create(scope + "/armed-" + HexFormat.of().toHexDigits(random.nextLong()), legacyArmed())));
            case 9 -> attempt("remove the election of " + scope, () -> {
                for (String node : client.getChildren().forPath(scope + "/latch")) {
                    client.delete().quietly().forPath(scope + "/latch/" + node);
                }
            });
            case 10 -> attempt("authorize a redelivery after " + latest, () -> client.create()
                    .forPath(keyPath + "/authorizations/after-" + latest, "{\"by\":\"rogue\",\"reason\":\"again\"}".getBytes(StandardCharsets.UTF_8)));
            case 11 -> attempt("delete a record of " + scope, () -> client.delete().forPath(List.of(scope + "/armed/outcome",
                    scope + "/armed", scope, keyPath + "/authorizations").get(random.nextInt(4))));
            case 12 -> attempt("make " + scope + " deletable by anyone", () -> client.setACL()
                    .withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath(random.nextBoolean() ? scope : scope + "/armed"));
            case 13 -> attempt("garble " + scope, () -> client.setData().forPath(scope, "{oops".getBytes(StandardCharsets.UTF_8)));
            case 14 -> attempt("reconcile " + scope + " itself", () -> client.transaction().forOperations(
                    client.transactionOp().setData().withVersion(0).forPath(scope + "/armed/outcome",
                            ("{\"v\":4,\"o\":\"sent_verified\",\"r\":\"reconciled-" + n + "\"}").getBytes(StandardCharsets.UTF_8))));
            default -> precreate(key);
        };
    }

    /**
     * Creates {@code key} before any honest contender, as the rogue likes it: the key, its
     * {@code authorizations} and its scope 0, each with a role-like or a world-writable ACL.
     *
     * @return what it did and what ZooKeeper answered, one line
     */
    public String precreate(EffectKey key) throws InterruptedException {
        String keyPath = key.path(namespace);
        return attempt("create " + keyPath + " first", () -> {
            client.create().creatingParentsIfNeeded().forPath(ZKPaths.getPathAndNode(keyPath).getPath());
            client.transaction().forOperations(create(keyPath, keyRecord(key)),
                    create(keyPath + "/authorizations", new byte[0]), create(keyPath + "/0", openScope("initial")));
        });
    }

    private interface Strike {
        void run() throws Exception;
    }

    private static String attempt(String what, Strike strike) throws InterruptedException {
        try {
            strike.run();
            return what + ": done";
        } catch (KeeperException e) {
            return what + ": " + e.code();
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            return what + ": " + e;
        }
    }

    private int latestScope(String keyPath) throws InterruptedException {
        try {
            int latest = -1;
            for (String child : client.getChildren().forPath(keyPath)) {
                if (child.matches("0|[1-9][0-9]{0,8}")) {
                    latest = Math.max(latest, Integer.parseInt(child));
                }
            }
            return latest;
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            return -1;
        }
    }

    /** A secret some outcome of the key revealed (any executor's), or null. */
    private String revealedSecret(String keyPath, int latest) throws Exception {
        for (int m = latest; m >= 0; m--) {
            try {
                Matcher found = SECRET.matcher(new String(client.getData().forPath(keyPath + "/" + m + "/armed/outcome"),
                        StandardCharsets.UTF_8));
                if (found.find()) {
                    return found.group(1);
                }
            } catch (KeeperException.NoNodeException none) {
                // not armed
            }
        }
        return null;
    }

    /** A create in a transaction: mostly with the role ACL (the client's ACL provider), sometimes writable by anyone. */
    private CuratorOp create(String path, byte[] data) throws Exception {
        var create = client.transactionOp().create();
        return random.nextInt(3) == 0 ? create.withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath(path, data)
                : create.forPath(path, data);
    }

    private String secret() {
        byte[] bytes = new byte[16];
        random.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }

    private static String actor() {
        return "{\"t\":\"rogue\",\"h\":\"rogue-host\",\"p\":1,\"s\":\"1\",\"a\":\"00000000000000ff\"}";
    }

    private static byte[] openScope(String why) {
        return ("{\"v\":4,\"o\":\"" + why + "\",\"t\":\"" + Instant.now() + "\",\"h\":null}").getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] fakeLease() {
        return ("{\"v\":4,\"o\":\"initial\",\"t\":\"" + Instant.now() + "\",\"h\":{\"t\":\"rogue\",\"h\":\"rogue-host\","
                + "\"p\":1,\"s\":\"1\",\"a\":\"00000000000000ff\",\"n\":\"_c_rogue-latch-0000000000\",\"e\":\""
                + Instant.now().plusSeconds(3600) + "\"}}").getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] armed(String secret) {
        return ("{\"v\":4,\"c\":[],\"m\":\"" + commitment(secret) + "\",\"b\":" + actor() + ",\"k\":1,\"z\":1,\"t\":\""
                + Instant.now() + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] outcome(String outcome, String secret) {
        return ("{\"v\":4,\"o\":\"" + outcome + "\",\"d\":\"forged\",\"s\":\"" + secret + "\",\"b\":" + actor()
                + ",\"k\":1,\"z\":1,\"t\":\"" + Instant.now() + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] legacyNotSent() {
        return ("{\"v\":3,\"o\":\"not_sent\",\"d\":\"forged\",\"b\":" + actor() + ",\"k\":1,\"z\":1,\"t\":\""
                + Instant.now() + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] legacyArmed() {
        return ("{\"v\":3,\"c\":[],\"b\":" + actor() + ",\"k\":1,\"z\":1,\"t\":\"" + Instant.now() + "\"}")
                .getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] keyRecord(EffectKey key) {
        return ("{\"v\":4,\"p\":\"" + key.destination().provider() + "\",\"i\":\"" + key.destination().identity().wireName()
                + "\",\"d\":\"" + key.destination().id() + "\",\"s\":\"" + key.sha256() + "\",\"c\":\"" + Instant.now()
                + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    private static String commitment(String secret) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(("oncegate-commitment/v1\n" + secret).getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

}
