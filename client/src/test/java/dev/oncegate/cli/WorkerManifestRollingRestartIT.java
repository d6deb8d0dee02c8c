package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.IdentityKind;
import dev.oncegate.deploy.RepoFiles;
import dev.oncegate.deploy.Tools;
import dev.oncegate.testing.Timing;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * A rolling restart of deploy/kubernetes/worker-example.yaml leaves no key armed: the container's
 * own command line (tini, the shell and its loop, read from the manifest, not copied) runs in a PID
 * namespace of its own, as in a pod, and SIGTERM goes to its PID 1 while the gated command runs.
 *
 * <p>What is substituted, and only that: each volume's mount path by a directory of this test
 * (the inbox holds one report, the deliver-report program is this test's, which hangs until it is
 * signalled, the auth file holds the example Secret's worker-auth), the Secret's connect string by
 * this test's ZooKeeper, the pod name by a fixed one, and the image's {@code oncegate} launcher by
 * deploy/image/oncegate pointing at the built jar. Needs root (unshare), util-linux and tini.
 */
class WorkerManifestRollingRestartIT extends CliFixture {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final String POD_NAME = "oncegate-worker-example-7d9f-x2x4q";

    @Test
    void sigtermToPid1DuringTheAction_recordsTheOutcome_andLeavesNothingArmed() throws Exception {
        // Given the manifest's worker, in a PID namespace, delivering the one report of its inbox
        Path unshare = Tools.require("unshare", "apt-get install -y util-linux");
        Tools.require("tini", "apt-get install -y tini");
        requireRoot();
        JsonNode deployment = manifest("Deployment", "oncegate-worker-example");
        JsonNode container = deployment.path("spec").path("template").path("spec").path("containers").get(0);
        Map<String, Path> mounts = volumes(deployment, container);
        Path report = Files.writeString(mounts.get("/inbox").resolve("q3.pdf"), "q3 " + dest + "\n");
        key = EffectKey.of(Destination.parse(IdentityKind.STABLE, argument(script(container), "--dest")), report);
        Files.writeString(mounts.get("/opt/worker").resolve("deliver-report"), "#!/bin/sh\n"
                + "echo \"started $1\" >> " + ledger + "\n"
                + "echo $$ > " + dir.resolve("deliver.pid") + "\n" // its PID in the pod's namespace: a start marker
                + "exec sleep 300\n");
        Files.setPosixFilePermissions(mounts.get("/opt/worker").resolve("deliver-report"), PosixFilePermissions.fromString("r-xr-xr-x"));
        Files.writeString(mounts.get("/etc/oncegate/auth").resolve("worker-auth"),
                secret().path("stringData").path("worker-auth").asText() + "\n");

        List<String> command = new ArrayList<>(List.of(unshare.toString(), "--pid", "--fork", "--mount-proc"));
        container.path("command").forEach(c -> command.add(c.asText()));
        command.add(substitute(script(container), mounts));
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile())
                .redirectOutput(dir.resolve("pod.out").toFile()).redirectError(dir.resolve("pod.err").toFile());
        builder.environment().keySet().removeIf(name -> name.startsWith("ONCEGATE_") || name.startsWith("JAVA_"));
        builder.environment().putAll(environment(container, mounts));
        builder.environment().put("PATH", launcherDir() + ":" + System.getenv("PATH"));
        Process pod = builder.start();
        try {
            try {
                await().atMost(Timing.APPEAR).until(() -> ledgerLines().size() == 1 && Files.exists(dir.resolve("deliver.pid"))
                        && !Files.readString(dir.resolve("deliver.pid")).isBlank());
            } catch (ConditionTimeoutException e) {
                throw new AssertionError("deliver-report did not start; the pod's stderr:\n"
                        + Files.readString(dir.resolve("pod.err")) + "\nstdout:\n" + Files.readString(dir.resolve("pod.out")), e);
            }
            ProcessHandle pid1 = pod.toHandle().children().findFirst().orElseThrow();

            // When the kubelet stops the pod: SIGTERM to PID 1 (tini), SIGKILL after terminationGracePeriodSeconds
            pid1.destroy();
            Duration grace = Duration.ofSeconds(deployment.path("spec").path("template").path("spec")
                    .path("terminationGracePeriodSeconds").asLong());
            boolean ended = pod.waitFor(Timing.scaled(grace).toMillis(), TimeUnit.MILLISECONDS);

            // Then the pod ended within its grace, the run recorded its outcome, and nothing is armed without one
            String stderr = Files.readString(dir.resolve("pod.err"), StandardCharsets.UTF_8);
            assertThat(ended).as("the pod ends within terminationGracePeriodSeconds; stderr:\n" + stderr).isTrue();
            assertThat(outcome(0)).as("the outcome of scope 0; stderr:\n" + stderr).contains("\"send_status_unknown\"");
            assertThat(stderr).contains("\"recorded\":true");
            assertThat(ledgerLines()).containsExactly("started " + report);
            // (the PID namespace's processes, deliver-report among them, ended with its PID 1)
        } finally {
            pod.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
            pod.destroyForcibly();
        }
    }

    @Test
    void terminationGracePeriod_exceedsTheShutdownGracePlusTheKillGrace() throws Exception {
        JsonNode deployment = manifest("Deployment", "oncegate-worker-example");
        JsonNode container = deployment.path("spec").path("template").path("spec").path("containers").get(0);
        Duration shutdownGrace = Durations.parse(argument(script(container), "--shutdown-grace"));
        Duration grace = Duration.ofSeconds(deployment.path("spec").path("template").path("spec")
                .path("terminationGracePeriodSeconds").asLong());

        assertThat(grace).isGreaterThan(shutdownGrace.plus(ChildCommand.GRACE));
    }

    private static void requireRoot() {
        if (!"root".equals(System.getProperty("user.name"))) {
            String message = "a PID namespace (unshare --pid) needs root, as in CI";
            if (Tools.required()) {
                fail(message);
            }
            Assumptions.abort(message);
        }
    }

    private static JsonNode manifest(String kind, String name) throws Exception {
        try (MappingIterator<JsonNode> docs = YAML.readerFor(JsonNode.class)
                .readValues(RepoFiles.path("deploy/kubernetes/worker-example.yaml").toFile())) {
            while (docs.hasNext()) {
                JsonNode doc = docs.next();
                if (doc.path("kind").asText().equals(kind) && doc.path("metadata").path("name").asText().equals(name)) {
                    return doc;
                }
            }
        }
        throw new AssertionError("no " + kind + " " + name + " in worker-example.yaml");
    }

    private static JsonNode secret() throws Exception {
        return YAML.readTree(RepoFiles.path("deploy/kubernetes/secret-example.yaml").toFile());
    }

    /** The shell script the container runs: its one argument. */
    private static String script(JsonNode container) {
        assertThat(container.path("args")).hasSize(1);
        return container.path("args").get(0).asText();
    }

    private static String argument(String script, String option) {
        Matcher m = Pattern.compile(Pattern.quote(option) + "[ =](\\S+)").matcher(script);
        assertThat(m.find()).as(option + " in the worker's script").isTrue();
        return m.group(1);
    }

    /** Mount path → a directory of this test, one per volume. */
    private Map<String, Path> volumes(JsonNode deployment, JsonNode container) throws Exception {
        Map<String, Path> out = new LinkedHashMap<>();
        for (JsonNode mount : container.path("volumeMounts")) {
            Path volume = Files.createDirectories(dir.resolve("volumes").resolve(mount.path("name").asText()));
            out.put(mount.path("mountPath").asText(), volume);
        }
        assertThat(deployment.path("spec").path("template").path("spec").path("volumes")).hasSameSizeAs(container.path("volumeMounts"));
        return out;
    }

    /** {@code text} with each mount path replaced by its directory here, in one pass (longest paths first). */
    private static String substitute(String text, Map<String, Path> mounts) {
        List<String> paths = new ArrayList<>(mounts.keySet());
        paths.sort((a, b) -> b.length() - a.length());
        Matcher m = Pattern.compile(String.join("|", paths.stream().map(Pattern::quote).toList())).matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(out, Matcher.quoteReplacement(mounts.get(m.group()).toString()));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** The container's environment: literal values (mount paths substituted), the Secret's keys, the pod's name. */
    private Map<String, String> environment(JsonNode container, Map<String, Path> mounts) throws Exception {
        JsonNode secret = secret().path("stringData");
        Map<String, String> out = new LinkedHashMap<>();
        for (JsonNode env : container.path("env")) {
            String name = env.path("name").asText();
            JsonNode secretKey = env.path("valueFrom").path("secretKeyRef");
            if (env.has("value")) {
                out.put(name, substitute(env.path("value").asText(), mounts));
            } else if (!secretKey.isMissingNode()) {
                String value = secret.path(secretKey.path("key").asText()).asText();
                out.put(name, secretKey.path("key").asText().equals("connect") ? zk.connectString() : value);
            } else if (env.path("valueFrom").path("fieldRef").path("fieldPath").asText().equals("metadata.name")) {
                out.put(name, POD_NAME);
            } else {
                throw new AssertionError("an environment variable this test does not know how to give: " + env);
            }
        }
        return out;
    }

    /** The image's {@code oncegate} launcher (deploy/image/oncegate), running the built jar. */
    private Path launcherDir() throws Exception {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        String launcher = RepoFiles.read("deploy/image/oncegate");
        assertThat(launcher).contains("/opt/oncegate/oncegate.jar");
        Path oncegate = Files.writeString(bin.resolve("oncegate"), launcher.replace("/opt/oncegate/oncegate.jar", Cli.jar().toString()));
        Files.setPosixFilePermissions(oncegate, PosixFilePermissions.fromString("rwxr-xr-x"));
        return bin;
    }
}
