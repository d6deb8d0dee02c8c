package dev.oncegate.cli;

import java.io.IOException;
import java.io.InputStream;
import java.lang.ref.Reference;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.time.Duration;
import java.util.Map;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code oncegate sidecar}: one long-lived process beside the agents of a host or pod, one
 * ZooKeeper session and one gate for all of them, served as JSON over HTTP ({@link Sidecar}).
 * Writes its token file and prints one JSON line on stdout once listening; runs until
 * SIGTERM/SIGINT, which releases open leases, lets armed crossings report within half the grace
 * (outcome and release are still answered, every other call gets 503) and records
 * {@code send_status_unknown} for the rest.
 */
@Command(name = "sidecar", mixinStandardHelpOptions = true,
        description = "Serve the gate to local agents in any language: JSON over HTTP on loopback (enter,"
                + " enter-and-cross, checkpoint, cross, outcome, release, inspect), with /metrics and /healthz. One ZooKeeper session for all agents.",
        footer = {"", "Every /v1/ call carries 'Authorization: Bearer TOKEN', the token written (mode 0600) to"
                        + " --token-file at start; /healthz (503 when the ZooKeeper session is not connected) and"
                        + " /metrics need none. The API: client/src/main/resources/dev/oncegate/cli/sidecar-openapi.yaml;"
                        + " the Python client: client/python.",
                "Lifetimes: a handle with no call for --handle-idle-timeout is released (its lease freed); an armed"
                        + " crossing waits --outcome-timeout for the agent's outcome, then records send_status_unknown;"
                        + " a lost session fails every open handle closed.",
                "Beyond loopback it serves HTTPS only: --listen 0.0.0.0:7460 --tls-keystore server.p12"
                        + " --tls-password-file FILE; the token is still required. No Unix socket (the JDK's HTTP server"
                        + " serves TCP only).",
                "Prints {\"sidecar\":\"started\",\"url\":URL,\"token_file\":PATH,…} on stdout once listening.",
                "Exit codes: 0 stopped by a signal with every crossing's outcome recorded; 1 stopped with a crossing whose"
                        + " outcome is not, or may not be, recorded (it reads send_status_unknown, or what an operator"
                        + " recorded); 2 bad input or --listen unusable."})
final class SidecarCommand extends NamespaceCommand {

    static final String DEFAULT_LISTEN = "127.0.0.1:7460";
    static final String TOKEN_FILE = "sidecar.token";

    @Option(names = "--listen", paramLabel = "HOST:PORT", defaultValue = DEFAULT_LISTEN,
            description = "Where to serve (default: ${DEFAULT-VALUE}; port 0 picks a free one, printed on stdout). An"
                    + " address other than loopback needs --tls-keystore.")
    String listen;

    @Option(names = "--token-file", paramLabel = "PATH",
            description = "Where to write the bearer token, mode 0600, at every start once listening (default:"
                    + " sidecar.token in the state directory; a sidecar that cannot listen leaves the file as it was)."
                    + " One sidecar per token file: a running sidecar locks PATH.lock, and a second one given PATH"
                    + " exits 2. Share its directory with the agents (a Kubernetes emptyDir volume).")
    Path tokenFile;

    @Option(names = "--task-id", paramLabel = "ID", defaultValue = "${env:" + RunCommand.TASK_ID_ENV + "}",
            description = "Task id recorded for agents that name none (default: $$" + RunCommand.TASK_ID_ENV
                    + ", else host:pid). Agents name their own with \"task\" in enter.")
    String taskId;

    @Option(names = "--lease-ttl", paramLabel = "DURATION", converter = Durations.class,
            description = "How long a lease lasts without a checkpoint before another contender may take it over"
                    + " (default: the library's, 30s).")
    Duration leaseTtl;

    @Option(names = "--handle-idle-timeout", paramLabel = "DURATION", defaultValue = "60s", converter = Durations.class,
            description = "A handle that has proceeded but not crossed, with no call for this long, is released: an"
                    + " agent that vanished frees its lease (default: ${DEFAULT-VALUE}).")
    Duration idleTimeout;

    @Option(names = "--outcome-timeout", paramLabel = "DURATION", defaultValue = "10m", converter = Durations.class,
            description = "How long an armed crossing waits for the agent's outcome before recording"
                    + " send_status_unknown (default: ${DEFAULT-VALUE}).")
    Duration outcomeTimeout;

    @Option(names = "--threads", paramLabel = "N", defaultValue = "16",
            description = "Request threads, and as many again for enters (default: ${DEFAULT-VALUE}): an enter is"
                    + " read on a request thread and runs on an enter thread, which it holds while it waits (wait_ms),"
                    + " so agents waiting on a key never keep its executor's outcome from being heard. A request must"
                    + " arrive whole (line, headers, body) within " + Sidecar.REQUEST_READ_SECONDS + "s of its first"
                    + " byte, time spent waiting for a free request thread included, or its connection is closed"
                    + " unanswered and nothing is done: a connection that stalls holds a thread that long, not for good.")
    int threads;

    @Option(names = "--max-crossings", paramLabel = "N", defaultValue = "256",
            description = "Armed crossings waiting for their outcome at once, one thread each (default: ${DEFAULT-VALUE});"
                    + " past it, cross answers 503 and arms nothing.")
    int maxCrossings;

    @Option(names = "--shutdown-grace", paramLabel = "DURATION", defaultValue = "10s", converter = Durations.class,
            description = "After SIGTERM/SIGINT, how long armed crossings get to report and be recorded (default:"
                    + " ${DEFAULT-VALUE}): their outcome and release calls are still answered, every other call gets"
                    + " 503. Keep the supervisor's stop timeout above it.")
    Duration shutdownGrace;

    @Option(names = "--session-timeout", paramLabel = "DURATION", defaultValue = "30s", converter = Durations.class,
            description = "The ZooKeeper session asked for (default: ${DEFAULT-VALUE}; the server may cap it).")
    Duration sessionTimeout;

    @Option(names = "--tls-keystore", paramLabel = "PATH",
            description = "A PKCS12 key store with the server's key and certificate: serve HTTPS (required to listen"
                    + " beyond loopback).")
    Path tlsKeystore;

    @Option(names = "--tls-password-file", paramLabel = "PATH",
            description = "A file holding the key store's password (one line).")
    Path tlsPasswordFile;

    @Override
    public Integer call() throws InterruptedException {
        ZooKeeperConnection.Settings settings = zookeeper.settings();
        InetSocketAddress address = ExporterCommand.listenAddress(listen, DEFAULT_LISTEN);
        validate();
        SSLContext tls = tls();
        if (tls == null && !address.getAddress().isLoopbackAddress()) {
            throw usage("--listen: " + listen + " is not a loopback address; the sidecar serves beyond loopback only"
                    + " over TLS (--tls-keystore)");
        }
        Path token = (tokenFile != null ? tokenFile : zookeeper.state.dir().resolve(TOKEN_FILE)).toAbsolutePath().normalize();
        try {
            Files.createDirectories(token.getParent());
        } catch (IOException e) {
            throw new IllegalArgumentException("--token-file: cannot create " + token.getParent() + ": " + e, e);
        }
        String bearer = SidecarToken.generate();
        ZooKeeperConnection zk = zookeeper.open(settings, sessionTimeout);
        Sidecar sidecar;
        SidecarToken.Hold hold = null;
        try {
            zk.learnRoles();
            sidecar = new Sidecar(zk, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
                    new Sidecar.Settings(taskId, leaseTtl, idleTimeout, outcomeTimeout, threads, maxCrossings), bearer);
            try {
                sidecar.bind(address, tls);
            } catch (IOException e) {
                sidecar.close();
                throw new IllegalArgumentException("--listen: cannot listen on " + listen + ": " + e.getMessage(), e);
            }
            // Only now that the port is ours: a sidecar that cannot listen (one runs there already, with this same
            // token file) must leave the running one's token in place, or its agents all get 401. One on another
            // port with this token file is refused by the lock the running one holds, for the same reason.
            try {
                hold = SidecarToken.hold(token);
                SidecarToken.write(token, bearer);
            } catch (RuntimeException e) {
                sidecar.close();
                if (hold != null) {
                    try {
                        hold.close();
                    } catch (IOException closing) {
                        e.addSuppressed(closing);
                    }
                }
                throw e;
            }
            sidecar.serve();
        } catch (RuntimeException | InterruptedException e) {
            zk.close();
            throw e;
        }
        SidecarToken.Hold held = hold;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stop(sidecar, zk, shutdownGrace); // halts the JVM: the lock on the token file goes with the process
            Reference.reachabilityFence(held); // until then it is held: a collected channel would let it go
        }, "oncegate-sidecar-shutdown"));
        Map<String, Object> out = Json.object();
        out.put("sidecar", "started");
        out.put("url", sidecar.url());
        out.put("token_file", token.toString());
        out.put("namespace", zk.namespace());
        out.put("connect", settings.connect());
        out.put("pid", ProcessHandle.current().pid());
        System.out.println(Json.line(out));
        System.out.flush();
        Thread.currentThread().join(); // until the shutdown hook halts the JVM
        return ExitCode.OK;
    }

    private void validate() {
        if (tokenFile != null && tokenFile.toString().isEmpty()) {
            throw usage("--token-file: the path is empty");
        }
        if (taskId != null && taskId.isEmpty()) {
            taskId = null; // an empty $ONCEGATE_TASK_ID counts as unset
        }
        if (taskId != null && taskId.length() > 256) {
            throw usage("--task-id: must be 1 to 256 characters, got " + taskId.length());
        }
        if (idleTimeout.isZero()) {
            throw usage("--handle-idle-timeout: must be more than zero");
        }
        if (outcomeTimeout.isZero()) {
            throw usage("--outcome-timeout: must be more than zero");
        }
        if (threads < 1 || threads > 1024) {
            throw usage("--threads: must be 1 to 1024, got " + threads);
        }
        if (maxCrossings < 1 || maxCrossings > 100_000) {
            throw usage("--max-crossings: must be 1 to 100000, got " + maxCrossings);
        }
        if (shutdownGrace.isZero() || shutdownGrace.compareTo(RunCommand.MAX_SHUTDOWN_GRACE) > 0) {
            throw usage("--shutdown-grace: must be more than zero and at most 1h, got " + Durations.format(shutdownGrace));
        }
        if (sessionTimeout.compareTo(Duration.ofSeconds(1)) < 0) {
            throw usage("--session-timeout: must be at least 1s, got " + Durations.format(sessionTimeout));
        }
        if ((tlsKeystore == null) != (tlsPasswordFile == null)) {
            throw usage("--tls-keystore and --tls-password-file go together");
        }
    }

    /** The TLS context of --tls-keystore, or null. */
    private SSLContext tls() {
        if (tlsKeystore == null) {
            return null;
        }
        try (InputStream in = Files.newInputStream(tlsKeystore)) {
            char[] password = Files.readString(tlsPasswordFile, StandardCharsets.UTF_8).strip().toCharArray();
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(in, password);
            KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keys.init(store, password);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keys.getKeyManagers(), null, null);
            return context;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("--tls-keystore: cannot load " + tlsKeystore + " with the password of "
                    + tlsPasswordFile + ": " + e, e);
        }
    }

    /** Shutdown hook: record what can be recorded (see {@link Sidecar#shutdown}), close, exit 0 or 1. */
    private static void stop(Sidecar sidecar, ZooKeeperConnection zk, Duration grace) {
        int code = ExitCode.OK;
        try {
            if (!sidecar.shutdown(grace)) {
                code = ExitCode.SEND_STATUS_UNKNOWN;
                System.err.println("oncegate sidecar: stopped within " + Durations.format(grace) + " with a crossing"
                        + " whose outcome is not, or may not be, recorded: its scope reads send_status_unknown, or what"
                        + " an operator recorded (`oncegate inspect` shows what was recorded)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            code = ExitCode.SEND_STATUS_UNKNOWN;
        }
        sidecar.close();
        zk.close();
        System.err.println("oncegate sidecar: stopped");
        System.err.flush();
        System.out.flush();
        Runtime.getRuntime().halt(code);
    }
}
