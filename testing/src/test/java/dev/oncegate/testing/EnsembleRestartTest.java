package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kit's ensemble when a killed server's port is taken before it restarts (by another test
 * JVM's connection, in the CI run that found this): the server stays down, the JVM lives on, and
 * the other two serve. Before, the restarted peer failed to bind and ZooKeeper ended the test JVM
 * with exit code 2.
 */
class EnsembleRestartTest {

    @Test
    void aRestartWhosePortIsTaken_leavesThatServerDownAndTheOthersServing() throws Exception {
        try (Ensemble ensemble = Ensemble.start(Timing.WAIT)) {
            // Given the leader killed, and its client port taken by another process meanwhile
            int port = ensemble.killLeader();
            try (ServerSocket squatter = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {

                // When the killed servers are restarted
                List<Integer> down = ensemble.restartKilled();

                // Then that one stays down, and the two others elect a leader and take writes
                assertThat(down).containsExactly(port);
                assertThat(ensemble.awaitLeader(Timing.EVENTUALLY)).isTrue();
                assertThat(ensemble.leaderPort()).isPresent().get().isNotEqualTo(port);
                writeAndRead(ensemble, "/while-one-is-down");
            }

            // And once the port is free again, the next restart brings it back with its data
            assertThat(ensemble.restartKilled()).isEmpty();
            await().atMost(Timing.EVENTUALLY).until(() -> List.of("leader", "follower").contains(Ensemble.mode(port)));
            writeAndRead(ensemble, "/all-three-again");
        }
    }

    @Test
    void aServerThatCannotBindItsPort_failsItsStartWithoutEndingTheJvm() throws Exception {
        try (Ensemble ensemble = Ensemble.start(Timing.WAIT)) {
            // Given the leader killed, and its client port taken after any check could be made
            int port = ensemble.killLeader();
            try (ServerSocket squatter = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {

                // When that server is started all the same, so that ZooKeeper meets the bind failure
                // (this test's JVM ended here before: ZooKeeper's handler called System.exit(2))
                assertThatThrownBy(() -> ensemble.startUnchecked(port, Duration.ofSeconds(3)))
                        .isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("did not start");

                // Then the JVM is still here, and the ensemble still serves on the two others
                assertThat(ensemble.awaitLeader(Timing.EVENTUALLY)).isTrue();
                writeAndRead(ensemble, "/after-a-failed-start");
                assertThat(ensemble.restartKilled()).as("still counted as down").containsExactly(port);
            }
        }
    }

    @Test
    void aStandaloneRestartWhosePortIsTaken_isRefused_andWorksOnceItIsFree() throws Exception {
        try (EmbeddedZooKeeper zk = EmbeddedZooKeeper.start()) {
            // Given a stopped server whose port another process took meanwhile
            int port = zk.server().getPort();
            zk.stop();
            try (ServerSocket squatter = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                // When it is restarted, Then the restart is refused with a message naming the port (ZooKeeper
                // would have failed to bind and ended this JVM)
                assertThatThrownBy(zk::restart).isInstanceOf(IllegalStateException.class).hasMessageContaining("port " + port);
            }
            // and once the port is free again it restarts with its data
            zk.restart();
            try (CuratorFramework client = zk.newClient(Timing.SESSION)) {
                client.create().forPath("/after-restart");
                assertThat(client.checkExists().forPath("/after-restart")).isNotNull();
            }
        }
    }

    @Test
    void portsAreChosenBelowTheEphemeralRange(@TempDir Path dir) throws Exception {
        Path range = dir.resolve("ip_local_port_range");
        Files.writeString(range, "40000\t60999\n", StandardCharsets.US_ASCII);
        assertThat(Ports.ephemeralLow(range)).isEqualTo(40000);
        Files.writeString(range, "11000 60999\n", StandardCharsets.US_ASCII);
        assertThat(Ports.ephemeralLow(range)).as("too few ports below it: the usual default").isEqualTo(32768);
        Files.writeString(range, "garbage", StandardCharsets.US_ASCII);
        assertThat(Ports.ephemeralLow(range)).isEqualTo(32768);
        assertThat(Ports.ephemeralLow(dir.resolve("missing"))).isEqualTo(32768);

        int low = Ports.ephemeralLow(Path.of("/proc/sys/net/ipv4/ip_local_port_range"));
        int port = Ports.pick(List.of());
        assertThat(port).isBetween(Ports.FLOOR, low - 1);
        assertThat(Ports.free(port)).isTrue();
        try (ServerSocket taken = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            assertThat(Ports.free(port)).isFalse();
        }
    }

    private static void writeAndRead(Ensemble ensemble, String path) throws Exception {
        try (CuratorFramework client = ensemble.newClient(Timing.SESSION)) {
            client.create().forPath(path, path.getBytes(StandardCharsets.UTF_8));
            assertThat(new String(client.getData().forPath(path), StandardCharsets.UTF_8)).isEqualTo(path);
        }
    }
}
