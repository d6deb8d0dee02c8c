package dev.oncegate.cli;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.ZxidMarks;
import dev.oncegate.testing.EmbeddedZooKeeper;
import dev.oncegate.testing.Timing;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * Base of the in-process sidecar tests: one real ZooKeeper per class with {@code /oncegate}
 * initialised, a {@link Sidecar} per test on a free loopback port over its own session, and an
 * HTTP client that remembers every answer (the contract test checks them against the OpenAPI file).
 */
abstract class SidecarFixture {

    static final String NAMESPACE = "/oncegate";
    static final ObjectMapper JSON = new ObjectMapper();

    /** One answer of the sidecar, as the agent saw it. */
    record Answer(String path, int status, JsonNode body, String text) {
    }

    static EmbeddedZooKeeper zk;
    static CuratorFramework curator;

    ZooKeeperConnection connection;
    Sidecar sidecar;
    String bearer = "test-token-" + UUID.randomUUID();
    final HttpClient http = HttpClient.newHttpClient();
    final List<Answer> answers = new CopyOnWriteArrayList<>();
    String dest;
    String sha256;
    EffectKey key;

    @BeforeAll
    static void startZooKeeper() {
        zk = EmbeddedZooKeeper.start();
        zk.initNamespace(NAMESPACE);
        curator = zk.newClient();
    }

    @AfterAll
    static void stopZooKeeper() {
        if (curator != null) {
            curator.close();
        }
        if (zk != null) {
            zk.close();
        }
    }

    /** The settings of this class's sidecars. */
    Sidecar.Settings settings() {
        // The library's lease TTL (30 s): a shorter one lapses under load between a test's enter and its cross,
        // and a sibling takes the lease over.
        return new Sidecar.Settings("sidecar-test", null, Duration.ofSeconds(60), Duration.ofMinutes(5), 4, 16);
    }

    @BeforeEach
    void startSidecar() throws IOException {
        connection = ZooKeeperConnection.open(ZooKeeperConnection.Settings.plain(zk.connectString(), Timing.WAIT),
                NAMESPACE, ZxidMarks.inMemory(), Timing.SESSION);
        sidecar = new Sidecar(connection, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), settings(), bearer);
        sidecar.start(new InetSocketAddress("127.0.0.1", 0), null);
        dest = "mail:ops-" + UUID.randomUUID() + "@example.com";
        byte[] content = ("report " + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8);
        key = EffectKey.of(Destination.parse(dev.oncegate.IdentityKind.STABLE, dest), content);
        sha256 = key.sha256();
    }

    @AfterEach
    void stopSidecar() {
        if (sidecar != null) {
            sidecar.close();
        }
        if (connection != null) {
            connection.close();
        }
    }

    /** POST {@code body} to {@code path} with the bearer token. */
    Answer post(String path, Map<String, ?> body) {
        return post(path, body, bearer);
    }

    Answer post(String path, Map<String, ?> body, String token) {
        try {
            return postRaw(path, JSON.writeValueAsString(body), token);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    Answer postRaw(String path, String body, String token) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(sidecar.url() + path))
                .timeout(Timing.PROCESS).POST(HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return send(path, request.build());
    }

    Answer get(String path) {
        return send(path, HttpRequest.newBuilder(URI.create(sidecar.url() + path)).timeout(Timing.PROCESS).GET().build());
    }

    private Answer send(String path, HttpRequest request) {
        try {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            JsonNode body = path.equals("/metrics") ? null : JSON.readTree(response.body());
            Answer answer = new Answer(path, response.statusCode(), body, response.body());
            answers.add(answer);
            return answer;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Enters this test's effect, as task {@code task}. */
    Answer enter(String task) {
        return post("/v1/enter", Map.of("destination", dest, "sha256", sha256, "task", task));
    }

    static Map<String, Object> handle(Answer entered) {
        return Map.of("handle", entered.body().get("handle").asText(), "token", entered.body().get("token").asInt());
    }

    static Map<String, Object> with(Map<String, Object> base, Object... more) {
        Map<String, Object> out = new java.util.LinkedHashMap<>(base);
        for (int i = 0; i < more.length; i += 2) {
            out.put((String) more[i], more[i + 1]);
        }
        return out;
    }

    /** The data of a znode below this test's key, or null when it does not exist. */
    String znode(String relative) throws Exception {
        try {
            return new String(curator.getData().forPath(key.path(NAMESPACE) + relative), StandardCharsets.UTF_8);
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
    }

    /** The outcome record of scope 0, or null until it is written (its znode is created empty with the armed record). */
    String outcome() throws Exception {
        String written = znode("/0/armed/outcome");
        return written == null || written.isEmpty() ? null : written;
    }

    boolean keyExists() throws Exception {
        return curator.checkExists().forPath(key.path(NAMESPACE)) != null;
    }

    /** What {@code inspect} says the key's state is. */
    String state() {
        return post("/v1/inspect", Map.of("key", key.key())).body().get("state").asText();
    }
}
