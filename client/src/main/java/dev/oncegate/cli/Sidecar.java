package dev.oncegate.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import javax.net.ssl.SSLContext;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.oncegate.ActionResult;
import dev.oncegate.Attempt;
import dev.oncegate.BoundaryAction;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.IdentityKind;
import dev.oncegate.KeyHistory;
import dev.oncegate.OncegateException;
import dev.oncegate.ProvenNotSentException;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code oncegate sidecar}'s server: the library's {@link Gate}, {@link Attempt} and crossing
 * served as JSON over HTTP to agents in any language, on one ZooKeeper session. The endpoints,
 * their fields and status codes are documented in {@code sidecar-openapi.yaml} (a test holds the
 * two together); each endpoint is one library call, so the protocol has one implementation.
 *
 * <h2>Threads</h2>
 * Requests run on a small fixed pool ({@code --threads}); an open handle holds no thread between
 * calls. An armed crossing holds one thread of its own while it waits for the agent's outcome,
 * because the library invokes the boundary action on the thread that crosses (bounded by
 * {@code --max-crossings}). One scheduler thread expires idle handles and idle task gates.
 *
 * <h2>Security</h2>
 * Every {@code /v1/} call carries {@code Authorization: Bearer TOKEN}, the token the sidecar wrote
 * to its token file (mode 0600) at start; a call without it, or with another, is answered 401
 * before its body is read. {@code /healthz} and {@code /metrics} need no token: they show no key.
 * A refused call (401, 4xx) has changed nothing.
 *
 * <p>Thread-safe: the handle table is concurrent, each handle serialises its own calls.
 */
final class Sidecar implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Sidecar.class);

    /**
     * Seconds a connection may take from its request's first byte to the end of its body
     * ({@code sun.net.httpserver.maxReqTime}), unless set on the command line. The JDK's server
     * reads the request line, headers and body on a request thread, before the handler (and so
     * before authentication) runs, and by default waits for them forever: a local process opening
     * {@code --threads} connections that each send one byte would hold every request thread, and
     * /healthz and /v1/outcome with them. Past this bound the server closes the connection, which
     * frees its thread. It covers reading the request only: a handler's own wait (an enter's
     * {@code wait_ms}, an outcome being recorded) starts once the body is read and is not cut.
     */
    static final long REQUEST_READ_SECONDS = 10;

    static {
        // The JDK's server writes a response's headers and body apart: without TCP_NODELAY, Nagle's algorithm and
        // the client's delayed ACK hold every answer ~40 ms. Read once, when the first HttpServer is made.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
        // Also read once, then checked every sun.net.httpserver.timerMillis (1 s by default): see REQUEST_READ_SECONDS.
        if (System.getProperty("sun.net.httpserver.maxReqTime") == null) {
            System.setProperty("sun.net.httpserver.maxReqTime", Long.toString(REQUEST_READ_SECONDS));
        }
    }

    static final String JSON = "application/json";
    /** Longest evidence an outcome may carry: records stay compact (every server holds them in its heap). */
    static final int MAX_EVIDENCE = 2048;
    /** Longest wait an enter may ask for. */
    static final long MAX_WAIT_MS = Duration.ofHours(1).toMillis();

    private static final Set<String> ENTER_FIELDS = Set.of("key", "destination", "destination_name", "sha256", "file",
            "task", "wait_ms");
    private static final Set<String> HANDLE_FIELDS = Set.of("handle", "token");
    private static final Set<String> CHECKPOINT_FIELDS = Set.of("handle", "token", "name");
    private static final Set<String> OUTCOME_FIELDS = Set.of("handle", "token", "outcome", "evidence");
    private static final Set<String> INSPECT_FIELDS = Set.of("key", "destination", "destination_name", "sha256", "file");
    /**
     * The calls still taken once SIGTERM's stop began: the stop gives armed crossings half of
     * {@code --shutdown-grace} to report, so {@code outcome} must be heard, and {@code release}
     * only gives a lease back. Everything that would start work (enter, checkpoint, cross) or
     * read for it (inspect) answers 503.
     */
    private static final Set<String> WHILE_STOPPING = Set.of("outcome", "release");

    /**
     * How the sidecar behaves.
     *
     * @param taskId         the default gate's task id (null: host:pid)
     * @param leaseTtl       the gates' lease TTL (null: the library's default)
     * @param idleTimeout    an open handle with no call for this long is released; a finished one forgotten
     * @param outcomeTimeout an armed crossing with no outcome for this long records send_status_unknown
     * @param threads        request threads
     * @param maxCrossings   armed crossings waiting for an outcome at once
     * @param lateEnter      how long past its {@code wait_ms} an enter-and-cross may get its decision and still arm
     *                       ({@link #LATE_ENTER} unless a test says otherwise)
     */
    record Settings(String taskId, Duration leaseTtl, Duration idleTimeout, Duration outcomeTimeout, int threads,
                    int maxCrossings, Duration lateEnter) {
        Settings(String taskId, Duration leaseTtl, Duration idleTimeout, Duration outcomeTimeout, int threads,
                 int maxCrossings) {
            this(taskId, leaseTtl, idleTimeout, outcomeTimeout, threads, maxCrossings, LATE_ENTER);
        }
    }

    /**
     * How long past its own {@code wait_ms} an enter-and-cross may get its decision and still arm
     * ({@link #enterAndCross}): as long as a request may take to arrive.
     */
    static final Duration LATE_ENTER = Duration.ofSeconds(REQUEST_READ_SECONDS);

    private final ZooKeeperConnection zk;
    private final PrometheusMeterRegistry registry;
    private final Settings settings;
    private final byte[] bearer;
    private final SidecarGates gates;
    private final Map<String, SidecarHandle> handles = new ConcurrentHashMap<>();
    private final ThreadPoolExecutor requests;
    /** Where enters run ({@link #enterLater}), apart from the request threads. */
    private final ThreadPoolExecutor enters;
    private final ThreadPoolExecutor crossings;
    private final ScheduledExecutorService reaper;
    private final SecureRandom random = new SecureRandom();
    private final Duration armBound;
    private volatile boolean stopping;
    private HttpServer server;

    Sidecar(ZooKeeperConnection zk, PrometheusMeterRegistry registry, Settings settings, String bearerToken) {
        this.zk = zk;
        this.registry = registry;
        this.settings = settings;
        this.bearer = bearerToken.getBytes(StandardCharsets.UTF_8);
        this.gates = new SidecarGates(task -> {
            try {
                // Made at a task's first enter, however late: the whole connect timeout, not what is left of it.
                return zk.gate(zk.connectTimeout(), b -> {
                    b.meterRegistry(registry);
                    String t = task != null ? task : settings.taskId();
                    if (t != null) {
                        b.taskId(t);
                    }
                    if (settings.leaseTtl() != null) {
                        b.leaseTtl(settings.leaseTtl());
                    }
                });
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // the sidecar is stopping: the call fails closed
                throw new IllegalStateException("the sidecar is stopping", e);
            }
        });
        gates.acquire(null, System.nanoTime()); // the default gate, for inspect and task-less agents: never idle
        this.requests = new ThreadPoolExecutor(settings.threads(), settings.threads(), 0, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(), threads("oncegate-sidecar-http-"));
        this.enters = new ThreadPoolExecutor(settings.threads(), settings.threads(), 0, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(), threads("oncegate-sidecar-enter-"));
        this.crossings = new ThreadPoolExecutor(0, settings.maxCrossings(), 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
                threads("oncegate-sidecar-crossing-"));
        this.reaper = Executors.newSingleThreadScheduledExecutor(threads("oncegate-sidecar-reaper-"));
        // Well past the library's own bound on the arming reply (twice the session plus the connect timeout).
        this.armBound = Duration.ofMinutes(5);
    }

    private static ThreadFactory threads(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** Starts serving on {@code address}, over TLS when {@code tls} is not null: {@link #bind}, then {@link #serve}. */
    void start(InetSocketAddress address, SSLContext tls) throws IOException {
        bind(address, tls);
        serve();
    }

    /**
     * Binds the listening socket on {@code address}, over TLS when {@code tls} is not null, and
     * serves nothing yet: an address in use fails here, so the caller writes the token file only
     * once this succeeded (a second sidecar must not replace the running one's token).
     */
    void bind(InetSocketAddress address, SSLContext tls) throws IOException {
        if (tls != null) {
            HttpsServer https = HttpsServer.create(address, 64);
            https.setHttpsConfigurator(new HttpsConfigurator(tls));
            server = https;
        } else {
            server = HttpServer.create(address, 64);
        }
        server.createContext("/", this::dispatch); // each path through dispatch closes the exchange it answers
        server.setExecutor(requests);
    }

    /** Starts answering on the address {@link #bind} bound. */
    void serve() {
        server.start();
        long tick = Math.max(100, Math.min(1_000, settings.idleTimeout().toMillis() / 4));
        reaper.scheduleWithFixedDelay(this::expire, tick, tick, TimeUnit.MILLISECONDS);
    }

    /** The address served, with the port chosen when 0 was asked for. */
    InetSocketAddress address() {
        return server.getAddress();
    }

    String url() {
        return (server instanceof HttpsServer ? "https://" : "http://") + MetricsEndpoint.text(address());
    }

    int openHandles() {
        return handles.size();
    }

    // ---- routing -----------------------------------------------------------------------------

    /** What answers a request: sends the answer (true: it will be sent later), or throws what {@link #respond} turns into one. */
    private interface Answering {
        boolean answer() throws IOException, InterruptedException;
    }

    /**
     * Answers on the request thread and closes the exchange, except an enter's, which
     * {@link #enterLater} answers and closes on an enter thread.
     */
    private void dispatch(HttpExchange exchange) throws IOException {
        String path = exchange.getRequestURI().getPath();
        String method = exchange.getRequestMethod();
        boolean later = false;
        try {
            later = respond(exchange, path, () -> route(exchange, path, method));
        } finally {
            if (!later) {
                exchange.close();
            }
        }
    }

    /** Answers the request, or hands it to {@link #enterLater}: then true. */
    private boolean route(HttpExchange exchange, String path, String method) throws IOException, InterruptedException {
        switch (path) {
            case "/healthz" -> {
                requireMethod(method, "GET");
                health(exchange);
            }
            case "/metrics" -> {
                requireMethod(method, "GET");
                send(exchange, 200, MetricsEndpoint.CONTENT_TYPE, registry.scrape());
            }
            case "/v1/enter", "/v1/enter-and-cross", "/v1/checkpoint", "/v1/cross", "/v1/outcome", "/v1/release",
                 "/v1/inspect" -> {
                requireMethod(method, "POST");
                authenticate(exchange);
                String endpoint = path.substring(4);
                if (stopping && !WHILE_STOPPING.contains(endpoint)) {
                    throw new SidecarError(503, null, "the sidecar is stopping; nothing was done (until it stops,"
                            + " it takes only outcome and release for the handles it holds)");
                }
                if (endpoint.equals("enter") || endpoint.equals("enter-and-cross")) {
                    enterLater(exchange, path, endpoint, SidecarRequest.read(exchange.getRequestBody(), ENTER_FIELDS));
                    return true;
                }
                sendJson(exchange, 200, call(endpoint, exchange));
            }
            default -> throw new SidecarError(404, null, "no such endpoint: " + path
                    + " (POST /v1/enter, /v1/enter-and-cross, /v1/checkpoint, /v1/cross, /v1/outcome, /v1/release,"
                    + " /v1/inspect; GET /healthz, /metrics)");
        }
        return false;
    }

    /**
     * An enter, read whole on the request thread, is answered from a thread of {@code enters}: an
     * enter may wait ({@code wait_ms}) for the very outcome that another agent is about to report,
     * so waiting enters must never hold the request threads that outcome calls need. The request
     * thread is free again at once, and the request's read time ({@link #REQUEST_READ_SECONDS})
     * ended with its body.
     */
    private void enterLater(HttpExchange exchange, String path, String endpoint, SidecarRequest r) {
        long read = System.nanoTime();
        Answering answering = () -> {
            sendJson(exchange, 200, endpoint.equals("enter") ? enter(r).answer() : enterAndCross(r, read));
            return false;
        };
        try {
            enters.execute(() -> {
                try (exchange) {
                    respond(exchange, path, answering);
                } catch (IOException e) {
                    LOG.debug("oncegate sidecar: the answer to {} could not be sent ({})", path, e.toString());
                }
            });
        } catch (RejectedExecutionException closing) {
            throw new SidecarError(503, null, "the sidecar is stopping; nothing was done");
        }
    }

    /**
     * Runs {@code answering}, and answers what it throws: a refusal, 503 when unavailable or
     * interrupted, else 500. Returns what {@code answering} returned (false when it threw).
     */
    private boolean respond(HttpExchange exchange, String path, Answering answering) throws IOException {
        try {
            return answering.answer();
        } catch (SidecarError e) {
            if (e.status() == 401) {
                exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"oncegate\"");
            }
            if (e.status() == 405) {
                exchange.getResponseHeaders().set("Allow", e.field());
            }
            sendJson(exchange, e.status(), error(e.getMessage(), e.status() == 405 ? null : e.field()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            sendJson(exchange, 503, error("interrupted (the sidecar is stopping)", null));
        } catch (OncegateException e) {
            sendJson(exchange, 503, error("unavailable: " + e.getMessage(), null));
        } catch (RuntimeException e) {
            LOG.error("oncegate sidecar: {} failed", path, e);
            sendJson(exchange, 500, error("internal error: " + e, null));
        }
        return false;
    }

    private Map<String, Object> call(String endpoint, HttpExchange exchange) throws IOException, InterruptedException {
        long now = System.nanoTime();
        return switch (endpoint) {
            case "checkpoint" -> checkpoint(SidecarRequest.read(exchange.getRequestBody(), CHECKPOINT_FIELDS), now);
            case "cross" -> cross(SidecarRequest.read(exchange.getRequestBody(), HANDLE_FIELDS), now);
            case "outcome" -> outcome(SidecarRequest.read(exchange.getRequestBody(), OUTCOME_FIELDS), now);
            case "release" -> release(SidecarRequest.read(exchange.getRequestBody(), HANDLE_FIELDS), now);
            case "inspect" -> inspect(SidecarRequest.read(exchange.getRequestBody(), INSPECT_FIELDS));
            default -> throw new IllegalStateException(endpoint);
        };
    }

    private static void requireMethod(String method, String allowed) {
        if (!method.equals(allowed)) {
            throw new SidecarError(405, allowed, "method " + method + " not allowed here: use " + allowed);
        }
    }

    private void authenticate(HttpExchange exchange) {
        String header = exchange.getRequestHeaders().getFirst("Authorization");
        if (header == null || !header.startsWith("Bearer ")) {
            throw new SidecarError(401, "Authorization", "Authorization: missing 'Bearer TOKEN' (the token is in the"
                    + " sidecar's --token-file); nothing was done");
        }
        byte[] presented = header.substring("Bearer ".length()).strip().getBytes(StandardCharsets.UTF_8);
        if (!MessageDigest.isEqual(presented, bearer)) {
            throw new SidecarError(401, "Authorization", "Authorization: wrong bearer token (read it again from the"
                    + " sidecar's --token-file: a restarted sidecar writes a new one); nothing was done");
        }
    }

    // ---- endpoints -----------------------------------------------------------------------------

    /** An enter's answer, and the handle it opened (null on a stop). */
    private record Entered(Map<String, Object> answer, SidecarHandle handle) {
    }

    private Entered enter(SidecarRequest r) throws InterruptedException {
        String task = r.text("task");
        if (task != null && (task.isEmpty() || task.length() > 256)) {
            throw SidecarError.badField("task", "must be 1 to 256 characters, got " + task.length());
        }
        long waitMs = r.integer("wait_ms", 0, MAX_WAIT_MS, 0);
        EffectKey key = resolveKey(r);
        long now = System.nanoTime();
        Gate gate;
        try {
            gate = gates.acquire(task, now);
        } catch (IllegalArgumentException e) {
            throw SidecarError.badField("task", e.getMessage().replaceFirst("^taskId: ", ""));
        }
        Attempt attempt;
        try {
            attempt = gate.enter(key, Duration.ofMillis(waitMs));
        } catch (InterruptedException | RuntimeException e) {
            gates.release(task, System.nanoTime());
            throw e;
        }
        Decision decision = attempt.decision();
        Map<String, Object> out = Json.object();
        SidecarHandle handle = null;
        if (decision instanceof Decision.Stop || stopping) {
            attempt.close();
            gates.release(task, System.nanoTime());
            out.put("handle", null);
            if (!(decision instanceof Decision.Stop)) {
                throw new SidecarError(503, null, "the sidecar is stopping; the lease was released, nothing was done");
            }
        } else {
            String id = HexFormat.of().formatHex(nextId());
            handle = new SidecarHandle(id, attempt, task, System.nanoTime(),
                    () -> gates.release(task, System.nanoTime()));
            handles.put(id, handle);
            out.put("handle", id);
        }
        out.put("key", key.key());
        decision(out, decision);
        return new Entered(out, handle);
    }

    /**
     * Enter, then cross at once when it proceeded: the library's two calls in one round trip, for
     * an agent with no checkpoint. A stop arms nothing; so does a crossing with no thread free,
     * which also releases the lease (the agent never saw the handle). So does a decision that came
     * more than {@link Settings#lateEnter} past the request's own {@code wait_ms} after the request was
     * read ({@code read}), queued behind enters that wait: its agent may have given up meanwhile, and
     * a scope armed for nobody is consumed for good. The lease is released and the answer is 503.
     */
    private Map<String, Object> enterAndCross(SidecarRequest r, long read) throws InterruptedException {
        Entered entered = enter(r);
        Map<String, Object> out = entered.answer();
        SidecarHandle handle = entered.handle();
        if (handle == null) {
            out.put("armed", false);
            out.put("idempotency_key", null);
            return out;
        }
        long waitMs = r.integer("wait_ms", 0, MAX_WAIT_MS, 0);
        long took = System.nanoTime() - read;
        if (took > TimeUnit.MILLISECONDS.toNanos(waitMs) + settings.lateEnter().toNanos()) {
            handle.finish("released: the decision came too late to arm at once");
            throw new SidecarError(503, null, "the decision (proceed) came " + TimeUnit.NANOSECONDS.toMillis(took)
                    + " ms after the request was read, more than its wait_ms plus " + settings.lateEnter().toMillis()
                    + " ms (enters were queued): nothing was armed, in case its agent had given up, and the lease was"
                    + " released: enter again");
        }
        handle.claim(handle.token().version(), System.nanoTime());
        try {
            Object result;
            try {
                result = handle.cross(crossings, settings.outcomeTimeout(), armBound);
            } catch (SidecarError e) {
                if (handle.state() == SidecarHandle.State.OPEN) {
                    handle.finish("released: no crossing thread was free (--max-crossings)");
                    throw new SidecarError(e.status(), e.field(), "too many crossings in flight (--max-crossings);"
                            + " nothing was armed and the lease was released: enter again");
                }
                throw e;
            }
            crossed(out, handle, result);
            if (!(Boolean) out.get("armed")) {
                out.put("handle", null);
            }
            return out;
        } finally {
            handle.unclaim(System.nanoTime());
        }
    }

    /** How many enters are being answered now, each on an enter thread (for tests). */
    int entersRunning() {
        return enters.getActiveCount();
    }

    private byte[] nextId() {
        byte[] id = new byte[16];
        random.nextBytes(id);
        return id;
    }

    private Map<String, Object> checkpoint(SidecarRequest r, long now) throws InterruptedException {
        String name = r.requiredText("name");
        if (name.length() > 128) {
            throw SidecarError.badField("name", "a checkpoint name has 1 to 128 characters, got " + name.length());
        }
        SidecarHandle handle = claim(r, now);
        try {
            handle.requireOpen("checkpoint");
            Decision decision;
            try {
                decision = handle.checkpoint(name);
            } catch (IllegalArgumentException e) {
                throw SidecarError.badField("name", e.getMessage().replaceFirst("^name: ", ""));
            }
            Map<String, Object> out = Json.object();
            out.put("key", handle.key.key());
            decision(out, decision);
            return out;
        } finally {
            handle.unclaim(System.nanoTime());
        }
    }

    private Map<String, Object> cross(SidecarRequest r, long now) throws InterruptedException {
        SidecarHandle handle = claim(r, now);
        try {
            handle.requireOpen("cross");
            Object result = handle.cross(crossings, settings.outcomeTimeout(), armBound);
            Map<String, Object> out = Json.object();
            out.put("key", handle.key.key());
            crossed(out, handle, result);
            return out;
        } finally {
            handle.unclaim(System.nanoTime());
        }
    }

    /** A crossing's fields: armed (act now) with the idempotency key, or the stop that refused it. */
    private static void crossed(Map<String, Object> out, SidecarHandle handle, Object result) {
        if (result instanceof BoundaryAction.Context context) {
            out.put("armed", true);
            out.put("decision", "proceed");
            out.put("reason", null);
            out.put("scope", context.scope());
            out.put("token", context.token().version());
            out.put("zxid", context.token().zxid());
            out.put("idempotency_key", context.idempotencyKey());
            out.put("evidence", null);
        } else {
            Crossing.Refused refused = (Crossing.Refused) result;
            out.put("armed", false);
            decision(out, refused.stop());
            out.put("scope", handle.scope());
            out.put("idempotency_key", null);
        }
    }

    private Map<String, Object> outcome(SidecarRequest r, long now) throws InterruptedException {
        String outcome = r.requiredText("outcome");
        String evidence = r.text("evidence");
        if (evidence != null && evidence.length() > MAX_EVIDENCE) {
            throw SidecarError.badField("evidence", "at most " + MAX_EVIDENCE + " characters, got " + evidence.length());
        }
        Object result = switch (outcome) {
            case "sent_verified" -> ActionResult.verified(evidence == null || evidence.isEmpty()
                    ? "the agent reported sent_verified" : evidence);
            case "not_sent" -> {
                if (evidence == null || evidence.isBlank()) {
                    throw SidecarError.badField("evidence", "not_sent needs proof that nothing was delivered; without it"
                            + " report send_status_unknown");
                }
                yield new ProvenNotSentException(evidence);
            }
            case "send_status_unknown", "unknown" -> ActionResult.unconfirmed(evidence == null || evidence.isEmpty()
                    ? "the agent reported send_status_unknown" : evidence);
            default -> throw SidecarError.badField("outcome", "must be sent_verified, not_sent (with evidence) or"
                    + " send_status_unknown, got '" + outcome + "'");
        };
        SidecarHandle handle = claim(r, now);
        try {
            Crossing.Crossed crossed = handle.report(result, armBound);
            Map<String, Object> out = Json.object();
            out.put("key", handle.key.key());
            Render.crossed(out, crossed);
            out.put("detail", crossed.detail());
            return out;
        } finally {
            handle.unclaim(System.nanoTime());
        }
    }

    private Map<String, Object> release(SidecarRequest r, long now) {
        SidecarHandle handle = claim(r, now);
        try {
            if (handle.state() == SidecarHandle.State.CROSSING) {
                throw SidecarError.conflict("handle", "armed: the lease cannot be released after crossing; report the"
                        + " outcome (send_status_unknown when you are not sure)");
            }
            handle.finish("released by the agent");
            Map<String, Object> out = Json.object();
            out.put("key", handle.key.key());
            out.put("released", true);
            return out;
        } finally {
            handle.unclaim(System.nanoTime());
        }
    }

    private Map<String, Object> inspect(SidecarRequest r) throws InterruptedException {
        String key = r.text("key");
        if (key != null && !r.has("destination") && !r.has("destination_name")) {
            requireKey(key);
        } else {
            key = resolveKey(r).key();
        }
        return Render.history(defaultGate().inspect(key));
    }

    private Gate defaultGate() {
        Gate gate = gates.acquire(null, System.nanoTime());
        gates.release(null, System.nanoTime());
        return gate;
    }

    /** The handle a call names, claimed for the call (see {@link SidecarHandle#claim}). */
    private SidecarHandle claim(SidecarRequest r, long now) {
        String id = r.requiredText("handle");
        long token = r.requiredInteger("token", 0, Integer.MAX_VALUE);
        SidecarHandle handle = handles.get(id);
        if (handle == null) {
            throw new SidecarError(404, "handle", "handle: unknown (never issued by this sidecar, or forgotten after"
                    + " --handle-idle-timeout " + Durations.format(settings.idleTimeout()) + "); enter again");
        }
        handle.claim(token, now);
        return handle;
    }

    // ---- effect keys -------------------------------------------------------------------------

    private static void requireKey(String key) {
        try {
            EffectKey.requireKeyText(key);
        } catch (IllegalArgumentException e) {
            throw SidecarError.badField("key", e.getMessage().replaceFirst("^key: ", ""));
        }
    }

    /** The effect a request names: destination (or destination_name) with sha256 or file, or a known key alone. */
    private EffectKey resolveKey(SidecarRequest r) throws InterruptedException {
        String key = r.text("key");
        String dest = r.text("destination");
        String destName = r.text("destination_name");
        String sha = r.text("sha256");
        String file = r.text("file");
        if (key != null) {
            requireKey(key);
        }
        if (dest != null && destName != null) {
            throw SidecarError.badField("destination_name", "give destination or destination_name, not both");
        }
        if (dest == null && destName == null) {
            if (sha != null || file != null) {
                throw SidecarError.badField("destination", "missing: " + (sha != null ? "sha256" : "file")
                        + " needs destination (PROVIDER:ID) or destination_name (PROVIDER:TITLE)");
            }
            if (key == null) {
                throw SidecarError.badField("destination", "missing: give destination (PROVIDER:ID) or destination_name"
                        + " (PROVIDER:TITLE) with sha256 or file, or the key of an effect entered before");
            }
            return knownKey(key);
        }
        String field = dest != null ? "destination" : "destination_name";
        Destination destination;
        try {
            destination = Destination.parse(dest != null ? IdentityKind.STABLE : IdentityKind.DISPLAY_NAME,
                    dest != null ? dest : destName);
        } catch (IllegalArgumentException e) {
            throw SidecarError.badField(field, e.getMessage());
        }
        if (sha != null && file != null) {
            throw SidecarError.badField("file", "give sha256 or file, not both");
        }
        if (sha == null && file == null) {
            throw SidecarError.badField("sha256", "missing: give sha256 (64 lower-case hex) or file (a path the sidecar reads)");
        }
        EffectKey effect;
        try {
            effect = sha != null ? EffectKey.of(destination, sha) : EffectKey.of(destination, Path.of(file));
        } catch (IllegalArgumentException e) {
            throw SidecarError.badField(sha != null ? "sha256" : "file", e.getMessage()
                    .replaceFirst("^(sha256|file): ", ""));
        }
        if (key != null && !key.equals(effect.key())) {
            throw SidecarError.badField("key", "is not the key of this destination and content (that is " + effect.key()
                    + "); check the client's key derivation");
        }
        return effect;
    }

    /** A key given alone: its destination and content hash come from its key record. */
    private EffectKey knownKey(String key) throws InterruptedException {
        KeyHistory history = defaultGate().inspect(key);
        KeyHistory.KeyRecord record = history.record();
        if (!history.exists() || record == null) {
            throw new SidecarError(404, "key", "key: " + (history.exists() ? "its key record is unreadable" : "unknown")
                    + "; enter it by destination and sha256 (or file)");
        }
        return new EffectKey(key, new Destination(record.provider(), IdentityKind.fromWireName(record.identity()),
                record.destination()), record.sha256());
    }

    // ---- answers -------------------------------------------------------------------------------

    private static void decision(Map<String, Object> out, Decision decision) {
        out.put("decision", decision.kind());
        if (decision instanceof Decision.Proceed proceed) {
            out.put("reason", null);
            out.put("scope", proceed.scope());
            out.put("token", proceed.token().version());
            out.put("zxid", proceed.token().zxid());
            out.put("evidence", null);
        } else {
            Decision.Stop stop = (Decision.Stop) decision;
            out.put("reason", stop.reason().wireName());
            out.put("scope", stop.evidence().scope() < 0 ? null : stop.evidence().scope());
            out.put("token", null);
            out.put("zxid", null);
            out.put("evidence", Json.evidence(stop.evidence()));
        }
    }

    private void health(HttpExchange exchange) throws IOException {
        boolean connected = zk.client().getZookeeperClient().isConnected();
        Map<String, Object> out = Json.object();
        out.put("status", stopping ? "stopping" : connected ? "ok" : "unavailable");
        out.put("zookeeper", connected ? "connected" : "disconnected");
        out.put("namespace", zk.namespace());
        out.put("open_handles", handles.size());
        out.put("crossings", crossings.getActiveCount());
        sendJson(exchange, !stopping && connected ? 200 : 503, out);
    }

    private static Map<String, Object> error(String message, String field) {
        Map<String, Object> out = Json.object();
        out.put("error", message);
        out.put("field", field);
        return out;
    }

    private static void sendJson(HttpExchange exchange, int status, Map<String, Object> body) throws IOException {
        send(exchange, status, JSON, Json.line(body) + "\n");
    }

    private static void send(HttpExchange exchange, int status, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.getResponseHeaders().set("Cache-Control", "no-store");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    // ---- lifetimes -----------------------------------------------------------------------------

    /** The scheduler's tick: releases idle open handles, forgets old finished ones, closes idle task gates. */
    private void expire() {
        try {
            long now = System.nanoTime();
            long idle = settings.idleTimeout().toNanos();
            for (SidecarHandle handle : handles.values()) {
                switch (handle.state()) {
                    case OPEN -> {
                        if (now - handle.lastUsed() < idle) {
                            continue;
                        }
                        if (handle.finishIfIdle("released after --handle-idle-timeout "
                                + Durations.format(settings.idleTimeout()) + " without a call")) {
                            LOG.info("oncegate sidecar: handle of key {} idle for {}: lease released", handle.key.key(),
                                    Durations.format(settings.idleTimeout()));
                        }
                    }
                    case FINISHED -> {
                        if (now - handle.finishedAt() >= idle) {
                            handles.remove(handle.id, handle);
                        }
                    }
                    case CROSSING -> {
                        // the crossing thread ends it (outcome or --outcome-timeout)
                    }
                }
            }
            gates.closeIdle(now, idle);
        } catch (RuntimeException e) {
            LOG.warn("oncegate sidecar: expiring idle handles failed: {}", e.toString());
        }
    }

    /**
     * SIGTERM: refuse new work (every call but outcome and release), release every open lease,
     * give armed crossings half of {@code grace} to get their agents' outcomes, then record
     * {@code send_status_unknown} for the rest and wait (the other half) until it is recorded.
     *
     * @return true when every crossing of the stop (armed when it began, or armed by a call that
     *         was under way) ended with its outcome recorded; false when one is still running, or
     *         came back {@code recorded=false}: its scope does not read what was reported (exit 1)
     */
    boolean shutdown(Duration grace) throws InterruptedException {
        stopping = true;
        long started = System.nanoTime();
        long deadline = started + grace.toNanos();
        long half = started + grace.toNanos() / 2;
        for (SidecarHandle handle : handles.values()) {
            handle.finishIfIdle("released: the sidecar stopped");
        }
        // Held here, not looked up at the end: the reaper may forget a finished handle during a long grace.
        List<SidecarHandle> watched = handles.values().stream()
                .filter(h -> h.state() != SidecarHandle.State.FINISHED)
                .toList();
        while (!allCrossingsOver() && System.nanoTime() < half) {
            TimeUnit.MILLISECONDS.sleep(20); // polling the crossing threads; no event to wait on across handles
        }
        List<SidecarHandle> abandoned = handles.values().stream()
                .filter(h -> h.abandonCrossing("the sidecar stopped (SIGTERM) before the agent reported its outcome"))
                .toList();
        if (!abandoned.isEmpty()) {
            LOG.warn("oncegate sidecar: stopping with {} armed crossing(s) unreported: recording send_status_unknown",
                    abandoned.size());
        }
        while (!allCrossingsOver() && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(20);
        }
        // A handle finished before the stop is not the stop's: its agent was answered recorded=false already.
        List<SidecarHandle> unrecorded = Stream.concat(watched.stream(), handles.values().stream()
                        .filter(h -> h.state() != SidecarHandle.State.FINISHED || h.finishedAt() - started >= 0))
                .distinct()
                .filter(SidecarHandle::crossingUnrecorded)
                .toList();
        for (SidecarHandle handle : unrecorded) {
            LOG.warn("oncegate sidecar: the outcome of key {} was not recorded ({}): its scope reads"
                    + " send_status_unknown or what an operator recorded", handle.key.key(), handle.ending());
        }
        return allCrossingsOver() && unrecorded.isEmpty();
    }

    private boolean allCrossingsOver() {
        return handles.values().stream().allMatch(SidecarHandle::crossingOver);
    }

    @Override
    public void close() {
        stopping = true;
        if (server != null) {
            server.stop(0);
        }
        reaper.shutdownNow();
        for (SidecarHandle handle : handles.values()) {
            handle.abandonCrossing("the sidecar closed before the agent reported its outcome");
            handle.finishIfIdle("released: the sidecar closed");
        }
        crossings.shutdown();
        try {
            crossings.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        enters.shutdownNow();
        requests.shutdownNow();
        gates.close();
    }
}
