package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Builds the CLI's container image with deploy/image/build.sh (no daemon, no registry: Debian
 * packages and umoci), then reads the OCI layout it wrote: entrypoint tini in front of the CLI,
 * a non-root user, the jar; then runs it with runc (Debian's package: an OCI runtime without a
 * daemon), checks that tini is PID 1 and the user 10001, and that {@code oncegate key} inside
 * gives the same key as the jar outside. Needs root, mmdebstrap, umoci and runc.
 *
 * <p>Several minutes and a few hundred MB of Debian packages: only with {@code mvn -B verify -Pimage}.
 */
class ImageBuildIT {

    @TempDir
    Path dir;

    record Run(int exit, String output) {
    }

    static Run run(Path workDir, long timeoutSeconds, String... command) throws IOException, InterruptedException {
        Path out = Files.createTempFile(workDir, "cmd-", ".txt");
        ProcessBuilder builder = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true)
                .redirectOutput(out.toFile());
        builder.environment().put("ONCEGATE_JAR", Cli.jar().toString());
        Process process = builder.start();
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            ProcessTree.kill(process, Duration.ZERO);
            throw new AssertionError(String.join(" ", command) + " did not finish in " + timeoutSeconds + " s:\n" + Files.readString(out));
        }
        return new Run(process.exitValue(), Files.readString(out));
    }

    static JsonNode blob(Path layout, String digest) throws IOException {
        return Cli.JSON.readTree(layout.resolve("blobs/sha256/" + digest.substring("sha256:".length())).toFile());
    }

    /** Runs the image's entrypoint (tini --) with {@code command} in the bundle, with runc. */
    Run runContainer(Path bundle, String name, List<String> command) throws Exception {
        Path configFile = bundle.resolve("config.json");
        com.fasterxml.jackson.databind.node.ObjectNode config = (com.fasterxml.jackson.databind.node.ObjectNode) Cli.JSON.readTree(configFile.toFile());
        com.fasterxml.jackson.databind.node.ObjectNode process = (com.fasterxml.jackson.databind.node.ObjectNode) config.path("process");
        assertThat(process.path("args").get(0).asText()).isEqualTo("/usr/bin/tini");
        assertThat(process.path("user").path("uid").asInt()).isEqualTo(10001);
        com.fasterxml.jackson.databind.node.ArrayNode args = process.putArray("args");
        args.add("/usr/bin/tini").add("--");
        command.forEach(args::add);
        process.put("terminal", false);
        Cli.JSON.writeValue(configFile.toFile(), config);
        String id = "oncegate-image-it-" + name + "-" + ProcessHandle.current().pid();
        try {
            Run result = run(dir, 300, "runc", "run", "--bundle", bundle.toString(), id);
            assertThat(result.exit()).as(result.output()).isZero();
            return result;
        } finally {
            run(dir, 60, "runc", "delete", "--force", id);
        }
    }

    @Test
    void daemonlessBuild_writesANonRootImageWithTini_whoseCliRuns() throws Exception {
        assumeTrue(Boolean.getBoolean("oncegate.image.build"), "builds the image only with -Pimage");
        for (String tool : List.of("mmdebstrap", "umoci", "runc")) {
            assertThat(run(dir, 30, "sh", "-c", "command -v " + tool).exit())
                    .as(tool + " is missing: apt-get install -y mmdebstrap umoci runc").isZero();
        }
        Path script = Path.of(System.getProperty("user.dir")).getParent().resolve("deploy/image/build.sh");

        // When the image is built
        Path image = dir.resolve("oncegate-image.tar");
        Run build = run(dir, 1800, "bash", script.toString(), image.toString());
        assertThat(build.exit()).as(build.output()).isZero();

        // Then it is an OCI layout whose config says: tini, then the CLI, as user 10001
        Path layout = Files.createDirectories(dir.resolve("layout"));
        assertThat(run(dir, 300, "tar", "-xf", image.toString(), "-C", layout.toString()).exit()).isZero();
        JsonNode index = Cli.JSON.readTree(layout.resolve("index.json").toFile());
        JsonNode manifest = blob(layout, index.path("manifests").get(0).path("digest").asText());
        assertThat(index.path("manifests").get(0).path("annotations").path("org.opencontainers.image.ref.name").asText())
                .isEqualTo("0.1.0-SNAPSHOT");
        JsonNode config = blob(layout, manifest.path("config").path("digest").asText());
        List<String> entrypoint = new ArrayList<>();
        config.path("config").path("Entrypoint").forEach(e -> entrypoint.add(e.asText()));
        assertThat(entrypoint).containsExactly("/usr/bin/tini", "--", "/usr/local/bin/oncegate");
        assertThat(config.path("config").path("User").asText()).isEqualTo("10001:10001");
        assertThat(config.path("config").path("WorkingDir").asText()).isEqualTo("/home/oncegate");
        assertThat(config.path("os").asText()).isEqualTo("linux");

        // and, unpacked into a runtime bundle, its root filesystem holds Java, tini, the jar and the user
        Path bundle = dir.resolve("bundle");
        Run unpack = run(dir, 600, "umoci", "unpack", "--image", layout + ":0.1.0-SNAPSHOT", bundle.toString());
        assertThat(unpack.exit()).as(unpack.output()).isZero();
        Path rootfs = bundle.resolve("rootfs");
        assertThat(rootfs.resolve("usr/bin/tini")).isExecutable();
        assertThat(rootfs.resolve("opt/oncegate/oncegate.jar")).isRegularFile();
        assertThat(Files.readString(rootfs.resolve("etc/passwd"))).contains("oncegate:x:10001:10001:");

        // and in a real container (runc: pid, mount, network namespaces), tini is PID 1, the user is 10001
        Run init = runContainer(bundle, "init", List.of("/bin/sh", "-c", "cat /proc/1/comm; id -u; id -g"));
        assertThat(init.output().lines().toList()).as(init.output()).containsSubsequence("tini", "10001", "10001");
        // and `oncegate key` runs with the image's Java, giving the same key as the jar outside
        Files.writeString(rootfs.resolve("tmp/report.txt"), "quarterly report\n");
        Run inside = runContainer(bundle, "key", List.of("/usr/local/bin/oncegate", "key", "--dest", "slack:C024BE91L",
                "--file", "/tmp/report.txt"));
        Files.writeString(dir.resolve("report.txt"), "quarterly report\n");
        Cli.Result outside = new Cli(dir, Map.of()).run("key", "--dest", "slack:C024BE91L", "--file", "report.txt");
        String insideJson = inside.output().lines().filter(l -> l.startsWith("{")).findFirst().orElseThrow(
                () -> new AssertionError("no JSON from oncegate key in the container:\n" + inside.output()));
        assertThat(Cli.JSON.readTree(insideJson).path("key").asText()).isEqualTo(outside.stdoutJson().path("key").asText());
    }
}
