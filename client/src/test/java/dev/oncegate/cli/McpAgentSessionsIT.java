package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oncegate.testing.Timing;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code oncegate mcp} driven over stdio by the MCP SDK's client, one process per agent task,
 * against a real ZooKeeper: siblings racing for one effect, a session that ends after crossing
 * and one that ends before it, with what the records say afterwards. The "delivery" is the test's
 * own ledger: an agent appends to it only when cross_effect told it to proceed.
 */
class McpAgentSessionsIT extends CliFixture {

    private final List<String> deliveries = new CopyOnWriteArrayList<>();

    @AfterEach
    void endEverySession() {
        McpAgent.closeAll();
    }

    @Test
    void twoSiblingSessionsRaceForOneEffect_exactlyOneIsToldToProceed_andTheOtherLearnsWhoDelivered() throws Exception {
        // Given two sibling agent tasks, each with its own MCP session
        McpAgent a = McpAgent.start(dir, zk.connectString(), "sibling-a");
        McpAgent b = McpAgent.start(dir, zk.connectString(), "sibling-b");

        // When both try to deliver the same file to the same destination at the same moment
        CyclicBarrier start = new CyclicBarrier(2);
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            Future<String> ra = threads.submit(() -> {
                start.await();
                return deliverOnce(a);
            });
            Future<String> rb = threads.submit(() -> {
                start.await();
                return deliverOnce(b);
            });
            List<String> results = List.of(ra.get(Timing.PROCESS.toSeconds(), TimeUnit.SECONDS),
                    rb.get(Timing.PROCESS.toSeconds(), TimeUnit.SECONDS));

            // Then exactly one was told to proceed and delivered; the other was stopped
            assertThat(deliveries).as(results.toString()).hasSize(1);
            assertThat(results).containsOnlyOnce("delivered");
            assertThat(results).filteredOn(r -> !r.equals("delivered")).singleElement()
                    .isIn("stop_busy", "stop_sent");
        } finally {
            threads.shutdownNow();
        }
        String winner = deliveries.get(0).split(" ")[0];
        McpAgent loser = winner.equals(a.task) ? b : a;

        // And the loser, checking again, is told in words who delivered it and not to send again
        JsonNode again = loser.call("check_effect", Map.of("destination", dest, "file", content.toString()));
        assertThat(again.get("decision").asText()).isEqualTo("stop_sent");
        assertThat(again.get("instruction").asText())
                .startsWith("do not send: already delivered (sent_verified) by task " + winner)
                .contains("Do not send again");
        assertThat(again.get("evidence").get("task").asText()).isEqualTo(winner);
        assertThat(outcome(0)).contains("sent_verified").contains("message id 42");
    }

    @Test
    void aSiblingThatWaits_isAnsweredWithTheDelivery_andItsSessionServesOtherCallsMeanwhile() throws Exception {
        // Given an agent holding the lease, and a sibling waiting for its result
        McpAgent a = McpAgent.start(dir, zk.connectString(), "holder");
        McpAgent b = McpAgent.start(dir, zk.connectString(), "waiter");
        assertThat(a.call("check_effect", Map.of("destination", dest, "file", content.toString()))
                .get("decision").asText()).isEqualTo("proceed");
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            Future<JsonNode> waiting = thread.submit(() -> b.call("check_effect",
                    Map.of("destination", dest, "file", content.toString(), "wait_seconds", 120)));

            // When the waiter's session is asked something else meanwhile, and the holder then delivers
            JsonNode inspected = b.call("inspect_effect", Map.of("key", key.key()));
            assertThat(inspected.get("state").asText()).isEqualTo("leased");
            assertThat(waiting).isNotDone();
            assertThat(deliverOnce(a)).isEqualTo("delivered");

            // Then the waiter is answered with the holder's delivery, in words
            JsonNode answer = waiting.get(Timing.PROCESS.toSeconds(), TimeUnit.SECONDS);
            assertThat(answer.get("decision").asText()).isEqualTo("stop_sent");
            assertThat(answer.get("instruction").asText()).startsWith("do not send: already delivered (sent_verified)"
                    + " by task holder");
            assertThat(deliveries).hasSize(1);
        } finally {
            thread.shutdownNow();
        }
    }

    @Test
    void manyCallsWaitingAtOnce_neverHoldUpTheOutcomeOfACrossing() throws Exception {
        // Given a sibling holding more effects than the SDK's shared scheduler has threads (10 per core)
        int held = 10 * Runtime.getRuntime().availableProcessors() + 2;
        McpAgent holder = McpAgent.start(dir, zk.connectString(), "holder", "--lease-ttl", "600s");
        McpAgent agent = McpAgent.start(dir, zk.connectString(), "agent");
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < held; i++) {
            Path other = Files.writeString(dir.resolve("held-" + i + ".txt"), "held " + i);
            JsonNode check = holder.call("check_effect", Map.of("destination", dest, "file", other.toString()));
            assertThat(check.get("decision").asText()).isEqualTo("proceed");
            keys.add(check.get("key").asText());
        }
        // and an agent that crossed for an effect of its own (it has submitted)
        assertThat(agent.call("check_effect", Map.of("destination", dest, "file", content.toString()))
                .get("decision").asText()).isEqualTo("proceed");
        assertThat(agent.call("cross_effect", Map.of("key", key.key())).get("decision").asText()).isEqualTo("proceed");
        ExecutorService threads = Executors.newCachedThreadPool();
        try {
            // When the agent also waits on every one of the sibling's effects at once
            Map<String, Integer> watchersBefore = new java.util.HashMap<>();
            keys.forEach(k -> watchersBefore.put(k, zk.watchingSessions(scope0(k))));
            List<Future<JsonNode>> waits = new ArrayList<>();
            for (String k : keys) {
                waits.add(threads.submit(() -> agent.call("check_effect", Map.of("key", k, "wait_seconds", 300))));
            }
            // (each waiter watches its key's scope 0: the agent's session is one more watcher of every one)
            await().atMost(Timing.WAIT).until(() -> keys.stream()
                    .allMatch(k -> zk.watchingSessions(scope0(k)) > watchersBefore.get(k)));

            // Then its outcome is recorded at once, not after a wait ends
            Future<JsonNode> recorded = threads.submit(() -> agent.call("record_outcome", Map.of("key", key.key(),
                    "outcome", "sent_verified", "evidence", "message id 42")));
            assertThat(recorded.get(Timing.WAIT.toSeconds(), TimeUnit.SECONDS).get("recorded").asBoolean()).isTrue();
            assertThat(waits).noneMatch(Future::isDone);
            assertThat(agent.call("inspect_effect", Map.of("key", key.key())).get("state").asText())
                    .isEqualTo("sent_verified");
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void aRootsListChangedNotification_isIgnored_andTheSessionGoesOnAnswering() throws Exception {
        // Given a session holding a lease (ByHand's check_effect)
        try (ByHand session = new ByHand()) {
            assertThat(session.stdout().get(1)).contains("proceed");

            // When its client says its roots changed (the SDK would ask it for them, and a failed or
            // unanswered roots/list would end, or stall, the SDK's reading of every later line)
            session.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/roots/list_changed\"}");

            // Then the next line on stdout is the answer to the next call, and the lease is still held
            String answer = session.call(3, "inspect_effect", "{\"key\":\"" + key.key() + "\"}");
            assertThat(answer).as("no request to the client came first").contains("\"id\":3").doesNotContain("roots/list");
            assertThat(answer).contains("leased");
            assertThat(session.process.isAlive()).isTrue();
        }
    }

    @Test
    void aSessionThatCrossesAndDisconnects_leavesTheKeyUnknown_andASiblingIsToldNotToSend() throws Exception {
        // Given an agent that crossed (it may be pressing submit right now)
        McpAgent a = McpAgent.start(dir, zk.connectString(), "crosser");
        assertThat(a.call("check_effect", Map.of("destination", dest, "file", content.toString()))
                .get("decision").asText()).isEqualTo("proceed");
        JsonNode crossed = a.call("cross_effect", Map.of("key", key.key()));
        assertThat(crossed.get("decision").asText()).isEqualTo("proceed");
        assertThat(crossed.get("idempotency_key").asText()).hasSize(32);

        // When its session ends without record_outcome (the SDK's client closes: SIGTERM)
        a.close();

        // Then the outcome is recorded send_status_unknown, and inspect says so
        await().atMost(Timing.APPEAR).until(() -> outcome(0) != null);
        assertThat(outcome(0)).contains("send_status_unknown").contains("before the agent reported the outcome");
        Cli.Result inspect = cli.run("inspect", "--connect", zk.connectString(), "--key", key.key());
        assertThat(inspect.stdoutJson().get("state").asText()).as(inspect.toString()).isEqualTo("send_status_unknown");
        // And a sibling is stopped: the effect may have been delivered
        McpAgent b = McpAgent.start(dir, zk.connectString(), "sibling");
        JsonNode check = b.call("check_effect", Map.of("key", key.key()));
        assertThat(check.get("decision").asText()).isEqualTo("stop_unknown");
        assertThat(check.get("instruction").asText()).startsWith("do not send: task crosser")
                .contains("may already have been delivered");
    }

    @Test
    void aSessionWhoseClientClosesStdinAfterCrossing_recordsUnknown_exits1_andWritesOnlyProtocolOnStdout()
            throws Exception {
        // Given an mcp process driven by hand, verbose (its logs must stay off stdout), that crossed
        List<String> stdout;
        ByHand session = new ByHand();
        try (session) {
            session.call(3, "cross_effect", "{\"key\":\"" + key.key() + "\"}");

            // When the client closes stdin: the end of the session
            session.in.close();
            session.exits();
            stdout = session.stdout();
        }

        // Then it exits 1, the outcome is recorded unknown, and stdout held JSON-RPC and nothing else
        String stderr = Files.readString(dir.resolve("mcp-stderr.txt"));
        assertThat(stderr).contains("recorded send_status_unknown");
        assertThat(outcome(0)).contains("send_status_unknown");
        assertThat(stdout).hasSize(3).allSatisfy(line ->
                assertThat(Cli.JSON.readTree(line).get("jsonrpc").asText()).as(line).isEqualTo("2.0"));
        assertThat(stdout.get(2)).contains("proceed: scope 0 is armed for you");
        assertThat(session.exitValue).as(stderr).isEqualTo(1);
    }

    @Test
    void aLineThatIsNotJsonRpc_endsTheSessionAtOnce_releasingItsLease_andExits2_withoutWaitingForStdinToClose()
            throws Exception {
        // Given an mcp process driven by hand that holds an effect's lease (checked, not crossed)
        ByHand session = new ByHand();
        try (session) {
            assertThat(session.stdout().get(1)).contains("proceed");

            // When the client sends a line the SDK cannot parse, and keeps stdin open: the SDK stops
            // reading stdin, so no later call would ever be answered
            session.send("this is not a JSON-RPC message");

            // Then the session ends at once, as if the client had closed it, with stdin still open
            session.exits();
        }
        // exiting 2 (bad input), naming why on stderr
        String stderr = Files.readString(dir.resolve("mcp-stderr.txt"));
        assertThat(session.exitValue).as(stderr).isEqualTo(2);
        assertThat(stderr).contains("stopped reading its input");

        // And its lease was released, not left to lapse: a sibling that does not wait proceeds at once
        assertThat(armedNode(0)).isNull();
        McpAgent b = McpAgent.start(dir, zk.connectString(), "sibling");
        assertThat(deliverOnce(b)).isEqualTo("delivered");
        assertThat(outcome(0)).contains("sent_verified");
    }

    @Test
    void sigtermBeforeCrossing_withStdinOpen_releasesTheLease_andClosesTheZooKeeperSession_soNoElectionNodeIsLeft()
            throws Exception {
        // Given an mcp process driven by hand that holds an effect's lease, checkpointed before a picker
        ByHand session = new ByHand();
        try (session) {
            assertThat(session.call(3, "checkpoint_effect", "{\"key\":\"" + key.key() + "\",\"name\":\"attachment-picker\"}"))
                    .contains("proceed");
            assertThat(electionNodes(0)).hasSize(1);

            // When the agent runtime sends SIGTERM, stdin still open
            session.process.destroy();
            session.exits();
        }

        // Then it exits 0 with nothing armed, and its election node is gone with its closed session,
        // not left for the session timeout (a sibling would wait behind it)
        String stderr = Files.readString(dir.resolve("mcp-stderr.txt"));
        assertThat(session.exitValue).as(stderr).isZero();
        assertThat(armedNode(0)).isNull();
        assertThat(electionNodes(0)).as(stderr).isEmpty();
    }

    @Test
    void aSessionThatEndsBeforeCrossing_releasesItsLease_soASiblingProceedsAtOnce() throws Exception {
        // Given an agent holding the lease (it checked, and checkpointed before a picker)
        McpAgent a = McpAgent.start(dir, zk.connectString(), "holder");
        a.call("check_effect", Map.of("destination", dest, "file", content.toString()));
        assertThat(a.call("checkpoint_effect", Map.of("key", key.key(), "name", "attachment-picker"))
                .get("decision").asText()).isEqualTo("proceed");

        // When its session ends before crossing (the SDK's client ends it with SIGTERM)
        a.close();

        // Then nothing was armed, its election node went with its ZooKeeper session (closed, not
        // left to expire: a sibling would wait behind it for the session timeout), and a sibling
        // that does not wait is told to proceed in the same scope
        assertThat(armedNode(0)).isNull();
        assertThat(electionNodes(0)).isEmpty();
        McpAgent b = McpAgent.start(dir, zk.connectString(), "sibling");
        assertThat(deliverOnce(b)).isEqualTo("delivered");
        assertThat(deliveries).containsExactly("sibling " + deliveries.get(0).split(" ")[1]);
        assertThat(outcome(0)).contains("sent_verified");
    }

    @Test
    void recordOutcome_sentVerifiedWithoutEvidence_isRefused_andNothingIsRecordedUntilItIsGiven() throws Exception {
        McpAgent a = McpAgent.start(dir, zk.connectString(), "careful");
        a.call("check_effect", Map.of("destination", dest, "file", content.toString()));
        a.call("cross_effect", Map.of("key", key.key()));

        var refused = a.callRaw("record_outcome", Map.of("key", key.key(), "outcome", "sent_verified"));
        assertThat(refused.isError()).isTrue();
        assertThat(McpAgent.answer(refused).get("instruction").asText()).contains("evidence: missing");
        assertThat(outcome(0)).isNull();

        JsonNode recorded = a.call("record_outcome", Map.of("key", key.key(), "outcome", "not_sent",
                "evidence", "the send button was never pressed: the compose dialog failed to open"));
        assertThat(recorded.get("reads_as").asText()).isEqualTo("not_sent");
        assertThat(recorded.get("instruction").asText()).contains("free again");
        var twice = a.callRaw("record_outcome", Map.of("key", key.key(), "outcome", "sent_verified", "evidence", "x"));
        assertThat(twice.isError()).isTrue();
        assertThat(outcome(0)).contains("not_sent").contains("compose dialog failed to open");
    }

    /**
     * A client that writes record_outcome(sent_verified) for a delivery it made and then closes stdin (the stdio
     * transport's way to end a session) without waiting for the answer: the line reached the server whole, before
     * the end of input, so its outcome is the one recorded, and the session ends with everything as reported.
     */
    @org.junit.jupiter.api.RepeatedTest(3)
    void recordOutcomeThenStdinClosed_recordsTheReportedOutcome_notUnknown() throws Exception {
        ByHand session = new ByHand();
        try (session) {
            assertThat(session.call(3, "cross_effect", "{\"key\":\"" + key.key() + "\"}")).contains("proceed");
            // the agent delivered; it reports and ends the session in one write
            byte[] both = (McpAgentSessionsIT.call(4, "record_outcome", "{\"key\":\"" + key.key()
                    + "\",\"outcome\":\"sent_verified\",\"evidence\":\"message id 42\"}") + "\n")
                    .getBytes(StandardCharsets.UTF_8);
            session.in.write(both);
            session.in.flush();
            session.in.close();
            session.exits();
        }
        String stderr = Files.readString(dir.resolve("mcp-stderr.txt"));
        await().atMost(Timing.APPEAR).until(() -> outcome(0) != null);
        assertThat(outcome(0)).as(stderr).contains("sent_verified");
        assertThat(session.exitValue).as(stderr).isZero();
    }

    /**
     * The client ends the session with Process.destroy() (SIGTERM, then its end of stdin closed: what the
     * SDK's StdioClientTransport.closeGracefully does) once record_outcome has answered. Everything was recorded,
     * so the exit is 0 (README, `oncegate mcp --help`), not the JVM's 143 for a signal that finds no shutdown
     * hook (the main thread, ending on the end of stdin, used to remove it before the JVM ran it).
     */
    @org.junit.jupiter.api.RepeatedTest(3)
    void destroyAfterTheOutcomeWasRecorded_exits0_not143() throws Exception {
        ByHand session = new ByHand();
        try (session) {
            assertThat(session.call(3, "cross_effect", "{\"key\":\"" + key.key() + "\"}")).contains("proceed");
            assertThat(session.call(4, "record_outcome", "{\"key\":\"" + key.key()
                    + "\",\"outcome\":\"sent_verified\",\"evidence\":\"message id 42\"}")).contains("sent_verified");
            session.process.destroy();
            session.exits();
        }
        String stderr = Files.readString(dir.resolve("mcp-stderr.txt"));
        assertThat(outcome(0)).as(stderr).contains("sent_verified");
        assertThat(session.exitValue).as(stderr).isZero();
    }

    /** The election nodes of scope {@code n} ({@code n/latch}'s children; none when the latch is gone). */
    private List<String> electionNodes(int n) throws Exception {
        try {
            return curator.getChildren().forPath(key.path(NAMESPACE) + "/" + n + "/latch");
        } catch (org.apache.zookeeper.KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    /** An obedient agent: delivers only when check_effect and cross_effect both say proceed. */
    /** Scope 0 of key {@code k}, in the default namespace. */
    private static String scope0(String k) {
        return NAMESPACE + "/keys/" + k.substring(0, 2) + "/" + k.substring(2, 4) + "/" + k + "/0";
    }

    private String deliverOnce(McpAgent agent) {
        JsonNode check = agent.call("check_effect", Map.of("destination", dest, "file", content.toString()));
        if (!check.get("decision").asText().equals("proceed")) {
            assertThat(check.get("instruction").asText()).startsWith("do not send");
            return check.get("decision").asText();
        }
        assertThat(check.get("key").asText()).isEqualTo(key.key());
        JsonNode checkpoint = agent.call("checkpoint_effect", Map.of("key", key.key(), "name", "attachment-picker"));
        assertThat(checkpoint.get("decision").asText()).isEqualTo("proceed");
        JsonNode cross = agent.call("cross_effect", Map.of("key", key.key()));
        if (!cross.get("decision").asText().equals("proceed")) {
            return cross.get("decision").asText();
        }
        deliveries.add(agent.task + " " + cross.get("idempotency_key").asText());
        JsonNode recorded = agent.call("record_outcome", Map.of("key", key.key(), "outcome", "sent_verified",
                "evidence", "message id 42"));
        assertThat(recorded.get("recorded").asBoolean()).isTrue();
        return "delivered";
    }

    /**
     * {@code oncegate mcp}, verbose (its logs must stay off stdout), stderr to {@code mcp-stderr.txt},
     * driven by hand: the MCP handshake, then check_effect (id 2) on the test's effect. Closing it
     * kills what is left of the process.
     */
    private final class ByHand implements AutoCloseable {
        /** Its exit code, once {@link #exits} saw it exit. */
        int exitValue = -1;

        final Process process;
        final OutputStream in;
        private final BufferedReader out;
        private final List<String> stdout = new ArrayList<>();

        ByHand() throws java.io.IOException {
            List<String> command = new ArrayList<>(McpAgent.javaJar());
            command.addAll(List.of("mcp", "--connect", zk.connectString(), "--task-id", "by-hand", "-v"));
            ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile())
                    .redirectError(dir.resolve("mcp-stderr.txt").toFile());
            builder.environment().keySet().removeIf(name -> name.startsWith("ONCEGATE_"));
            builder.environment().put("ONCEGATE_STATE_DIR", dir.resolve("state").toString());
            process = builder.start();
            in = process.getOutputStream();
            out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                    + "\"capabilities\":{},\"clientInfo\":{\"name\":\"by-hand\",\"version\":\"1\"}}}");
            stdout.add(out.readLine());
            send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
            call(2, "check_effect", "{\"destination\":\"" + dest + "\",\"sha256\":\"" + key.sha256() + "\"}");
        }

        /** Calls {@code tool}; returns its answer's line. */
        String call(int id, String tool, String arguments) throws java.io.IOException {
            send(McpAgentSessionsIT.call(id, tool, arguments));
            String line = out.readLine();
            stdout.add(line);
            return line;
        }

        void send(String line) throws java.io.IOException {
            McpAgentSessionsIT.send(in, line);
        }

        /** Waits for the process to exit (failing if it does not) and records its code in {@link #exitValue}. */
        void exits() throws Exception {
            assertThat(process.waitFor(Timing.PROCESS.toMillis(), TimeUnit.MILLISECONDS)).as("the mcp process exited").isTrue();
            exitValue = process.exitValue();
        }

        /** Every line of stdout so far, and to its end if the process has exited. */
        List<String> stdout() throws java.io.IOException {
            if (!process.isAlive()) {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    stdout.add(line);
                }
            }
            return stdout;
        }

        @Override
        public void close() throws java.io.IOException {
            process.destroyForcibly();
            try {
                in.close();
            } catch (java.io.IOException closedByTheProcessExiting) {
                // nothing more to send
            }
            out.close();
        }
    }

    private static String call(int id, String tool, String arguments) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool
                + "\",\"arguments\":" + arguments + "}}";
    }

    private static void send(OutputStream in, String line) throws java.io.IOException {
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }
}
