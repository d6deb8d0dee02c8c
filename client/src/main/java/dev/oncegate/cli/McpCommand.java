package dev.oncegate.cli;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.oncegate.Gate;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpAsyncServer;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.ServerCapabilities;
import io.modelcontextprotocol.spec.McpServerSession;
import io.modelcontextprotocol.spec.McpServerTransport;
import io.modelcontextprotocol.spec.McpServerTransportProvider;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code oncegate mcp}: the gate as Model Context Protocol tools over stdio ({@link McpTools}),
 * for LLM agents, on the official MCP Java SDK.
 *
 * <p>One process is one MCP session is one agent task: one ZooKeeper session, one {@link Gate}
 * with this task's id, and the effects the agent works on ({@link McpSession}). stdout carries
 * the protocol and nothing else (everything else, logging included, goes to stderr). The session
 * ends when the client closes stdin or sends SIGTERM/SIGINT, or when the SDK stops reading stdin
 * (a line that is not a JSON-RPC message, or one over its size limit: no later call would be
 * answered, so the session ends at once and the process exits 2): then every effect ends the
 * protocol's way (a lease not yet crossed is released; a crossing whose outcome the agent never
 * reported is recorded {@code send_status_unknown}), within {@code --shutdown-grace}.
 */
@Command(name = "mcp", mixinStandardHelpOptions = true,
        description = "Serve the gate as MCP tools over stdio (effect_key, check_effect, checkpoint_effect, cross_effect,"
                + " record_outcome, inspect_effect) for an LLM agent: one process is one agent task, started by the"
                + " agent runtime from its MCP configuration.",
        footer = {"", "stdout carries the MCP protocol only; logs go to stderr. The session ends when the client closes"
                + " stdin, on SIGTERM/SIGINT, or when a line on stdin is not a JSON-RPC message (the SDK then stops"
                + " reading, so the session ends at once): an effect held but not crossed is released; a crossing"
                + " whose outcome was not reported with record_outcome is recorded send_status_unknown.",
                "",
                "Exit codes: 0 the session ended and everything it held was released or recorded as reported; 1 the"
                        + " session ended before the agent reported a crossing's outcome (recorded send_status_unknown),"
                        + " or a crossing's outcome could not be recorded (the key reads send_status_unknown);"
                        + " 2 usage error or bad input (a line on stdin that is not a JSON-RPC message ended the"
                        + " session)."})
final class McpCommand extends NamespaceCommand {

    @Option(names = "--task-id", paramLabel = "ID",
            description = "This agent task's id, recorded in the lease, armed and outcome records and shown to sibling"
                    + " agents (default: $$" + RunCommand.TASK_ID_ENV + ", else host:pid).")
    String taskId;

    @Option(names = "--lease-ttl", paramLabel = "DURATION", defaultValue = "60s", converter = Durations.class,
            description = "How long an effect's lease lasts without a checkpoint before a sibling may take it over,"
                    + " which fences this agent (default: ${DEFAULT-VALUE}; a model is slower than a program).")
    Duration leaseTtl;

    @Option(names = "--shutdown-grace", paramLabel = "DURATION", defaultValue = "10s", converter = Durations.class,
            description = "When the session ends, how long to wait for the releases and outcome writes (default:"
                    + " ${DEFAULT-VALUE}; at most 1h).")
    Duration shutdownGrace;

    @Override
    public Integer call() throws InterruptedException {
        ZooKeeperConnection.Settings settings = zookeeper.settings();
        String task = validate();
        EndOfInput stdin = new EndOfInput(new FileInputStream(FileDescriptor.in));
        OutputStream stdout = new FileOutputStream(FileDescriptor.out);
        // The protocol owns stdout: anything else printed by mistake goes to stderr.
        System.setOut(System.err);
        try (Connection connection = new Connection(zookeeper.open(settings))) {
            ZooKeeperConnection zk = connection.zk;
            Gate gate = connection.gate(zk.gate(b -> {
                b.leaseTtl(leaseTtl);
                if (task != null) {
                    b.taskId(task);
                }
            }));
            McpSession session = new McpSession(gate, zk::learnRoles);
            Ending ending = new Ending(session, shutdownGrace, connection::close);
            Runtime.getRuntime().addShutdownHook(ending.hook);
            // Every call on a thread of its own (see McpTools.specifications); daemon threads, which a call
            // still blocked when the session has ended (a wait the gate is closing under) does not keep alive.
            ExecutorService callThreads = Executors.newCachedThreadPool(call -> {
                Thread t = new Thread(call, "oncegate-mcp-call");
                t.setDaemon(true);
                return t;
            });
            McpTools.Calls calls = new McpTools.Calls(Schedulers.fromExecutorService(callThreads, "oncegate-mcp-calls"));
            McpAsyncServer server = McpServer.async(new Watched(new StdioServerTransportProvider(
                            new JacksonMcpJsonMapper(new ObjectMapper()), new WithoutRootsChanges(stdin, calls), stdout),
                            stdin::unread))
                    .serverInfo("oncegate", version())
                    .instructions(McpTools.INSTRUCTIONS)
                    .capabilities(ServerCapabilities.builder().tools(false).build())
                    .validateToolInputs(false) // each tool validates, answering in its JSON (McpTools.tool)
                    .tools(McpTools.specifications(session, calls))
                    .build();
            try {
                stdin.ended.await();
                if (stdin.atEnd()) {
                    // The calls of the lines before the end first: an outcome reported last is the one recorded.
                    calls.awaitReceived(shutdownGrace);
                    return ending.exitWith(ending.end("the MCP client closed the session"));
                }
                System.err.println("oncegate mcp: the MCP server stopped reading its input: a line on stdin was not a"
                        + " JSON-RPC message the SDK could read, or was over its size limit (its error is above);"
                        + " the session ends now");
                int code = ending.end("the MCP server stopped reading its input");
                return ending.exitWith(code == ExitCode.OK ? ExitCode.USAGE : code);
            } finally {
                // Once the exit code is known the hook stays: a signal from here on (an SDK client's closeGracefully
                // sends SIGTERM as it closes stdin) must exit with it, not with the JVM's 143 for a signal no hook
                // answers. Without one (an exception), the CLI's failure handler decides the exit, as before.
                if (!ending.decided()) {
                    ending.removeHook();
                }
                server.close();
                calls.scheduler.dispose();
            }
        }
    }

    /** Checks what picocli cannot; returns the task id (null: the gate's default). */
    private String validate() {
        String task = taskId != null ? taskId : System.getenv(RunCommand.TASK_ID_ENV);
        if (task != null && task.isEmpty() && taskId == null) {
            task = null;
        }
        if (task != null && (task.isEmpty() || task.length() > 256)) {
            throw usage((taskId != null ? "--task-id" : RunCommand.TASK_ID_ENV)
                    + ": must be 1 to 256 characters, got " + task.length());
        }
        if (leaseTtl.compareTo(Duration.ofSeconds(1)) < 0) {
            throw usage("--lease-ttl: must be at least 1s, got " + Durations.format(leaseTtl));
        }
        if (shutdownGrace.isZero() || shutdownGrace.compareTo(RunCommand.MAX_SHUTDOWN_GRACE) > 0) {
            throw usage("--shutdown-grace: must be more than zero and at most 1h, got " + Durations.format(shutdownGrace));
        }
        return task;
    }

    private static String version() {
        String v = McpCommand.class.getPackage().getImplementationVersion();
        return v != null ? v : "dev";
    }

    /**
     * stdin less the client's {@code notifications/roots/list_changed}, each one a line of its own.
     * The tools use no roots, but the SDK answers that notification by asking the client for its
     * roots ({@code roots/list}), and when that request fails or goes unanswered within its timeout,
     * the error ends the SDK's reading of the session: at once (a wrong "not a JSON-RPC message"
     * end, exit 2), or after the timeout with the process alive, holding its leases and answering
     * nothing. Every other byte passes as it came, line by line (a line is handed on once whole;
     * one longer than {@link #LONGEST_NOTIFICATION} bytes, which cannot be that notification, as it
     * arrives). It also tells {@link McpTools.Calls} of every line it hands on that may be a
 * {@code tools/call} request, which the session's end waits for. Not thread-safe: the SDK's one
 * reader thread reads it.
     */
    static final class WithoutRootsChanges extends InputStream {
        static final int LONGEST_NOTIFICATION = 4096;
        private static final byte[] METHOD = "notifications/roots/list_changed".getBytes(StandardCharsets.US_ASCII);
        private static final ObjectMapper JSON = new ObjectMapper();
        private static final byte[] TOOLS_CALL = "\"tools/call\"".getBytes(StandardCharsets.US_ASCII);

        private final InputStream in;
        private final McpTools.Calls calls;
        private final byte[] chunk = new byte[8192];
        private int chunkPos;
        private int chunkEnd;
        /** The line being gathered (at most {@link #LONGEST_NOTIFICATION} bytes). */
        private final java.io.ByteArrayOutputStream line = new java.io.ByteArrayOutputStream();
        /** Bytes ready for the reader, and how far it has read them. */
        private byte[] ready = new byte[0];
        private int readyPos;
        /** Passing a long line through as it arrives, until its newline. */
        private boolean passing;
        private boolean ended;

        /** {@code calls} is told of every line handed on that may be a tools/call request (null: nobody). */
        WithoutRootsChanges(InputStream in, McpTools.Calls calls) {
            this.in = in;
            this.calls = calls;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            while (readyPos == ready.length) {
                if (!fill()) {
                    return -1;
                }
            }
            int n = Math.min(len, ready.length - readyPos);
            System.arraycopy(ready, readyPos, b, off, n);
            readyPos += n;
            return n;
        }

        /** Makes bytes ready (a whole line, the part of a long one that came, or the last bytes); false at the end. */
        private boolean fill() throws IOException {
            while (true) {
                if (chunkPos == chunkEnd) {
                    if (ended) {
                        byte[] last = line.toByteArray();
                        line.reset();
                        return hand(last);
                    }
                    int n = in.read(chunk, 0, chunk.length);
                    if (n < 0) {
                        ended = true;
                        continue;
                    }
                    chunkPos = 0;
                    chunkEnd = n;
                }
                int newline = -1;
                for (int i = chunkPos; i < chunkEnd; i++) {
                    if (chunk[i] == '\n') {
                        newline = i;
                        break;
                    }
                }
                int upTo = newline < 0 ? chunkEnd : newline + 1;
                if (passing) {
                    byte[] part = java.util.Arrays.copyOfRange(chunk, chunkPos, upTo);
                    chunkPos = upTo;
                    passing = newline < 0;
                    return hand(part);
                }
                line.write(chunk, chunkPos, upTo - chunkPos);
                chunkPos = upTo;
                if (newline >= 0) {
                    byte[] whole = line.toByteArray();
                    line.reset();
                    if (!isRootsChange(whole) && hand(whole)) {
                        return true;
                    }
                } else if (line.size() > LONGEST_NOTIFICATION) {
                    byte[] start = line.toByteArray();
                    line.reset();
                    boolean handed = hand(start);
                    passing = true;
                    return handed;
                }
            }
        }

        private boolean hand(byte[] bytes) {
            ready = bytes;
            readyPos = 0;
            if (calls != null && !passing && indexOf(bytes, TOOLS_CALL) >= 0) {
                calls.handed(); // a long line's parts: only its first (a call's method comes before a long argument)
            }
            return bytes.length > 0;
        }

        /** Whether {@code line} is a JSON-RPC notification (no id) of {@code notifications/roots/list_changed}. */
        static boolean isRootsChange(byte[] line) {
            if (line.length > LONGEST_NOTIFICATION + 1 || indexOf(line, METHOD) < 0) {
                return false;
            }
            try {
                com.fasterxml.jackson.databind.JsonNode message = JSON.readTree(line);
                return message != null && message.isObject() && !message.has("id")
                        && "notifications/roots/list_changed".equals(message.path("method").asText(null));
            } catch (IOException e) {
                return false; // not JSON: the SDK says so
            }
        }

        private static int indexOf(byte[] haystack, byte[] needle) {
            outer:
            for (int i = 0; i + needle.length <= haystack.length; i++) {
                for (int j = 0; j < needle.length; j++) {
                    if (haystack[i + j] != needle[j]) {
                        continue outer;
                    }
                }
                return i;
            }
            return -1;
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }

    /**
     * stdin, telling when the session ends: {@link #ended} opens when stdin ends (the MCP client
     * closed the session: {@link #atEnd}) or when the SDK stops reading it ({@link #unread}).
     */
    static final class EndOfInput extends FilterInputStream {
        final CountDownLatch ended = new CountDownLatch(1);
        private volatile boolean atEnd;

        EndOfInput(InputStream in) {
            super(in);
        }

        /** Whether stdin ended (end of file or a read error), rather than the SDK stopping reading it. */
        boolean atEnd() {
            return atEnd;
        }

        /** The SDK closed its session: it reads stdin no more. */
        void unread() {
            ended.countDown();
        }

        @Override
        public int read() throws IOException {
            return seen(guarded(() -> super.read()));
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            return seen(guarded(() -> super.read(b, off, len)));
        }

        @Override
        public void close() throws IOException {
            ended.countDown();
            super.close();
        }

        private int seen(int n) {
            if (n < 0) {
                atEnd = true;
                ended.countDown();
            }
            return n;
        }

        private int guarded(Read read) throws IOException {
            try {
                return read.read();
            } catch (IOException e) {
                atEnd = true;
                ended.countDown();
                throw e;
            }
        }

        @FunctionalInterface
        private interface Read {
            int read() throws IOException;
        }
    }

    /**
     * The gate and its ZooKeeper connection, closed once, in that order, by whichever thread comes
     * first (the main thread at the end of input, or the signal's hook, which halts the JVM right
     * after): a second caller waits until the first has closed the ZooKeeper session. Without
     * that wait, a halt during the main thread's close could outrun the closeSession request and
     * leave the session's ephemeral election nodes to the session timeout. Thread-safe.
     */
    private static final class Connection implements AutoCloseable {
        final ZooKeeperConnection zk;
        private Gate gate;
        private boolean closed;

        Connection(ZooKeeperConnection zk) {
            this.zk = zk;
        }

        synchronized Gate gate(Gate opened) {
            gate = opened;
            return opened;
        }

        @Override
        public synchronized void close() {
            if (closed) {
                return;
            }
            closed = true;
            try {
                if (gate != null) {
                    gate.close();
                }
            } finally {
                zk.close();
            }
        }
    }

    /**
     * The SDK's stdio transport, telling {@code onClose} when the SDK closes its session's
     * transport. It does so at the end of stdin, and also when a line cannot be read as a JSON-RPC
     * message or is over its size limit: it then stops reading stdin for good (logging the error),
     * while the client may keep stdin open, so the end of stdin alone would never come. Everything
     * else is the SDK's own. Thread-safe as the SDK's provider is.
     */
    static final class Watched implements McpServerTransportProvider {
        private final StdioServerTransportProvider sdk;
        private final Runnable onClose;

        Watched(StdioServerTransportProvider sdk, Runnable onClose) {
            this.sdk = sdk;
            this.onClose = onClose;
        }

        @Override
        public void setSessionFactory(McpServerSession.Factory factory) {
            sdk.setSessionFactory(transport -> factory.create(new Closing(transport, onClose)));
        }

        @Override
        public Mono<Void> notifyClients(String method, Object params) {
            return sdk.notifyClients(method, params);
        }

        @Override
        public Mono<Void> notifyClient(String sessionId, String method, Object params) {
            return sdk.notifyClient(sessionId, method, params);
        }

        @Override
        public void close() {
            sdk.close();
        }

        @Override
        public Mono<Void> closeGracefully() {
            return sdk.closeGracefully();
        }

        @Override
        public List<String> protocolVersions() {
            return sdk.protocolVersions();
        }

        /** The session's transport, running {@code onClose} first when it is closed. */
        private record Closing(McpServerTransport transport, Runnable onClose) implements McpServerTransport {
            @Override
            public void close() {
                onClose.run();
                transport.close();
            }

            @Override
            public Mono<Void> closeGracefully() {
                return transport.closeGracefully().doFinally(signal -> onClose.run());
            }

            @Override
            public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
                return transport.sendMessage(message);
            }

            @Override
            public <T> T unmarshalFrom(Object data, TypeRef<T> type) {
                return transport.unmarshalFrom(data, type);
            }

            @Override
            public List<String> protocolVersions() {
                return transport.protocolVersions();
            }
        }
    }

    /**
     * The session's end, exactly once, from whichever comes first: stdin closing (the main thread)
     * or a signal (the shutdown hook, which then exits with the session's code as {@code run}'s does).
     * Once the main thread knows the command's exit code ({@link #exitWith}) the hook stays: a
     * signal, or the exit itself, runs it, and it closes the connection (again: that is idempotent)
     * and halts with that code.
     */
    private static final class Ending {
        final Thread hook;
        private final McpSession session;
        private final Duration grace;
        private final Runnable close;
        private final CountDownLatch done = new CountDownLatch(1);
        private boolean started;
        private volatile int code = ExitCode.OK;
        /** The command's exit code once the main thread decided it, or null. */
        private volatile Integer exitWith;

        /** {@code close} closes the gate and the ZooKeeper connection, on the signal's way out. */
        Ending(McpSession session, Duration grace, Runnable close) {
            this.session = session;
            this.grace = grace;
            this.close = close;
            this.hook = new Thread(this::onSignal, "oncegate-mcp-shutdown");
        }

        /** Ends the session (or waits for the end already under way); returns the exit code. */
        int end(String why) throws InterruptedException {
            boolean first;
            synchronized (this) {
                first = !started;
                started = true;
            }
            if (!first) {
                done.await(grace.toMillis() + 1_000, TimeUnit.MILLISECONDS);
                return code;
            }
            try {
                int unreported = session.end(why, grace);
                int unrecorded = session.unrecorded();
                code = unreported > 0 || unrecorded > 0 ? ExitCode.SEND_STATUS_UNKNOWN : ExitCode.OK;
                if (unreported > 0) {
                    System.err.println("oncegate mcp: " + why + " before the agent reported the outcome of " + unreported
                            + " crossing(s): recorded send_status_unknown (`oncegate inspect` shows them)");
                }
                if (unrecorded > 0) {
                    System.err.println("oncegate mcp: the outcome of " + unrecorded + " crossing(s) could not be recorded:"
                            + " each key reads send_status_unknown (`oncegate inspect` shows them)");
                }
            } finally {
                done.countDown();
            }
            return code;
        }

        /** Whether {@link #exitWith} was called. */
        boolean decided() {
            return exitWith != null;
        }

        void removeHook() {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException alreadyShuttingDown) {
                // the hook is running: it ends the session and exits
            }
        }

        /** Records {@code exit} as the command's exit code, which the hook halts with from now on; returns it. */
        int exitWith(int exit) {
            exitWith = exit;
            return exit;
        }

        private void onSignal() {
            int exit;
            try {
                int ended = end("the MCP server was told to stop (SIGTERM/SIGINT)");
                Integer decided = exitWith;
                exit = decided != null ? decided : ended;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                exit = ExitCode.SEND_STATUS_UNKNOWN;
            }
            // Close the ZooKeeper session before halting: a released lease's election node is deleted
            // in the background (Curator's LeaderLatch), and a halt that outran it would leave the
            // node to the session timeout, with every sibling waiting behind it.
            try {
                close.run();
            } catch (RuntimeException e) {
                System.err.println("oncegate mcp: closing the ZooKeeper session failed (" + e
                        + "): its ephemeral election nodes go when the session expires");
            }
            System.err.flush();
            Runtime.getRuntime().halt(exit);
        }
    }
}
