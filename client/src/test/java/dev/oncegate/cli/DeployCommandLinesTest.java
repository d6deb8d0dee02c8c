package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.oncegate.deploy.RepoFiles;
import org.junit.jupiter.api.Test;

/**
 * The command lines {@code deploy/} runs are ones this CLI accepts: every systemd unit's
 * {@code ExecStart} after {@code oncegate.jar}, and every Kubernetes container that runs the
 * image's entrypoint with {@code args}, parse with the real command line (each option exists and
 * takes the value given). A renamed flag fails here, not on a production host.
 */
class DeployCommandLinesTest {

    /** Unit file → the arguments after {@code oncegate.jar} in its ExecStart. */
    static Map<String, List<String>> systemdCommandLines() throws Exception {
        Map<String, List<String>> out = new LinkedHashMap<>();
        try (Stream<Path> units = Files.list(RepoFiles.path("deploy/systemd"))) {
            for (Path unit : units.filter(p -> p.toString().endsWith(".service")).sorted().toList()) {
                for (String line : Files.readAllLines(unit)) {
                    int jar = line.indexOf("oncegate.jar ");
                    if (line.startsWith("ExecStart=") && jar >= 0) {
                        out.put(unit.getFileName().toString(), List.of(line.substring(jar + "oncegate.jar ".length()).strip().split("\\s+")));
                    }
                }
            }
        }
        return out;
    }

    /** Workload → the {@code args} of its oncegate container, when it runs the image's entrypoint. */
    static Map<String, List<String>> kubernetesCommandLines() throws Exception {
        ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
        Map<String, List<String>> out = new LinkedHashMap<>();
        try (Stream<Path> files = Files.list(RepoFiles.path("deploy/kubernetes"))) {
            for (Path file : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
                try (MappingIterator<JsonNode> docs = yaml.readerFor(JsonNode.class).readValues(file.toFile())) {
                    while (docs.hasNext()) {
                        JsonNode doc = docs.next();
                        if (doc == null) {
                            continue;
                        }
                        JsonNode pod = doc.path("spec").path("template").path("spec");
                        for (JsonNode container : (Iterable<JsonNode>) () -> java.util.stream.Stream.concat(
                                java.util.stream.StreamSupport.stream(pod.path("containers").spliterator(), false),
                                java.util.stream.StreamSupport.stream(pod.path("initContainers").spliterator(), false)).iterator()) {
                            if (container.path("name").asText().equals("oncegate") && container.path("command").isMissingNode()) {
                                List<String> args = new ArrayList<>();
                                container.path("args").forEach(a -> args.add(a.asText()));
                                out.put(doc.path("metadata").path("name").asText(), args);
                            }
                        }
                    }
                }
            }
        }
        return out;
    }

    @Test
    void systemdUnits_runCommandLinesTheCliAccepts() throws Exception {
        Map<String, List<String>> lines = systemdCommandLines();

        assertThat(lines).containsKeys("oncegate-server.service", "oncegate-exporter.service", "oncegate-worker-example.service",
                "oncegate-sidecar.service");
        lines.forEach((unit, args) -> assertThatCode(() -> Main.commandLine().parseArgs(args.toArray(String[]::new)))
                .as(unit + ": " + args).doesNotThrowAnyException());
    }

    @Test
    void kubernetesContainers_runCommandLinesTheCliAccepts() throws Exception {
        Map<String, List<String>> lines = kubernetesCommandLines();

        assertThat(lines).containsKeys("oncegate-exporter", "oncegate-init", "oncegate-sidecar-example");
        lines.forEach((workload, args) -> assertThatCode(() -> Main.commandLine().parseArgs(args.toArray(String[]::new)))
                .as(workload + ": " + args).doesNotThrowAnyException());
    }
}
