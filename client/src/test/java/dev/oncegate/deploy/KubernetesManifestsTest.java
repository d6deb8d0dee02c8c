package dev.oncegate.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * deploy/kubernetes parses, and its objects refer to each other correctly: Services select pods
 * and name their ports, the StatefulSet's peers and PDB match it, every Secret key a pod reads
 * exists, the connect string names a Service port, every oncegate container runs the image that
 * deploy/image builds, and the PodMonitor finds a {@code metrics} port.
 */
class KubernetesManifestsTest {

    static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    static final String NAMESPACE = "oncegate";

    static List<JsonNode> objects;

    @BeforeAll
    static void parse() throws IOException {
        objects = new ArrayList<>();
        List<Path> files;
        try (Stream<Path> listing = Files.list(RepoFiles.path("deploy/kubernetes"))) {
            files = listing.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
        }
        assertThat(files).isNotEmpty();
        for (Path file : files) {
            try (MappingIterator<JsonNode> docs = YAML.readerFor(JsonNode.class).readValues(file.toFile())) {
                while (docs.hasNext()) {
                    JsonNode doc = docs.next();
                    if (doc != null && !doc.isEmpty()) {
                        objects.add(doc);
                    }
                }
            }
        }
    }

    static List<JsonNode> ofKind(String kind) {
        return objects.stream().filter(o -> o.path("kind").asText().equals(kind)).toList();
    }

    static JsonNode named(String kind, String name) {
        return ofKind(kind).stream().filter(o -> o.path("metadata").path("name").asText().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " named " + name));
    }

    /** Workloads (Deployment, StatefulSet, Job) with their pod templates. */
    static List<JsonNode> workloads() {
        return objects.stream().filter(o -> Set.of("Deployment", "StatefulSet", "Job").contains(o.path("kind").asText())).toList();
    }

    static JsonNode podSpec(JsonNode workload) {
        return workload.path("spec").path("template").path("spec");
    }

    static Map<String, String> map(JsonNode node) {
        Map<String, String> out = new HashMap<>();
        node.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
        return out;
    }

    static boolean selects(Map<String, String> selector, Map<String, String> labels) {
        return !selector.isEmpty() && labels.entrySet().containsAll(selector.entrySet());
    }

    static Map<String, String> podLabels(JsonNode workload) {
        return map(workload.path("spec").path("template").path("metadata").path("labels"));
    }

    static List<JsonNode> containers(JsonNode workload) {
        List<JsonNode> out = new ArrayList<>();
        podSpec(workload).path("containers").forEach(out::add);
        podSpec(workload).path("initContainers").forEach(out::add); // native sidecars (sidecar-example.yaml)
        return out;
    }

    @Test
    void everyObject_isWellFormed_inTheOncegateNamespace() {
        assertThat(objects).extracting(o -> o.path("kind").asText())
                .contains("Namespace", "Service", "StatefulSet", "PodDisruptionBudget", "Job", "Deployment", "Secret", "PodMonitor");
        for (JsonNode o : objects) {
            assertThat(o.path("apiVersion").asText()).as(o.toString()).isNotBlank();
            assertThat(o.path("metadata").path("name").asText()).as(o.toString()).matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
            if (!o.path("kind").asText().equals("Namespace")) {
                assertThat(o.path("metadata").path("namespace").asText()).as(o.path("metadata").path("name").asText()).isEqualTo(NAMESPACE);
            }
        }
        assertThat(named("Namespace", NAMESPACE)).isNotNull();
    }

    @Test
    void zooKeeper_isAThreeServerStatefulSet_spreadOverNodes_withAHeadlessServiceAndAPdb() {
        JsonNode sts = named("StatefulSet", "zookeeper");
        assertThat(sts.path("spec").path("replicas").asInt()).isEqualTo(3);
        Map<String, String> labels = podLabels(sts);
        assertThat(selects(map(sts.path("spec").path("selector").path("matchLabels")), labels)).isTrue();

        JsonNode headless = named("Service", sts.path("spec").path("serviceName").asText());
        assertThat(headless.path("spec").path("clusterIP").asText()).isEqualTo("None");
        assertThat(headless.path("spec").path("publishNotReadyAddresses").asBoolean()).isTrue();

        JsonNode pdb = named("PodDisruptionBudget", "zookeeper");
        assertThat(pdb.path("spec").path("maxUnavailable").asInt()).isEqualTo(1);
        assertThat(selects(map(pdb.path("spec").path("selector").path("matchLabels")), labels)).isTrue();

        JsonNode antiAffinity = podSpec(sts).path("affinity").path("podAntiAffinity").path("requiredDuringSchedulingIgnoredDuringExecution");
        assertThat(antiAffinity).isNotEmpty();
        assertThat(antiAffinity.get(0).path("topologyKey").asText()).isEqualTo("kubernetes.io/hostname");
        assertThat(selects(map(antiAffinity.get(0).path("labelSelector").path("matchLabels")), labels)).isTrue();

        // The peers named in ZOO_SERVERS are this StatefulSet's pods, on its container's ports.
        JsonNode container = containers(sts).get(0);
        Map<String, Integer> ports = ports(container);
        String servers = env(container).get("ZOO_SERVERS");
        Matcher m = Pattern.compile("server\\.(\\d+)=([^.]+)\\.([^.]+)\\.([^.]+)\\.svc\\.cluster\\.local:(\\d+):(\\d+);(\\d+)").matcher(servers);
        Set<String> peers = new TreeSet<>();
        while (m.find()) {
            int id = Integer.parseInt(m.group(1));
            assertThat(m.group(2)).isEqualTo("zookeeper-" + (id - 1));
            assertThat(m.group(3)).isEqualTo(headless.path("metadata").path("name").asText());
            assertThat(m.group(4)).isEqualTo(NAMESPACE);
            assertThat(Integer.parseInt(m.group(5))).isEqualTo(ports.get("quorum"));
            assertThat(Integer.parseInt(m.group(6))).isEqualTo(ports.get("election"));
            assertThat(Integer.parseInt(m.group(7))).isEqualTo(ports.get("client"));
            peers.add(m.group(2));
        }
        assertThat(peers).containsExactly("zookeeper-0", "zookeeper-1", "zookeeper-2");
        // and the settings of deploy/zookeeper/zoo*.cfg
        Map<String, String> env = env(container);
        assertThat(env).containsEntry("ZOO_4LW_COMMANDS_WHITELIST", "mntr,ruok,srvr").containsEntry("ZOO_ADMINSERVER_ENABLED", "false")
                .containsEntry("ZOO_AUTOPURGE_PURGEINTERVAL", "1").containsEntry("ZOO_TICK_TIME", "2000");
        assertThat(env.get("ZOO_CFG_EXTRA")).contains("PrometheusMetricsProvider").contains("metricsProvider.httpPort=" + ports.get("metrics"));
        // a readiness probe that starts no JVM (zkServer.sh status does, every period): a four-letter word
        assertThat(container.path("readinessProbe").path("exec").path("command").toString())
                .doesNotContain("zkServer.sh").doesNotContain("java").contains("srvr");
    }

    @Test
    void everyService_selectsPods_andTargetsPortsTheyHave() {
        for (JsonNode service : ofKind("Service")) {
            String name = service.path("metadata").path("name").asText();
            Map<String, String> selector = map(service.path("spec").path("selector"));
            List<JsonNode> selected = workloads().stream().filter(w -> selects(selector, podLabels(w))).toList();
            assertThat(selected).as("pods selected by Service " + name).isNotEmpty();
            for (JsonNode port : service.path("spec").path("ports")) {
                JsonNode target = port.path("targetPort");
                for (JsonNode workload : selected) {
                    Map<String, Integer> ports = new HashMap<>();
                    containers(workload).forEach(c -> ports.putAll(ports(c)));
                    if (target.isTextual()) {
                        assertThat(ports).as("Service " + name + " targets port " + target.asText()).containsKey(target.asText());
                    } else {
                        int number = target.isMissingNode() ? port.path("port").asInt() : target.asInt();
                        assertThat(ports.values()).as("Service " + name + " targets port " + number).contains(number);
                    }
                }
            }
        }
    }

    @Test
    void everySecretKeyAPodReads_exists_andTheConnectStringNamesAServicePort() {
        Set<String> referenced = new LinkedHashSet<>();
        for (JsonNode workload : workloads()) {
            for (JsonNode container : containers(workload)) {
                for (JsonNode env : container.path("env")) {
                    JsonNode ref = env.path("valueFrom").path("secretKeyRef");
                    if (!ref.isMissingNode()) {
                        JsonNode secret = named("Secret", ref.path("name").asText());
                        assertThat(secretKeys(secret)).as(env.path("name").asText() + " reads a key of " + ref.path("name").asText())
                                .contains(ref.path("key").asText());
                        referenced.add(ref.path("name").asText() + "/" + ref.path("key").asText());
                    }
                }
                assertThat(env(container)).as("ONCEGATE_CONNECT comes from the Secret, not a literal").doesNotContainKey("ONCEGATE_CONNECT");
            }
        }
        assertThat(referenced).contains("oncegate-credentials/connect", "oncegate-credentials/provider-token");
        String connect = named("Secret", "oncegate-credentials").path("stringData").path("connect").asText();
        for (String hostPort : connect.split(",")) {
            Matcher m = Pattern.compile("([a-z0-9-]+)\\.([a-z0-9-]+)(?:\\.svc(?:\\.cluster\\.local)?)?:(\\d+)").matcher(hostPort);
            assertThat(m.matches()).as(hostPort).isTrue();
            assertThat(m.group(2)).isEqualTo(NAMESPACE);
            JsonNode service = named("Service", m.group(1));
            List<Integer> ports = new ArrayList<>();
            service.path("spec").path("ports").forEach(p -> ports.add(p.path("port").asInt()));
            assertThat(ports).as(hostPort).contains(Integer.parseInt(m.group(3)));
        }
    }

    @Test
    void everyOncegateContainer_runsTheImageDeployImageBuilds_asNonRoot() {
        Map<String, String> image = ImageConfigTest.imageEnv();
        String expected = image.get("IMAGE_NAME") + ":" + image.get("IMAGE_TAG");
        Set<String> commands = new TreeSet<>();
        for (JsonNode workload : workloads()) {
            for (JsonNode container : containers(workload)) {
                if (container.path("name").asText().equals("oncegate")) {
                    assertThat(container.path("image").asText()).as(workload.path("metadata").path("name").asText()).isEqualTo(expected);
                    commands.add(container.path("args").isEmpty() ? "" : container.path("args").get(0).asText());
                } else if (!container.path("name").asText().equals("agent")) { // the sidecar example's agent: the user's image
                    assertThat(container.path("image").asText()).isEqualTo("zookeeper:" + ImageConfigTest.zooKeeperVersion());
                }
                assertThat(container.path("securityContext").path("allowPrivilegeEscalation").asBoolean(true)).isFalse();
            }
            assertThat(podSpec(workload).path("securityContext").path("runAsNonRoot").asBoolean()).isTrue();
        }
        assertThat(commands).contains("init", "exporter", "sidecar");
        JsonNode job = named("Job", "oncegate-init");
        assertThat(containers(job).get(0).path("args").get(0).asText()).isEqualTo("init");
        JsonNode worker = named("Deployment", "oncegate-worker-example");
        assertThat(containers(worker).get(0).path("command").get(0).asText()).isEqualTo("/usr/bin/tini");
    }

    @Test
    void everyOncegateContainer_keepsItsStateOnAWritableVolume_andInitAndWorkerReadTheirIdentityFromTheSecret() {
        Set<String> withIdentity = new TreeSet<>();
        for (JsonNode workload : workloads()) {
            String name = workload.path("metadata").path("name").asText();
            for (JsonNode container : containers(workload)) {
                if (!container.path("name").asText().equals("oncegate")) {
                    continue;
                }
                List<String> args = new ArrayList<>();
                container.path("args").forEach(a -> args.add(a.asText()));
                Map<String, String> env = env(container);
                String stateDir = args.contains("--state-dir") ? args.get(args.indexOf("--state-dir") + 1) : env.get("ONCEGATE_STATE_DIR");
                assertThat(stateDir).as(name + ": --state-dir or ONCEGATE_STATE_DIR (else every command warns, and the"
                        + " rollback witness is off)").isNotNull();
                JsonNode stateMount = mountUnder(container, stateDir);
                assertThat(stateMount != null).as(name + ": the state directory " + stateDir + " is on a volume").isTrue();
                assertThat(stateMount.path("readOnly").asBoolean(false)).as(name + ": its state volume is writable").isFalse();
                String authFile = env.get("ONCEGATE_AUTH_FILE");
                if (authFile == null) {
                    continue;
                }
                JsonNode mount = mountUnder(container, authFile);
                assertThat(mount != null).as(name + ": ONCEGATE_AUTH_FILE " + authFile + " is on a volume").isTrue();
                JsonNode volume = volume(workload, mount.path("name").asText());
                JsonNode secret = named("Secret", volume.path("secret").path("secretName").asText());
                String file = authFile.substring(mount.path("mountPath").asText().length() + 1);
                boolean fromSecret = false;
                for (JsonNode item : volume.path("secret").path("items")) {
                    if (item.path("path").asText().equals(file)) {
                        assertThat(secretKeys(secret)).contains(item.path("key").asText());
                        fromSecret = true;
                    }
                }
                assertThat(fromSecret).as(name + ": " + authFile + " is a key of the Secret").isTrue();
                withIdentity.add(name);
            }
        }
        assertThat(withIdentity).contains("oncegate-init", "oncegate-worker-example");
    }

    /** The container's volume mount that holds {@code path}, or null. */
    static JsonNode mountUnder(JsonNode container, String path) {
        for (JsonNode mount : container.path("volumeMounts")) {
            String at = mount.path("mountPath").asText();
            if (path.equals(at) || path.startsWith(at.endsWith("/") ? at : at + "/")) {
                return mount;
            }
        }
        return null;
    }

    static JsonNode volume(JsonNode workload, String name) {
        for (JsonNode volume : podSpec(workload).path("volumes")) {
            if (volume.path("name").asText().equals(name)) {
                return volume;
            }
        }
        throw new AssertionError("no volume " + name + " in " + workload.path("metadata").path("name").asText());
    }

    @Test
    void exporter_listensOnItsMetricsPort_andThePodMonitorScrapesMetricsPorts() {
        JsonNode exporter = named("Deployment", "oncegate-exporter");
        JsonNode container = containers(exporter).get(0);
        List<String> args = new ArrayList<>();
        container.path("args").forEach(a -> args.add(a.asText()));
        String listen = args.get(args.indexOf("--listen") + 1);
        assertThat(Integer.parseInt(listen.substring(listen.lastIndexOf(':') + 1))).isEqualTo(ports(container).get("metrics"));
        assertThat(podLabels(exporter)).containsEntry("app.kubernetes.io/component", "exporter");

        JsonNode monitor = named("PodMonitor", "oncegate");
        Map<String, String> selector = map(monitor.path("spec").path("selector").path("matchLabels"));
        String port = monitor.path("spec").path("podMetricsEndpoints").get(0).path("port").asText();
        List<String> scraped = new ArrayList<>();
        for (JsonNode workload : workloads()) {
            boolean hasPort = containers(workload).stream().anyMatch(c -> ports(c).containsKey(port));
            if (selects(selector, podLabels(workload)) && hasPort) {
                scraped.add(workload.path("metadata").path("name").asText());
            }
        }
        assertThat(scraped).contains("oncegate-exporter", "zookeeper");
        // the job label the alert rules expect: oncegate-<component>
        assertThat(monitor.toString()).contains("oncegate-${1}");
        assertThat(RepoFiles.read("deploy/prometheus/oncegate-alerts.yml")).contains("job=\"oncegate-exporter\"");
    }

    static Map<String, Integer> ports(JsonNode container) {
        Map<String, Integer> out = new HashMap<>();
        container.path("ports").forEach(p -> out.put(p.path("name").asText(), p.path("containerPort").asInt()));
        return out;
    }

    static Map<String, String> env(JsonNode container) {
        Map<String, String> out = new HashMap<>();
        container.path("env").forEach(e -> {
            if (e.has("value")) {
                out.put(e.path("name").asText(), e.path("value").asText());
            }
        });
        return out;
    }

    static Set<String> secretKeys(JsonNode secret) {
        Set<String> keys = new TreeSet<>();
        secret.path("stringData").fieldNames().forEachRemaining(keys::add);
        secret.path("data").fieldNames().forEachRemaining(keys::add);
        return keys;
    }
}
