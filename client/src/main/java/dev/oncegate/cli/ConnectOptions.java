package dev.oncegate.cli;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
    static final String CONNECT_ENV = "ONCEGATE_CONNECT";
    static final String HOST_ENV = "ONCEGATE_HOST";
    /** The default of --connect-timeout, as picocli and {@link QuickRun} read it. */
    static final String DEFAULT_CONNECT_TIMEOUT = "15s";

    /** A host name or IPv4 address, or an IPv6 address in brackets; then an optional port. */
    private static final Pattern SERVER = Pattern.compile(
            "(?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?|\\[[0-9A-Fa-f:.]+(?:%[A-Za-z0-9_.-]+)?\\])(?::([0-9]{1,5}))?");

    @Option(names = "--connect", paramLabel = "HOST:PORT[,…]",
            defaultValue = "${env:" + CONNECT_ENV + ":-" + DEFAULT_CONNECT + "}",
            description = "ZooKeeper connect string: HOST[:PORT],… (a host name, an IPv4 address or an IPv6 address in"
                    + " brackets), then an optional /chroot (default: $$ONCEGATE_CONNECT, else 127.0.0.1:2181).")
    String connect;

    @Option(names = "--connect-timeout", paramLabel = "DURATION", defaultValue = DEFAULT_CONNECT_TIMEOUT,
            converter = Durations.class,
            description = "How long to wait for ZooKeeper before failing closed with exit 13: every wait for the"
                    + " connection together, from the client's start (default: ${DEFAULT-VALUE}).")
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
    Path authFile;

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
            return Credentials.fromFile(Path.of(file), "ONCEGATE_AUTH_FILE");
        }
        return null;
    }

    @Option(names = "--host", paramLabel = "NAME", defaultValue = "${env:" + HOST_ENV + "}",
            description = "This machine's name in the records (leases, armed records, outcomes, authorizations) and in"
                    + " run's default task id (default: $$" + HOST_ENV + ", else the local host name, resolved when it"
                    + " resolves, else as the kernel has it).")
    String host;

    /**
     * Everything a connection needs, each checked before anything connects: the connect string,
     * the timeout, the client configuration file, the identity and this machine's name (bad
     * input: exit 2).
     */
    ZooKeeperConnection.Settings settings() {
        return new ZooKeeperConnection.Settings(connect(), connectTimeout, zkClientConfig(), credentials(), null, host());
    }

    /**
     * --host, else a non-empty $ONCEGATE_HOST, else the local host name: resolved, as the
     * library names it, when it resolves; else as the kernel has it (a name no resolver knows is
     * still this machine's name).
     *
     * @throws IllegalArgumentException when --host is empty or too long, or no name can be found (exit 2)
     */
    String host() {
        if (host != null && !host.isEmpty()) {
            if (host.isBlank() || host.length() > 256) {
                throw new IllegalArgumentException("--host: must be 1 to 256 characters, not blank");
            }
            return host;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException unresolvable) {
            for (String file : new String[] {"/proc/sys/kernel/hostname", "/etc/hostname"}) {
                try {
                    String name = Files.readString(Path.of(file), StandardCharsets.UTF_8).strip();
                    if (!name.isEmpty()) {
                        return name;
                    }
                } catch (IOException | RuntimeException unreadable) {
                    // the next place
                }
            }
            String env = System.getenv("HOSTNAME");
            if (env != null && !env.isBlank()) {
                return env.strip();
            }
            throw new IllegalArgumentException("this machine's name cannot be found (" + unresolvable.getMessage()
                    + "): give it with --host or " + HOST_ENV, unresolvable);
        }
    }

    /** The connect string; an empty ONCEGATE_CONNECT counts as unset, an empty --connect is refused (exit 2). */
    String connect() {
        String env = System.getenv(CONNECT_ENV);
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
            requireHostPorts(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--connect: '" + text + "' is not a ZooKeeper connect string"
                    + " (HOST:PORT[,HOST:PORT…][/chroot]): " + e.getMessage(), e);
        }
        return text;
    }

    /**
     * Refuses what ZooKeeper's own parser takes for a host but no resolver ever could, such as
     * {@code garbage::::} (it would fail only after the whole --connect-timeout).
     */
    private static void requireHostPorts(String text) {
        int chroot = text.indexOf('/');
        String servers = chroot < 0 ? text : text.substring(0, chroot);
        for (String server : servers.split(",", -1)) {
            Matcher m = SERVER.matcher(server.strip());
            if (!m.matches()) {
                throw new IllegalArgumentException("'" + server.strip() + "' is not HOST[:PORT] (a host name, an IPv4"
                        + " address or an IPv6 address in brackets)");
            }
            if (m.group(1) != null && (Integer.parseInt(m.group(1)) < 1 || Integer.parseInt(m.group(1)) > 65535)) {
                throw new IllegalArgumentException("'" + server.strip() + "': the port must be 1 to 65535");
            }
        }
    }
}
