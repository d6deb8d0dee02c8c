package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Builds the CLI's container image with deploy/image/build.sh (no daemon, no registry: Debian
 * packages and umoci), then reads the OCI layout it wrote: entrypoint tini in front of the CLI,
 * a non-root user, the jar, and {@code oncegate key} run inside the image's root filesystem as
 * that user under tini (with chroot: no container runtime can create namespaces on these
 * machines), giving the same key as the jar outside.
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
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " did not finish in " + timeoutSeconds + " s:\n" + Files.readString(out));
        }
        return new Run(process.exitValue(), Files.readString(out));
    }

    static JsonNode blob(Path layout, String digest) throws IOException {
        return Cli.JSON.readTree(layout.resolve("blobs/sha256/" + digest.substring("sha256:".length())).toFile());
    }

    @Test
    void daemonlessBuild_writesANonRootImageWithTini_whoseCliRuns() throws Exception {
        assumeTrue(Boolean.getBoolean("oncegate.image.build"), "builds the image only with -Pimage");
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

        // and its layer holds a root filesystem with Java, tini, the jar and the user
        Path rootfs = Files.createDirectories(dir.resolve("rootfs"));
        for (JsonNode layer : manifest.path("layers")) {
            String blob = layout.resolve("blobs/sha256/" + layer.path("digest").asText().substring(7)).toString();
            assertThat(run(dir, 300, "tar", "--numeric-owner", "-xzf", blob, "-C", rootfs.toString()).exit()).isZero();
        }
        assertThat(rootfs.resolve("usr/bin/tini")).isExecutable();
        assertThat(rootfs.resolve("opt/oncegate/oncegate.jar")).isRegularFile();
        assertThat(Files.readString(rootfs.resolve("etc/passwd"))).contains("oncegate:x:10001:10001:");

        // and `oncegate key` runs inside it, as that user, under tini, with the image's Java
        Files.writeString(rootfs.resolve("tmp/report.txt"), "quarterly report\n");
        Run inside = run(dir, 300, "chroot", "--userspec=10001:10001", rootfs.toString(),
                "/usr/bin/tini", "--", "/usr/local/bin/oncegate", "key", "--dest", "slack:C024BE91L", "--file", "/tmp/report.txt");
        assertThat(inside.exit()).as(inside.output()).isZero();
        Files.writeString(dir.resolve("report.txt"), "quarterly report\n");
        Cli.Result outside = new Cli(dir, java.util.Map.of()).run("key", "--dest", "slack:C024BE91L", "--file", "report.txt");
        String insideJson = inside.output().lines().filter(l -> l.startsWith("{")).findFirst().orElseThrow();
        assertThat(Cli.JSON.readTree(insideJson).path("key").asText()).isEqualTo(outside.stdoutJson().path("key").asText());
    }
}
