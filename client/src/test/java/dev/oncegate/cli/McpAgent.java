package dev.oncegate.cli;

import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.oncegate.testing.Timing;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;

/**
 * One {@code oncegate mcp} process (from {@code target/oncegate.jar}) driven by the MCP SDK's own
 * client over stdio, the way an agent runtime drives it: one agent task. {@link #closeAll()}
 * ends every session still open and kills what is left of this JVM's {@code oncegate mcp}
 * children; tests call it in {@code @AfterEach}.
 */
final class McpAgent implements AutoCloseable {

    static final ObjectMapper JSON = new ObjectMapper();

    private static final List<McpAgent> STARTED = new CopyOnWriteArrayList<>();

    final String task;
    private final McpSyncClient client;
    private final List<String> stderr;

    private McpAgent(String task, McpSyncClient client, List<String> stderr) {
        this.task = task;
        this.client = client;
        this.stderr = stderr;
    }

    /** Starts {@code oncegate mcp --connect CONNECT --task-id TASK [MORE…]} in {@code dir} and initialises its session. */
    static McpAgent start(Path dir, String connect, String task, String... more) {
        List<String> args = new ArrayList<>(javaJar());
        args.addAll(List.of("mcp", "--connect", connect, "--task-id", task, "--shutdown-grace", "20s", "-v"));
        args.addAll(List.of(more));
        ServerParameters params = ServerParameters.builder(args.get(0)).args(args.subList(1, args.size()))
                .env(Map.of("ONCEGATE_STATE_DIR", dir.resolve("state").toString())).build();
        StdioClientTransport transport = new StdioClientTransport(params, new JacksonMcpJsonMapper(new ObjectMapper()));
        List<String> stderr = new CopyOnWriteArrayList<>();
        transport.setStdErrorHandler(stderr::add);
        McpSyncClient client = McpClient.sync(transport).requestTimeout(Timing.PROCESS)
                .initializationTimeout(Timing.PROCESS).build();
        McpAgent agent = new McpAgent(task, client, stderr);
        STARTED.add(agent);
        client.initialize();
        return agent;
    }

    /** {@code java … -jar oncegate.jar}, as {@link Cli} starts it. */
    static List<String> javaJar() {
        return Cli.javaCommand();
    }

    /** The server's tools, as tools/list gives them. */
    List<McpSchema.Tool> tools() {
        return client.listTools().tools();
    }

    /** Calls a tool that must answer without isError; returns its JSON answer. */
    JsonNode call(String tool, Map<String, Object> args) {
        McpSchema.CallToolResult result = client.callTool(new McpSchema.CallToolRequest(tool, args));
        JsonNode answer = answer(result);
        if (Boolean.TRUE.equals(result.isError())) {
            throw new AssertionError(task + ": " + tool + " " + args + " answered an error: " + answer + "\nstderr: " + stderr);
        }
        return answer;
    }

    /** Calls a tool and returns the raw result, errors included. */
    McpSchema.CallToolResult callRaw(String tool, Map<String, Object> args) {
        return client.callTool(new McpSchema.CallToolRequest(tool, args));
    }

    /** A result's JSON answer: its one text content. */
    static JsonNode answer(McpSchema.CallToolResult result) {
        try {
            return JSON.readTree(((McpSchema.TextContent) result.content().get(0)).text());
        } catch (java.io.IOException e) {
            throw new AssertionError("not JSON: " + result, e);
        }
    }

    /** What the server wrote on stderr so far. */
    String stderr() {
        return String.join("\n", stderr);
    }

    /** Ends the session as the SDK's client does (SIGTERM), and waits until the process has exited. */
    @Override
    public void close() {
        if (STARTED.remove(this)) {
            client.closeGracefully();
            await().atMost(Timing.APPEAR).until(() -> processes().noneMatch(p -> p.info().commandLine()
                    .map(c -> c.contains("--task-id " + task + " ")).orElse(false)));
        }
    }

    /** This JVM's {@code oncegate mcp} children still alive. */
    private static Stream<ProcessHandle> processes() {
        return ProcessHandle.current().descendants().filter(ProcessHandle::isAlive)
                .filter(p -> p.info().commandLine().map(c -> c.contains("oncegate.jar mcp")).orElse(false));
    }

    static void closeAll() {
        for (McpAgent agent : STARTED) {
            agent.close();
        }
        processes().forEach(ProcessHandle::destroyForcibly);
    }
}
