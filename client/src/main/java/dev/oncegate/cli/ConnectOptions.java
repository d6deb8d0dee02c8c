package dev.oncegate.cli;

import java.time.Duration;

import org.apache.zookeeper.client.ConnectStringParser;
import org.apache.zookeeper.client.ZKClientConfig;
import picocli.CommandLine.Option;

/**
 * Options of the subcommands that talk to ZooKeeper.
 *
 * <p>Not thread-safe; filled in by picocli on the main thread.
 */
final class ConnectOptions {

    static final String DEFAULT_CONNECT = "127.0.0.1:2181";

    @Option(names = "--connect", paramLabel = "HOST:PORT[,…]",
            defaultValue = "${env:ONCEGATE_CONNECT:-127.0.0.1:2181}",
            description = "ZooKeeper connect string (default: $$ONCEGATE_CONNECT, else 127.0.0.1:2181).")
    String connect;

    @Option(names = "--connect-timeout", paramLabel = "DURATION", defaultValue = "15s",
            converter = Durations.class,
            description = "How long to wait for ZooKeeper before failing closed with exit 13 (default: ${DEFAULT-VALUE}).")
    Duration connectTimeout;

    @Option(names = "--zk-client-config", paramLabel = "FILE", defaultValue = "${env:" + ZkClientConfigFile.ENV + "}",
            description = "ZooKeeper client properties (a ZKClientConfig file), e.g. TLS: zookeeper.client.secure=true,"
                    + " zookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty, zookeeper.ssl.keyStore.*,"
                    + " zookeeper.ssl.trustStore.* (default: $$" + ZkClientConfigFile.ENV + "; none: ZooKeeper's defaults).")
    String zkClientConfig;

    /** The client configuration of {@code --zk-client-config}, or null; see {@link ZkClientConfigFile#load}. */
    ZKClientConfig zkClientConfig() {
        return ZkClientConfigFile.load(zkClientConfig);
    }

    @Option(names = "--auth", paramLabel = "USER:PASSWORD",
            description = "ZooKeeper digest identity to authenticate as (also: $$ONCEGATE_AUTH). Shows in ps: prefer"
                    + " --auth-file or the variable.")
    String auth;

    @Option(names = "--auth-file", paramLabel = "FILE",
            description = "A file whose first line is USER:PASSWORD (also: $$ONCEGATE_AUTH_FILE).")
    java.nio.file.Path authFile;

    /**
     * The identity to authenticate as: --auth, --auth-file, $ONCEGATE_AUTH, $ONCEGATE_AUTH_FILE,
     * in that order; null for none (an unauthenticated session).
     *
     * @throws IllegalArgumentException when malformed or unreadable (exit 2), or both options are given
     */
    Credentials credentials() {
        if (auth != null && authFile != null) {
            throw new IllegalArgumentException("--auth and --auth-file are mutually exclusive: give the identity one way");
        }
        if (auth != null) {
            return Credentials.parse(auth, "--auth");
        }
        if (authFile != null) {
            return Credentials.fromFile(authFile, "--auth-file");
        }
        String env = System.getenv("ONCEGATE_AUTH");
        if (env != null && !env.isEmpty()) {
            return Credentials.parse(env, "ONCEGATE_AUTH");
        }
        String file = System.getenv("ONCEGATE_AUTH_FILE");
        if (file != null && !file.isEmpty()) {
            return Credentials.fromFile(java.nio.file.Path.of(file), "ONCEGATE_AUTH_FILE");
        }
        return null;
    }

    /**
     * Everything a connection needs, each checked before anything connects: the connect string,
     * the timeout, the client configuration file and the identity (bad input: exit 2).
     */
    ZooKeeperConnection.Settings settings() {
        return new ZooKeeperConnection.Settings(connect(), connectTimeout, zkClientConfig(), credentials());
    }

    /** The connect string; an empty ONCEGATE_CONNECT counts as unset, an empty --connect is refused (exit 2). */
    String connect() {
        String env = System.getenv("ONCEGATE_CONNECT");
        if ((connect == null || connect.isEmpty()) && env != null && env.isEmpty()) {
            return DEFAULT_CONNECT;
        }
        if (connect == null || connect.isBlank()) {
            throw new IllegalArgumentException("connect: the ZooKeeper connect string is empty"
                    + " (set --connect or ONCEGATE_CONNECT, e.g. 127.0.0.1:2181)");
        }
        String text = connect.strip();
        try {
            ConnectStringParser parsed = new ConnectStringParser(text);
            if (parsed.getServerAddresses().isEmpty()) {
                throw new IllegalArgumentException("no server");
            }
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--connect: '" + text + "' is not a ZooKeeper connect string"
                    + " (HOST:PORT[,HOST:PORT…][/chroot]): " + e.getMessage(), e);
        }
        return text;
    }
}
