package dev.oncegate.cli;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.oncegate.Checkup;
import dev.oncegate.OncegateException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ConnectStringParser;
import org.apache.zookeeper.client.FourLetterWordMain;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.X509Exception;
import org.apache.zookeeper.server.quorum.QuorumPeerConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code oncegate doctor}: checks what a fleet needs from its ZooKeeper before the first delivery,
 * and prints one line per check with a fix for each that is not ok. What touches oncegate's
 * records (the genesis, the ACLs, the probe that reads the server's clock) is the library's
 * {@link dev.oncegate.Operator#checkup}; the four-letter words, the session and the judgements
 * ({@link DoctorChecks}) are here.
 */
@Command(name = "doctor", mixinStandardHelpOptions = true,
        description = {"Check connectivity, the ZooKeeper servers' versions, the namespace's genesis, access control (this"
                + " identity's role and what it may do), every znode's ACL against its role ACL (with access control on:"
                + " it reads each znode's ACL, bucket by bucket), the negotiated session timeout against the lease TTL,"
                + " this host's clock against the server's, and autopurge. One line per check: ok, warn, fail (or skip, when"
                + " an earlier failure makes it moot), with a fix for each that is not ok.",
                "Writes one ephemeral znode, NS/keys/doctor-N, where this identity's role may create (a worker, the admin,"
                        + " anyone without access control): its creation time is the server's clock. It goes with the"
                        + " session when doctor ends. Nothing else is written."},
        footer = {"", "Exit codes: 0 nothing failed (warnings may remain); 2 bad input (nothing checked); 13 at least one"
                + " check failed (ZooKeeper unreachable included)."})
final class DoctorCommand extends NamespaceCommand {

    @Option(names = "--lease-ttl", paramLabel = "DURATION", defaultValue = "30s", converter = Durations.class,
            description = "The lease TTL the fleet's gates use, to judge the session timeout and the clock against"
                    + " (default: ${DEFAULT-VALUE}, the gate's default and `oncegate run`'s).")
    Duration leaseTtl;

    @Option(names = "--session-timeout", paramLabel = "DURATION", defaultValue = "30s", converter = Durations.class,
            description = "The session timeout the fleet's clients ask for; doctor asks for it and reports what the"
                    + " server grants (default: ${DEFAULT-VALUE}, what the CLI asks for).")
    Duration sessionTimeout;

    @Option(names = "--server-config", paramLabel = "ZOO_CFG",
            description = "A server's zoo.cfg, read with ZooKeeper's own parser, for the autopurge check (run doctor on"
                    + " that server's host); without it autopurge is unknown, since ZooKeeper reports it to no client.")
    Path serverConfig;

    @Option(names = "--json", description = "Print one JSON object instead of one line per check.")
    boolean json;

    @Override
    public Integer call() throws InterruptedException {
        String namespace = zookeeper.namespace();
        ZooKeeperConnection.Settings settings = zookeeper.settings();
        if (leaseTtl.compareTo(Duration.ofMillis(100)) < 0) {
            throw new IllegalArgumentException("--lease-ttl: must be at least 100ms (a gate's minimum), got "
                    + Durations.format(leaseTtl));
        }
        if (sessionTimeout.isZero() || sessionTimeout.toMillis() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("--session-timeout: must be above zero, got " + Durations.format(sessionTimeout));
        }
        QuorumPeerConfig purgeConfig = readServerConfig();

        List<DoctorChecks.Check> checks = new ArrayList<>();
        List<DoctorChecks.Check> later = new ArrayList<>();
        long started = System.nanoTime();
        try (ZooKeeperConnection zk = zookeeper.open(settings, sessionTimeout)) {
            boolean connected;
            try {
                zk.awaitConnected();
                connected = true;
            } catch (UnavailableException e) {
                connected = false;
            }
            long millis = (System.nanoTime() - started) / 1_000_000;
            String session = connected ? "0x" + Long.toHexString(handle(zk).getSessionId()) : null;
            checks.add(DoctorChecks.connection(settings.connect(), connected, millis, session, settings.connectTimeout()));
            checks.add(DoctorChecks.servers(askServers(settings)));
            if (!connected) {
                for (String name : List.of("genesis", "access", "acls", "session", "clock")) {
                    later.add(DoctorChecks.Check.skip(name, "no connection"));
                }
            } else {
                later.addAll(namespaceChecks(zk, namespace, settings));
            }
        }
        checks.addAll(later);
        checks.add(DoctorChecks.autopurge(purgeConfig, serverConfig));
        print(settings.connect(), namespace, checks);
        return checks.stream().anyMatch(c -> c.status() == DoctorChecks.Status.FAIL) ? ExitCode.STOP_UNAVAILABLE : ExitCode.OK;
    }

    /** genesis, access, acls, session and clock, on a connected client. */
    private List<DoctorChecks.Check> namespaceChecks(ZooKeeperConnection zk, String namespace,
                                                     ZooKeeperConnection.Settings settings) throws InterruptedException {
        List<DoctorChecks.Check> out = new ArrayList<>();
        Duration negotiated = Duration.ofMillis(handle(zk).getSessionTimeout());
        Checkup checkup;
        try {
            Credentials identity = settings.credentials();
            checkup = zk.operator().checkup(identity == null ? null : identity.digest());
        } catch (OncegateException e) {
            out.add(new DoctorChecks.Check("genesis", DoctorChecks.Status.FAIL, "could not read the namespace: "
                    + e.getMessage(), "check that ZooKeeper stays reachable (the connection line) and run doctor again",
                    Map.of()));
            out.add(DoctorChecks.Check.skip("access", "the namespace could not be read"));
            out.add(DoctorChecks.Check.skip("acls", "the namespace could not be read"));
            out.add(DoctorChecks.session(sessionTimeout, negotiated, leaseTtl));
            out.add(DoctorChecks.Check.skip("clock", "the namespace could not be read"));
            return out;
        }
        out.add(DoctorChecks.genesis(checkup, namespace));
        out.add(checkup.genesis() == null ? DoctorChecks.Check.skip("access", "no readable genesis")
                : DoctorChecks.access(checkup));
        out.add(checkup.genesis() == null ? DoctorChecks.Check.skip("acls", "no readable genesis")
                : DoctorChecks.acls(checkup, namespace));
        out.add(DoctorChecks.session(sessionTimeout, negotiated, leaseTtl));
        if (checkup.clock() != null) {
            out.add(DoctorChecks.clock(checkup.clock(), leaseTtl));
        } else if (checkup.genesis() == null) {
            out.add(DoctorChecks.Check.skip("clock", "no readable genesis"));
        } else {
            out.add(new DoctorChecks.Check("clock", DoctorChecks.Status.WARN, "unknown: this identity may not create the"
                    + " probe znode whose creation time is the server's clock (an operator may not create keys)",
                    "run doctor as the worker or the admin of this namespace (--auth) on this host", Map.of()));
        }
        return out;
    }

    /** {@code srvr} to every server of the connect string, over TLS when the client configuration says so. */
    private List<DoctorChecks.ServerAnswer> askServers(ZooKeeperConnection.Settings settings) {
        ZKClientConfig config = settings.clientConfig() != null ? settings.clientConfig() : new ZKClientConfig();
        int timeout = (int) Math.max(500, Math.min(settings.connectTimeout().toMillis(), 5_000));
        List<DoctorChecks.ServerAnswer> answers = new ArrayList<>();
        for (InetSocketAddress server : new ConnectStringParser(settings.connect()).getServerAddresses()) {
            String address = server.getHostString() + ":" + server.getPort();
            try {
                answers.add(new DoctorChecks.ServerAnswer(address,
                        FourLetterWordMain.send4LetterWord(server.getHostString(), server.getPort(), "srvr", config, timeout),
                        null));
            } catch (IOException | X509Exception.SSLContextException e) {
                answers.add(new DoctorChecks.ServerAnswer(address, null, e.getMessage() == null ? e.toString() : e.getMessage()));
            }
        }
        return answers;
    }

    private QuorumPeerConfig readServerConfig() {
        if (serverConfig == null) {
            return null;
        }
        QuorumPeerConfig config = new QuorumPeerConfig();
        try {
            config.parse(serverConfig.toString());
            return config;
        } catch (QuorumPeerConfig.ConfigException | IllegalArgumentException e) {
            throw new IllegalArgumentException("--server-config: ZooKeeper cannot read " + serverConfig + ": "
                    + (e.getCause() != null ? e.getCause().getMessage() : e.getMessage()), e);
        }
    }

    /** The client's ZooKeeper handle, to read what the server negotiated. */
    private static ZooKeeper handle(ZooKeeperConnection zk) throws InterruptedException {
        try {
            return zk.client().getZookeeperClient().getZooKeeper();
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            throw new UnavailableException("the ZooKeeper client closed during doctor: " + e);
        }
    }

    private void print(String connect, String namespace, List<DoctorChecks.Check> checks) {
        boolean failed = checks.stream().anyMatch(c -> c.status() == DoctorChecks.Status.FAIL);
        boolean warned = checks.stream().anyMatch(c -> c.status() == DoctorChecks.Status.WARN);
        if (json) {
            Map<String, Object> out = Json.object();
            out.put("connect", connect);
            out.put("namespace", namespace);
            out.put("status", failed ? "fail" : warned ? "warn" : "ok");
            out.put("checks", checks.stream().map(c -> {
                Map<String, Object> m = Json.object();
                m.put("check", c.name());
                m.put("status", c.status().wireName());
                m.put("detail", c.detail());
                m.put("fix", c.fix());
                m.put("data", c.data());
                return m;
            }).toList());
            System.out.println(Json.line(out));
            return;
        }
        for (DoctorChecks.Check c : checks) {
            System.out.printf("%-4s  %-9s  %s%s%n", c.status().wireName(), c.name(), c.detail(),
                    c.fix() == null ? "" : " | fix: " + c.fix());
        }
    }
}
