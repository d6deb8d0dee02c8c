package dev.oncegate.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.KeyHistory;
import org.apache.curator.framework.CuratorFramework;

/**
 * The process variant of the chaos run: worker JVMs ({@link ChaosWorkerMain}) race over the
 * effects while this run SIGKILLs them at random points — right after they were elected, after
 * arming, after the delivery reached the provider but before the outcome, after the outcome —
 * and starts a replacement with the same task id (a resumed task). After the kill phase, the
 * survivors must decide every effect; the {@link AtMostOnceChecker} verdict over the shared
 * ledger file and ZooKeeper's records is the result.
 *
 * <p>Every process it starts is killed before {@link #run} returns. Runs share nothing.
 */
public final class ProcessChaosRun {

    /**
     * @param workers         worker processes alive at a time (≥ 1)
     * @param effects         effects (≥ 1)
     * @param contenders      contenders per effect, spread over distinct workers where possible (≥ 1)
     * @param killPhase       how long kills happen
     * @param killProbability chance that a worker is killed at each phase it reports during the kill phase
     * @param seed            the seed of every random choice
     * @param settle          how long after the kill phase the survivors get to decide every effect
     */
    public record Config(int workers, int effects, int contenders, Duration killPhase, double killProbability, long seed,
                         Duration settle) {
        public Config {
            if (workers < 1 || effects < 1 || contenders < 1) {
                throw new IllegalArgumentException("workers, effects, contenders: each must be at least 1");
            }
            if (!(killProbability >= 0 && killProbability <= 1)) {
                throw new IllegalArgumentException("killProbability: must be within [0, 1], got " + killProbability);
            }
            Objects.requireNonNull(killPhase, "killPhase");
            Objects.requireNonNull(settle, "settle");
        }
    }

    /**
     * @param seed             replay with this
     * @param verdict          the checker's verdict
     * @param killsByPhase     SIGKILLs, by the phase the worker had just reported
     * @param processesStarted worker processes started, replacements included
     * @param elapsed          wall time
     */
    public record Report(long seed, AtMostOnceChecker.Verdict verdict, Map<String, Integer> killsByPhase,
                         int processesStarted, Duration elapsed) {
        public boolean ok() {
            return verdict.safe() && verdict.undecided() == 0 && verdict.duplicates() == 0;
        }
    }

    private static final Duration LEASE_TTL = Duration.ofSeconds(3);
    private static final Duration SESSION = Duration.ofSeconds(5);

    private final Config config;
    private final Path dir;
    private final Random random;
    private final long killUntil;
    private final long startEpochMs = System.currentTimeMillis();
    private final long deadline;
    private final Map<String, Integer> kills = Collections.synchronizedMap(new TreeMap<>());
    private final AtomicInteger started = new AtomicInteger();
    private final List<Process> live = Collections.synchronizedList(new ArrayList<>());

    private ProcessChaosRun(Config config, Path dir) {
        this.config = config;
        this.dir = dir;
        this.random = new Random(config.seed());
        long now = System.nanoTime();
        this.killUntil = now + config.killPhase().toNanos();
        this.deadline = now + config.killPhase().plus(config.settle()).toNanos();
    }

    public static Report run(Config config) throws InterruptedException, IOException {
        Path dir = Files.createTempDirectory("oncegate-process-chaos");
        try {
            return new ProcessChaosRun(config, dir).execute();
        } finally {
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private Report execute() throws InterruptedException, IOException {
        long t0 = System.nanoTime();
        Path ledger = dir.resolve("ledger.txt");
        try (ChaosFixture fixture = ChaosFixture.standalone()) {
            fixture.initNamespace(ChaosRun.NAMESPACE);
            List<List<Integer>> assignment = new ArrayList<>();
            for (int w = 0; w < config.workers(); w++) {
                assignment.add(new ArrayList<>());
            }
            for (int e = 0; e < config.effects(); e++) {
                List<Integer> order = new ArrayList<>();
                for (int w = 0; w < config.workers(); w++) {
                    order.add(w);
                }
                Collections.shuffle(order, random);
                for (int c = 0; c < config.contenders(); c++) {
                    assignment.get(order.get(c % order.size())).add(e);
                }
            }
            List<Thread> supervisors = new ArrayList<>();
            try {
                for (int w = 0; w < config.workers(); w++) {
                    int worker = w;
                    Thread t = new Thread(() -> supervise("worker-" + worker, assignment.get(worker), fixture, ledger),
                            "chaos-supervisor-" + w);
                    t.setDaemon(true);
                    t.start();
                    supervisors.add(t);
                }
                for (Thread t : supervisors) {
                    t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())) + 10_000);
                }
            } finally {
                for (Thread t : supervisors) {
                    t.interrupt();
                }
                synchronized (live) {
                    live.forEach(ProcessChaosRun::kill);
                }
            }
            List<KeyHistory> histories = new ArrayList<>();
            try (CuratorFramework client = EmbeddedZooKeeper.newClient(fixture.connectString(), SESSION);
                 Gate reader = Gate.builder(client).namespace(ChaosRun.NAMESPACE).build()) {
                for (int e = 0; e < config.effects(); e++) {
                    EffectKey key = ChaosWorkerMain.key(config.seed(), e);
                    histories.add(reader.inspect(key.key()));
                }
            }
            AtMostOnceChecker.Verdict verdict = AtMostOnceChecker.check(histories, RecordingProvider.readLedger(ledger), true);
            return new Report(config.seed(), verdict, Map.copyOf(kills), started.get(), Duration.ofNanos(System.nanoTime() - t0));
        }
    }

    /** Keeps one worker slot alive: start, watch its phases, maybe SIGKILL, restart (resume) until it is done. */
    private void supervise(String task, List<Integer> assigned, ChaosFixture fixture, Path ledger) {
        if (assigned.isEmpty()) {
            return;
        }
        String assign = String.join(",", assigned.stream().map(String::valueOf).toList());
        while (System.nanoTime() < deadline && !Thread.currentThread().isInterrupted()) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            // a worker lives seconds between kills: C1 only and the serial collector start it sooner and
            // spend less CPU (a replacement that starts late on a loaded machine meets no kill phase)
            ProcessBuilder pb = new ProcessBuilder(javaBinary(), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                    "-cp", System.getProperty("java.class.path"), "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                    ChaosWorkerMain.class.getName(), "--connect", fixture.connectString(), "--seed", Long.toString(config.seed()),
                    "--effects", Integer.toString(config.effects()), "--assign", assign, "--ledger", ledger.toString(),
                    "--task", task, "--lease-ttl-ms", Long.toString(LEASE_TTL.toMillis()),
                    "--session-ms", Long.toString(SESSION.toMillis()), "--deadline-ms", Long.toString(left),
                    // effects arrive over the first 80% of the kill phase, so kills meet work in flight
                    "--start-epoch-ms", Long.toString(startEpochMs),
                    "--spread-ms", Long.toString(config.killPhase().toMillis() * 4 / 5));
            pb.redirectError(ProcessBuilder.Redirect.DISCARD);
            Process process;
            try {
                process = pb.start();
            } catch (IOException e) {
                throw new IllegalStateException("could not start a worker process: " + e, e);
            }
            started.incrementAndGet();
            live.add(process);
            boolean killed = false;
            boolean done = false;
            try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = out.readLine()) != null; ) {
                    if (line.startsWith("done ")) {
                        done = true;
                    } else if (line.startsWith("phase ") && System.nanoTime() < killUntil && roll()) {
                        kills.merge(line.split(" ")[1], 1, Integer::sum);
                        kill(process);
                        killed = true;
                        break;
                    }
                }
                process.waitFor(30, TimeUnit.SECONDS);
            } catch (IOException e) {
                killed = true;
            } catch (InterruptedException e) {
                kill(process);
                return;
            } finally {
                kill(process);
                live.remove(process);
            }
            if (done && !killed && process.exitValue() == 0) {
                return;
            }
        }
    }

    private boolean roll() {
        synchronized (random) {
            return random.nextDouble() < config.killProbability();
        }
    }

    private static void kill(Process process) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly(); // SIGKILL on Linux
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}
