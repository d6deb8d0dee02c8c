package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.Outcome;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class GateSmokeTest {

    static EmbeddedZooKeeper zk;

    @BeforeAll
    static void start() {
        zk = EmbeddedZooKeeper.start();
        zk.initNamespace("/oncegate");
    }

    @AfterAll
    static void stop() {
        zk.close();
    }

    @Test
    void single_then_repeat() throws Exception {
        RecordingProvider provider = new RecordingProvider();
        EffectKey key = EffectKey.of(Destination.stable("slack", "C1"), "x".getBytes(StandardCharsets.UTF_8));
        try (CuratorFramework client = zk.newClient(); Gate gate = Gate.builder(client).taskId("t1").build()) {
            try (Attempt a = gate.enter(key)) {
                assertThat(a.decision()).isInstanceOf(Decision.Proceed.class);
                assertThat(a.checkpoint("picker").proceeds()).isTrue();
                Crossing c = a.cross(provider.verified());
                assertThat(c).isInstanceOf(Crossing.Crossed.class);
                assertThat(((Crossing.Crossed) c).outcome()).isEqualTo(Outcome.SENT_VERIFIED);
            }
            try (Attempt a = gate.enter(key)) {
                assertThat(a.decision()).isInstanceOf(Decision.StopSent.class);
            }
            System.out.println(gate.inspect(key.key()));
        }
        assertThat(provider.deliveries()).isEqualTo(1);
    }

    @Test
    void sixteen_contenders_one_delivery() throws Exception {
        RecordingProvider provider = new RecordingProvider();
        EffectKey key = EffectKey.of(Destination.stable("slack", "C2"), "y".getBytes(StandardCharsets.UTF_8));
        ExecutorService pool = Executors.newFixedThreadPool(16);
        List<CuratorFramework> clients = new ArrayList<>();
        List<Future<String>> results = new ArrayList<>();
        try {
            for (int i = 0; i < 16; i++) {
                CuratorFramework client = zk.newClient();
                clients.add(client);
                Gate gate = Gate.builder(client).taskId("t" + i).build();
                Callable<String> task = () -> {
                    try (Attempt a = gate.enter(key, Duration.ofSeconds(20))) {
                        if (a.decision() instanceof Decision.Proceed) {
                            Crossing c = a.cross(provider.verified());
                            return c.toString();
                        }
                        return a.decision().kind();
                    }
                };
                results.add(pool.submit(task));
            }
            List<String> kinds = new ArrayList<>();
            for (Future<String> f : results) {
                kinds.add(f.get());
            }
            System.out.println(kinds);
            assertThat(kinds.stream().filter(k -> k.equals("stop_sent")).count()).isEqualTo(15);
        } finally {
            pool.shutdownNow();
            clients.forEach(CuratorFramework::close);
        }
        assertThat(provider.deliveries()).isEqualTo(1);
    }
}
