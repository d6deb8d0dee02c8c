package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import dev.oncegate.testing.Timing;

/**
 * {@code run} as a scripting contract: the result line in a channel of its own
 * ({@code --result-file}, written atomically, or an inherited {@code --result-fd}) that neither
 * the wrapped command's stderr nor oncegate's log lines can corrupt; the environment variables a
 * fleet sets per host; and the idempotency key the command is handed.
 */
class RunResultChannelIT extends CliFixture {

    /** A command that leaves stderr mid-line, as a progress message does. */
    static final String UNTERMINATED_STDERR = "printf 'uploading...' >&2; echo \"$ONCEGATE_IDEMPOTENCY_KEY\" >> ledger";

    @Test
    void resultFile_holdsExactlyTheResultLine_whateverTheCommandAndTheLogWriteToStderr() throws Exception {
        Path result = dir.resolve("result.json");

        Cli.Result run = run(UNTERMINATED_STDERR, "--result-file", result.toString());

        // stderr: the WARN of a namespace without ACLs, and the command's junk glued to the JSON
        assertThat(run.exit()).as(run.toString()).isZero();
        assertThat(run.stderr()).contains(" WARN ", "uploading...{\"decision\"");
        // the file: one complete line, the result alone
        String written = Files.readString(result, StandardCharsets.UTF_8);
        assertThat(written).endsWith("}\n").hasLineCount(1);
        JsonNode json = Cli.JSON.readTree(written);
        assertThat(json.get("decision").asText()).isEqualTo("proceed");
        assertThat(json.get("outcome").asText()).isEqualTo("sent_verified");
        assertThat(json.get("key").asText()).isEqualTo(key.key());
        // and the command was handed the idempotency key of scope 0
        assertThat(ledgerLines()).containsExactly(idempotencyKey(0));
    }

    @Test
    void resultFile_existsOnlyComplete_andAnEarlierOneIsGoneWhenRunStarts() throws Exception {
        Path result = dir.resolve("result.json");
        Files.writeString(result, "{\"decision\":\"stale\"}\n");

        Cli.Running running = cli.start(runArgs("touch started; while [ ! -f go ]; do sleep 0.05; done",
                "--result-file", result.toString()));
        await().atMost(Timing.APPEAR).until(() -> Files.exists(dir.resolve("started")));

        // While the command runs: no result file, neither the earlier one nor a partial one
        assertThat(result).doesNotExist();
        Files.createFile(dir.resolve("go"));
        Cli.Result finished = running.await(Timing.PROCESS);

        assertThat(finished.exit()).as(finished.toString()).isZero();
        assertThat(Cli.JSON.readTree(result.toFile()).get("outcome").asText()).isEqualTo("sent_verified");
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).noneMatch(n -> n.endsWith(".tmp"));
        }
    }

    @Test
    void resultFile_isWrittenForAStop_andForBadInputFoundAfterParsing() throws Exception {
        Path first = dir.resolve("first.json");
        Path stop = dir.resolve("stop.json");
        Path bad = dir.resolve("bad.json");
        run(LEDGER_LINE, "--result-file", first.toString());

        Cli.Result stopped = run(LEDGER_LINE, "--result-file", stop.toString());
        Cli.Result badInput = cli.run("run", "--connect", zk.connectString(), "--result-file", bad.toString(),
                "--dest", "slack:", "--file", content.toString(), "--", "sh", "-c", LEDGER_LINE);

        assertThat(stopped.exit()).as(stopped.toString()).isEqualTo(ExitCode.STOP_SENT);
        assertThat(Cli.JSON.readTree(stop.toFile()).get("decision").asText()).isEqualTo("stop_sent");
        assertThat(Cli.JSON.readTree(stop.toFile())).isEqualTo(stopped.runJson());
        assertThat(badInput.exit()).as(badInput.toString()).isEqualTo(ExitCode.USAGE);
        JsonNode refused = Cli.JSON.readTree(bad.toFile());
        assertThat(refused.get("decision").isNull()).isTrue();
        assertThat(refused.get("reason").asText()).isEqualTo("bad_input");
        assertThat(refused.get("detail").asText()).contains("--dest", "identifier");
        assertThat(ledgerLines()).hasSize(1);
    }

    @Test
    void resultFile_inAMissingDirectory_exits2BeforeAnythingRuns() throws Exception {
        Cli.Result result = run(LEDGER_LINE, "--result-file", dir.resolve("no-such-dir/result.json").toString());

        assertThat(result.exit()).as(result.toString()).isEqualTo(ExitCode.USAGE);
        assertThat(result.stderr()).contains("--result-file");
        assertThat(ledgerLines()).isEmpty();
    }

    @Test
    void resultFile_namingAFileTheRunReads_exits2_andRemovesNothing() throws Exception {
        String original = Files.readString(content, StandardCharsets.UTF_8);
        Path alias = Files.createSymbolicLink(dir.resolve("alias.txt"), content);
        Path authFile = Files.writeString(dir.resolve("worker.auth"), "worker:secret\n");

        // Plain lines: QuickRun declines them, and picocli's path refuses them before the channel removes anything.
        List<Cli.Result> refused = List.of(
                run(LEDGER_LINE, "--result-file", content.toString()),
                run(LEDGER_LINE, "--result-file", alias.toString()),
                run(LEDGER_LINE, "--auth-file", authFile.toString(), "--result-file", authFile.toString()));

        for (Cli.Result result : refused) {
            assertThat(result.exit()).as(result.toString()).isEqualTo(ExitCode.USAGE);
            assertThat(result.stderr()).contains("--result-file", "would replace it");
        }
        assertThat(refused.get(2).stderr()).contains("--auth-file");
        assertThat(Files.readString(content, StandardCharsets.UTF_8)).isEqualTo(original);
        assertThat(Files.readString(authFile, StandardCharsets.UTF_8)).isEqualTo("worker:secret\n");
        assertThat(ledgerLines()).isEmpty();
        assertThat(curator.checkExists().forPath(key.path(NAMESPACE))).isNull();
    }

    @Test
    void resultFd_getsTheResultLine_andTheCommandCannotWriteToIt() throws Exception {
        Path result = dir.resolve("fd3.json");
        Cli shell = new Cli(dir, Map.of("RESULT", result.toString()), launcherWithDescriptor3());

        Cli.Result run = shell.run(runArgs("(echo junk >&3) 2>/dev/null; " + UNTERMINATED_STDERR, "--result-fd", "3"));

        assertThat(run.exit()).as(run.toString()).isZero();
        List<String> lines = Files.readAllLines(result, StandardCharsets.UTF_8);
        assertThat(lines).hasSize(1);
        assertThat(Cli.JSON.readTree(lines.get(0))).isEqualTo(Cli.JSON.readTree(
                run.stderr().substring(run.stderr().lastIndexOf("uploading...") + "uploading...".length())));
    }

    @Test
    void resultFd_notOpen_exits2WithoutRunningAnything() throws Exception {
        Cli.Result result = run(LEDGER_LINE, "--result-fd", "7");

        assertThat(result.exit()).as(result.toString()).isEqualTo(ExitCode.USAGE);
        assertThat(result.stderr()).contains("--result-fd", "descriptor 7 is not open", "3>result.json");
        assertThat(ledgerLines()).isEmpty();
    }

    @Test
    void namespaceAndTaskId_comeFromTheEnvironment() throws Exception {
        zk.initNamespace("/fleet");
        Cli fleet = new Cli(dir, Map.of("ONCEGATE_NAMESPACE", "/fleet", "ONCEGATE_TASK_ID", "fleet-host-7"));

        Cli.Result first = fleet.run(runArgs(LEDGER_LINE));
        Cli.Result second = fleet.run(runArgs(LEDGER_LINE));

        assertThat(first.exit()).as(first.toString()).isZero();
        assertThat(second.exit()).as(second.toString()).isEqualTo(ExitCode.STOP_SENT);
        JsonNode evidence = second.runJson().get("evidence");
        assertThat(evidence.get("path").asText()).startsWith(key.path("/fleet"));
        assertThat(evidence.get("task").asText()).isEqualTo("fleet-host-7");
        assertThat(curator.checkExists().forPath(key.path(NAMESPACE))).as("nothing in the default namespace").isNull();
    }

    @Test
    void idempotencyKey_isNewInTheScopeThatANotSentOpens() throws Exception {
        String echoThen = "echo \"$ONCEGATE_IDEMPOTENCY_KEY\" >> ledger; exit ";

        Cli.Result rejected = run(echoThen + "75", "--not-sent-exit", "75");
        Cli.Result delivered = run(echoThen + "0");

        assertThat(rejected.exit()).as(rejected.toString()).isEqualTo(ExitCode.NOT_SENT);
        assertThat(delivered.exit()).as(delivered.toString()).isZero();
        assertThat(ledgerLines()).containsExactly(idempotencyKey(0), idempotencyKey(1));
    }

    /** The documented idempotency key of scope {@code n}, from what {@code oncegate inspect} prints of the key. */
    private String idempotencyKey(int n) {
        JsonNode inspect = ops.run("inspect", "--connect", zk.connectString(), "--key", key.key()).stdoutJson();
        return key.idempotencyKey(n, inspect.get("genesis").asText(), inspect.get("zxid").asLong());
    }

    /** A launcher that runs the CLI with descriptor 3 open on $RESULT, as {@code 3>"$RESULT"} in a script does. */
    private Path launcherWithDescriptor3() throws Exception {
        Path script = dir.resolve("with-fd3.sh");
        Files.writeString(script, "#!/bin/sh\nexec " + Cli.javaCommandLine() + " \"$@\" 3>\"$RESULT\"\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        return script;
    }
}
