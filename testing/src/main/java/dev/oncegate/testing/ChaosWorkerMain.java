package dev.oncegate.testing;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import org.apache.curator.framework.CuratorFramework;

/**
 * A chaos worker process: one ZooKeeper session, one gate, one contender thread per assigned
 * effect. It prints {@code phase <name> <effect>} at each step ({@code proceed}, {@code armed},
 * {@code delivered}, {@code outcome}) and pauses briefly there, so that its parent can SIGKILL
 * it at that exact point; deliveries go to a shared ledger file. Exits 0 once every assigned
 * effect is decided, 1 when its deadline passed first.
 *
 * <pre>
 * java -cp … dev.oncegate.testing.ChaosWorkerMain --connect HOST:PORT --seed S --effects K
 *      --assign 0,3,7 --ledger FILE --task ID --lease-ttl-ms N --session-ms N --deadline-ms N
 *      [--start-epoch-ms T --spread-ms S]
 * </pre>
 * With {@code --spread-ms}, each effect arrives at a seed-determined time within S ms of T.
 */
public final class ChaosWorkerMain {

    private ChaosWorkerMain() {
    }

    /** The key of effect {@code index} in the run with {@code seed}: the same in every process. */
    static EffectKey key(long seed, int index) {
        return EffectKey.of(Destination.stable("chaos", "destination-" + index),
                ("effect " + index + " of run " + seed).getBytes(StandardCharsets.UTF_8));
    }

    /** When effect {@code index} arrives, in ms after the run's start: the same in every process. */
    static long arrivalOffset(long seed, int index, long spreadMs) {
        return spreadMs <= 0 ? 0 : Math.floorMod(new Random(seed * 1_000_003L + index).nextLong(), spreadMs);
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (!args[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --option value pairs, got " + args[i]);
            }
            opts.put(args[i].substring(2), args[i + 1]);
        }
        long seed = Long.parseLong(required(opts, "seed"));
        String task = required(opts, "task");
        Duration leaseTtl = Duration.ofMillis(Long.parseLong(required(opts, "lease-ttl-ms")));
        Duration session = Duration.ofMillis(Long.parseLong(required(opts, "session-ms")));
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Long.parseLong(required(opts, "deadline-ms")));
        // Effects arrive over the run (absolute times, so a replacement process keeps the schedule).
        long startEpochMs = Long.parseLong(opts.getOrDefault("start-epoch-ms", "0"));
        long spreadMs = Long.parseLong(opts.getOrDefault("spread-ms", "0"));
        RecordingProvider provider = RecordingProvider.appendingTo(Path.of(required(opts, "ledger")));
        List<Integer> assigned = new ArrayList<>();
        for (String s : required(opts, "assign").split(",")) {
            if (!s.isEmpty()) {
                assigned.add(Integer.parseInt(s));
            }
        }
        PrintStream out = System.out;
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, assigned.size()));
        int decided = 0;
        try (CuratorFramework client = EmbeddedZooKeeper.newClient(required(opts, "connect"), session);
             Gate gate = Gate.builder(client).namespace(ChaosRun.NAMESPACE).taskId(task).leaseTtl(leaseTtl)
                     .connectTimeout(session).build()) {
            List<Future<Boolean>> results = new ArrayList<>();
            for (int effect : assigned) {
                Random random = new Random(seed ^ (31L * effect + task.hashCode()));
                ChaosContender.Hooks hooks = new ChaosContender.Hooks() {
                    @Override
                    public void phase(String phase) throws InterruptedException {
                        synchronized (out) {
                            out.println("phase " + phase + " " + effect);
                            out.flush();
                        }
                        Thread.sleep(40); // give the parent a window to kill us right here
                    }

                    @Override
                    public boolean pauseNow() {
                        return false;
                    }
                };
                long arrival = startEpochMs + arrivalOffset(seed, effect, spreadMs);
                results.add(pool.submit(() -> {
                    long wait = arrival - System.currentTimeMillis();
                    if (wait > 0) {
                        Thread.sleep(wait);
                    }
                    return ChaosContender.run(gate, key(seed, effect), random, deadline, provider, leaseTtl, hooks);
                }));
            }
            for (Future<Boolean> f : results) {
                if (f.get()) {
                    decided++;
                }
            }
        } finally {
            pool.shutdownNow();
        }
        synchronized (out) {
            out.println("done " + decided + " " + assigned.size());
            out.flush();
        }
        System.exit(decided == assigned.size() ? 0 : 1);
    }

    private static String required(Map<String, String> opts, String name) {
        String v = opts.get(name);
        if (v == null) {
            throw new IllegalArgumentException("--" + name + " is required");
        }
        return v;
    }
}
