package dev.oncegate.cli;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oncegate.ZxidMarks;
import dev.oncegate.testing.Timing;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code oncegate run} when the gate process dies, is told to stop, or its command hangs: the
 * key is consumed (an uncertain outcome consumes it) and the command's process tree is gone.
 */
class RunCrashAndTimeoutIT extends CliFixture {

    private static final String STARTED_THEN_HANG = "echo started >> ledger; sleep 30 & echo $! > sleep.pid; wait";

    @Test
    void gateKilledWhileCommandRuns_nextRunExits11_andItsCommandNeverRuns() throws Exception {
        Cli.Running gate = cli.start(runArgs(STARTED_THEN_HANG));
        await().atMost(Timing.APPEAR).until(() -> ledgerLines().contains("started") && Files.exists(dir.resolve("sleep.pid")));

        ProcessTree.kill(gate.process(), Duration.ZERO); // SIGKILL: no hook, no outcome
        await().atMost(Timing.APPEAR).until(() -> !gate.process().isAlive());

        Cli.Result next = run(LEDGER_LINE);

        assertThat(next.exit()).as(next.toString()).isEqualTo(11);
        assertThat(next.runJson().get("reason").asText()).isEqualTo("armed_without_outcome");
        assertThat(ledgerLines()).containsExactly("started");
        assertThat(armedNode(0)).isNotNull();
        assertThat(outcome(0)).isNull();
    }

    @Test
    void gateKilledWithSigkill_itsCommandIsSignalledToo_notLeftDeliveringUnwatched() throws Exception {
        // Given a run whose command (its direct child: the shell execs sleep) is running
        Cli.Running gate = cli.start(runArgs("echo $$ > command.pid; exec sleep 300"));
        await().atMost(Timing.APPEAR).until(() -> Files.exists(dir.resolve("command.pid"))
                && !Files.readString(dir.resolve("command.pid")).isBlank());
        long commandPid = Long.parseLong(Files.readString(dir.resolve("command.pid")).strip());

        // When only the run's own process is killed with SIGKILL: no shutdown hook, no process-tree kill
        gate.process().destroyForcibly();

        // Then the kernel signals the command (setpriv --pdeathsig), which ends
        try {
            await().atMost(Timing.APPEAR).until(() -> ProcessHandle.of(commandPid).map(p -> !p.isAlive()).orElse(true));
        } finally {
            ProcessHandle.of(commandPid).ifPresent(ProcessHandle::destroyForcibly); // an orphan is no one's descendant
        }
        assertThat(armedNode(0)).as("the scope stays armed: no outcome without the run").isNotNull();
        assertThat(outcome(0)).isNull();
    }

    @Test
    void gateKilledRightAfterItsCommandDelivered_theHostsMarksFileHoldsItsLeaseWrite() throws Exception {
        // Given a run whose command has delivered (and then lingers), its lease write's zxid in the ledger
        Cli.Running gate = cli.start(runArgs("echo \"$ONCEGATE_FENCING_ZXID\" >> ledger; " + STARTED_THEN_HANG));
        await().atMost(Timing.APPEAR).until(() -> ledgerLines().contains("started") && Files.exists(dir.resolve("sleep.pid")));

        // When the gate process is killed with SIGKILL: no shutdown hook, no close, no outcome
        ProcessTree.kill(gate.process(), Duration.ZERO);
        await().atMost(Timing.APPEAR).until(() -> !gate.process().isAlive());

        // Then the host's marks file (the run's state directory) already holds a mark at or above that write
        long leaseZxid = Long.parseLong(ledgerLines().get(0));
        assertThat(ZxidMarks.read(dir.resolve("state").resolve("zxid-marks.json"))).singleElement().satisfies(m -> {
            assertThat(m.namespace()).isEqualTo(NAMESPACE);
            assertThat(m.zxid()).isGreaterThanOrEqualTo(leaseZxid);
            assertThat(m.seenAt()).containsExactly(zk.connectString());
        });
    }

    @Test
    void gateKilledWhileCommandRuns_thenAnOperatorAuthorizes_oneRedeliveryInScope1() throws Exception {
        Cli.Running gate = cli.start(runArgs(STARTED_THEN_HANG));
        await().atMost(Timing.APPEAR).until(() -> ledgerLines().contains("started") && Files.exists(dir.resolve("sleep.pid")));
        ProcessTree.kill(gate.process(), Duration.ZERO);
        await().atMost(Timing.APPEAR).until(() -> !gate.process().isAlive());

        Cli.Result auth = ops.run("authorize", "--connect", zk.connectString(), "--key", key.key(), "--after", "0",
                "--by", "ops@example", "--reason", "the crashed upload never arrived");
        Cli.Result redelivered = run(LEDGER_LINE);
        Cli.Result repeat = run(LEDGER_LINE);

        assertThat(auth.exit()).as("armed without outcome is consumed: " + auth).isEqualTo(0);
        assertThat(redelivered.exit()).as(redelivered.toString()).isEqualTo(0);
        assertThat(redelivered.runJson().get("scope").asInt()).isEqualTo(1);
        assertThat(repeat.exit()).as(repeat.toString()).isEqualTo(10);
        assertThat(ledgerLines()).hasSize(2).first().isEqualTo("started");
        assertThat(outcome(0)).as("the crashed scope keeps no outcome").isNull();
        assertThat(outcome(1)).isNotNull();
    }

    @Test
    void timeoutPasses_exits1Promptly_killsTheCommandTree_andNextRunExits11() throws Exception {
        Instant start = Instant.now();
        Cli.Result timedOut = run(STARTED_THEN_HANG, "--timeout", "1s");
        Duration took = Duration.between(start, Instant.now());

        assertThat(timedOut.exit()).as(timedOut.toString()).isEqualTo(1);
        assertThat(timedOut.runJson().get("outcome").asText()).isEqualTo("send_status_unknown");
        assertThat(timedOut.runJson().get("detail").asText()).contains("timed out");
        assertThat(took).as("the 30 s sleep did not hold the run").isLessThan(Timing.scaled(Duration.ofSeconds(25)));
        long sleepPid = Long.parseLong(Files.readString(dir.resolve("sleep.pid")).strip());
        await().atMost(Timing.APPEAR).until(() -> ProcessHandle.of(sleepPid).map(p -> !p.isAlive()).orElse(true));

        Cli.Result next = run(LEDGER_LINE);

        assertThat(next.exit()).as(next.toString()).isEqualTo(11);
        assertThat(ledgerLines()).containsExactly("started");
    }

    @Test
    void sigtermWhileCommandRuns_killsTheCommand_recordsUnknown_andExits1() throws Exception {
        Cli.Running gate = cli.start(runArgs(STARTED_THEN_HANG));
        await().atMost(Timing.APPEAR).until(() -> Files.exists(dir.resolve("sleep.pid"))
                && !Files.readString(dir.resolve("sleep.pid")).isBlank());
        long sleepPid = Long.parseLong(Files.readString(dir.resolve("sleep.pid")).strip());

        gate.process().destroy(); // SIGTERM
        Cli.Result stopped = gate.await(Timing.PROCESS);

        assertThat(stopped.exit()).as(stopped.toString()).isEqualTo(1);
        assertThat(stopped.runJson().get("outcome").asText()).isEqualTo("send_status_unknown");
        assertThat(stopped.runJson().get("recorded").asBoolean()).isTrue();
        assertThat(outcome(0)).contains("\"send_status_unknown\"");
        Optional<ProcessHandle> sleep = ProcessHandle.of(sleepPid);
        await().atMost(Timing.APPEAR).until(() -> sleep.map(p -> !p.isAlive()).orElse(true));
    }

    /**
     * A signal while the content is still being hashed (a sparse 4 GiB file: seconds of reading,
     * observed through the process's open descriptors): nothing was armed, so exit 13 with the
     * failure result line, never the signal's 143; and the result file of an earlier run was
     * removed before the content was read, so it cannot pass for this run's.
     */
    @Test
    void sigtermWhileTheContentIsRead_exits13_withTheFailureResult_andNoEarlierResultLeft() throws Exception {
        Path big = dir.resolve("big.bin");
        try (RandomAccessFile file = new RandomAccessFile(big.toFile(), "rw")) {
            file.setLength(4L << 30);
        }
        Path result = Files.writeString(dir.resolve("result.json"), "{\"decision\":\"an earlier run's\"}\n");
        Cli.Running running = cli.start("run", "--connect", zk.connectString(), "--dest", dest, "--file", big.toString(),
                "--result-file", result.toString(), "--", "sh", "-c", LEDGER_LINE);
        await().atMost(Timing.APPEAR).until(() -> hasOpen(running.process().pid(), big));

        running.process().destroy(); // SIGTERM
        Cli.Result stopped = running.await(Timing.PROCESS);

        assertThat(stopped.exit()).as(stopped.toString()).isEqualTo(ExitCode.STOP_UNAVAILABLE);
        assertThat(result).as(stopped.toString()).exists();
        JsonNode line = Cli.JSON.readTree(result.toFile());
        assertThat(line.get("reason").asText()).isEqualTo("failed");
        assertThat(line.get("detail").asText()).contains("termination signal", "nothing was armed");
        // and stderr says so too, once: the message used to lose its race with the shutdown hook's halt
        assertThat(stopped.stderr()).as(stopped.toString()).containsOnlyOnce("termination signal arrived before any decision");
        assertThat(ledgerLines()).isEmpty();
    }

    /** How many sessions watch scope 0, its armed record or its outcome (a waiting contender does). */
    private int watchersOfScope0() {
        String scope = key.path(NAMESPACE) + "/0";
        return zk.watchingSessions(scope) + zk.watchingSessions(scope + "/armed") + zk.watchingSessions(scope + "/armed/outcome");
    }

    /** Whether process {@code pid} has {@code file} open (its {@code /proc/PID/fd} links). */
    static boolean hasOpen(long pid, Path file) throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            return fds.anyMatch(fd -> {
                try {
                    return Files.readSymbolicLink(fd).equals(file);
                } catch (IOException gone) {
                    return false;
                }
            });
        } catch (NoSuchFileException exited) {
            return false;
        }
    }

    @Test
    void sigtermWhileZooKeeperIsGone_exits1WhenTheGraceRunsOut_notTheSignalsCode() throws Exception {
        // Given a run whose command is running (the scope is armed), and ZooKeeper gone
        Cli.Running gate = cli.start(runArgs(STARTED_THEN_HANG, "--shutdown-grace", "1s"));
        await().atMost(Timing.APPEAR).until(() -> Files.exists(dir.resolve("sleep.pid"))
                && !Files.readString(dir.resolve("sleep.pid")).isBlank());
        zk.stop();

        // When it is told to stop: the outcome cannot be recorded within the grace (Curator retries for seconds)
        gate.process().destroy(); // SIGTERM
        Cli.Result stopped = gate.await(Timing.PROCESS);
        zk.restart();

        // Then it exits 1 (unknown: the scope stays armed), never 143, and says why
        assertThat(stopped.exit()).as(stopped.toString()).isEqualTo(1);
        assertThat(stopped.stderr()).contains("gave up waiting 1s for the outcome to be recorded")
                .doesNotContain("\"decision\"");
        Cli.Result next = run(LEDGER_LINE);
        assertThat(next.exit()).as(next.toString()).isEqualTo(11);
        assertThat(ledgerLines()).containsExactly("started");
    }

    @Test
    void sigtermWhileWaitingForAnActiveExecutor_exits13_saysSoOnStderr_andLeavesTheExecutorAlone() throws Exception {
        // Given an executor whose command runs, and a second run waiting for it (watching its election node)
        Cli.Running first = cli.start(runArgs(STARTED_THEN_HANG));
        await().atMost(Timing.APPEAR).until(() -> ledgerLines().contains("started") && armedNode(0) != null);
        int watchersBefore = watchersOfScope0();
        Cli.Running waiter = cli.start(runArgs(LEDGER_LINE, "--wait", "60s"));
        await().atMost(Timing.APPEAR).until(() -> watchersOfScope0() > watchersBefore);

        // When the waiter is told to stop
        waiter.process().destroy(); // SIGTERM
        Cli.Result stopped = waiter.await(Timing.PROCESS);

        // Then it exits 13 and says why on stderr, once (the message used to lose its race with the hook's halt)
        assertThat(stopped.exit()).as(stopped.toString()).isEqualTo(ExitCode.STOP_UNAVAILABLE);
        assertThat(stopped.stderr()).as(stopped.toString()).containsOnlyOnce("interrupted by a termination signal before a decision");
        // and the executor's scope is untouched: still armed by it, its command still the only one started
        assertThat(first.process().isAlive()).isTrue();
        assertThat(armedNode(0)).isNotNull();
        assertThat(outcome(0)).isNull();
        assertThat(ledgerLines()).containsExactly("started");
    }

    @Test
    void waitForActiveExecutor_getsItsFinalDecision() throws Exception {
        Cli.Running first = cli.start(runArgs("echo started >> ledger; sleep 3; " + LEDGER_LINE));
        await().atMost(Timing.APPEAR).until(() -> ledgerLines().contains("started"));

        Cli.Result waiter = run(LEDGER_LINE, "--wait", "60s");

        assertThat(first.await(Timing.PROCESS).exit()).isEqualTo(0);
        assertThat(waiter.exit()).as(waiter.toString()).isEqualTo(10);
        assertThat(ledgerLines()).hasSize(2); // "started" and the first run's one delivery
    }
}
