package dev.oncegate.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.oncegate.deploy.Tools;
import dev.oncegate.testing.Timing;

/**
 * Debian's stock zkCli ({@code org.apache.zookeeper.ZooKeeperMain} from the {@code zookeeper}
 * package, ZooKeeper 3.8), run as an operator would: a script of commands on stdin, its whole
 * output returned. In CI a missing package fails the test; elsewhere it is skipped, saying how
 * to install it.
 */
final class StockZkCli {

    static final Path JAR = Path.of("/usr/share/java/zookeeper.jar");

    private final String connect;
    private final Path dir;

    StockZkCli(String connect, Path dir) {
        this.connect = connect;
        this.dir = dir;
        Tools.requireFile(JAR, "apt-get install -y zookeeper");
    }

    /** Runs the commands (one a line) in one zkCli session and returns stdout and stderr together. */
    String run(String... commands) {
        try {
            Path script = Files.createTempFile(dir, "zkcli-", ".txt");
            Files.writeString(script, String.join("\n", commands) + "\nquit\n", StandardCharsets.UTF_8);
            Path out = Files.createTempFile(dir, "zkcli-", ".out");
            Process p = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp", JAR.toString(), "org.apache.zookeeper.ZooKeeperMain", "-server", connect, "-waitforconnection"))
                    .redirectInput(script.toFile()).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            if (!p.waitFor(Timing.PROCESS.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("zkCli did not finish: " + Files.readString(out));
            }
            return Files.readString(out, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
