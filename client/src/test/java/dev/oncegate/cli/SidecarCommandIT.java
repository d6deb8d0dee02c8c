package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oncegate.testing.Timing;
import org.junit.jupiter.api.Test;

/**
 * {@code oncegate sidecar} as a process: it writes its token with mode 0600, serves /healthz
 * without it and /v1/ only with it, stops with exit 0 on SIGTERM, and refuses to listen beyond
 * loopback without TLS. A second sidecar that cannot listen leaves the first one's token alone,
 * and connections that never finish their request do not hold the request threads.
 */
class SidecarCommandIT extends CliFixture {

    @Test
    void started_writesAToken0600_servesHealth_andStopsOnSigterm() throws Exception {
        // Given: a sidecar on a free loopback port
        Path token = dir.resolve("run").resolve("sidecar.token");
        Files.createDirectories(token.getParent());
        Cli.Running sidecar = cli.start("sidecar", "--connect", zk.connectString(), "--listen", "127.0.0.1:0",
                "--token-file", token.toString());
        await().atMost(Timing.APPEAR).until(() -> sidecar.stdout().contains("\"started\""));
        JsonNode started = Cli.JSON.readTree(sidecar.stdout().strip());
        String url = started.get("url").asText();
        HttpClient http = HttpClient.newHttpClient();

        // When: it is asked for its health, and for an enter without the token
        HttpResponse<String> health = http.send(HttpRequest.newBuilder(URI.create(url + "/healthz")).build(),
                HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> anonymous = http.send(HttpRequest.newBuilder(URI.create(url + "/v1/enter"))
                .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());

        // Then: the token file is the owner's alone, health is ok, the enter is refused; SIGTERM ends it with 0
        assertThat(started.get("token_file").asText()).isEqualTo(token.toString());
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(token))).isEqualTo("rw-------");
        assertThat(Files.readString(token).strip()).hasSizeGreaterThanOrEqualTo(43);
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(Cli.JSON.readTree(health.body()).get("zookeeper").asText()).isEqualTo("connected");
        assertThat(anonymous.statusCode()).isEqualTo(401);
        sidecar.process().destroy();
        assertThat(sidecar.process().waitFor(Timing.PROCESS.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(sidecar.process().exitValue()).isZero();
    }

    @Test
    void listenBeyondLoopbackWithoutTls_exit2_andNoTokenWritten() throws Exception {
        // When: it is asked to listen on every interface without TLS
        Path token = dir.resolve("sidecar.token");
        Cli.Result refused = cli.run("sidecar", "--connect", zk.connectString(), "--listen", "0.0.0.0:0",
                "--token-file", token.toString());

        // Then: exit 2 naming --listen and TLS, and no token file
        assertThat(refused.exit()).isEqualTo(2);
        assertThat(refused.stderr()).contains("--listen", "--tls-keystore");
        assertThat(token).doesNotExist();
    }

    @Test
    void secondSidecarOnTheSamePortAndTokenFile_exit2_andTheFirstKeepsItsToken() throws Exception {
        // Given: sidecar A listening, with its token file
        Path token = dir.resolve("sidecar.token");
        Cli.Running a = startSidecar(token);
        String url = Cli.JSON.readTree(a.stdout().strip()).get("url").asText();
        String written = Files.readString(token);

        // When: a second sidecar is started on A's port with the same token file
        Cli.Result b = cli.run("sidecar", "--connect", zk.connectString(), "--listen",
                "127.0.0.1:" + URI.create(url).getPort(), "--token-file", token.toString());

        // Then: it exits 2 naming --listen, the file still holds A's token, and A accepts it
        assertThat(b.exit()).as(b.toString()).isEqualTo(2);
        assertThat(b.stderr()).contains("--listen");
        assertThat(Files.readString(token)).isEqualTo(written);
        assertThat(inspectWithTheTokenIn(token, url)).isEqualTo(200);
        assertThat(a.process().isAlive()).isTrue();
    }

    @Test
    void secondSidecarOnAnotherPortWithTheSameTokenFile_exit2_theFirstKeepsItsToken_untilItDies() throws Exception {
        // Given: sidecar A listening, with its token file (the default one of a state directory, say, shared by
        // two sidecars of two namespaces)
        Path token = dir.resolve("sidecar.token");
        Cli.Running a = startSidecar(token);
        String url = Cli.JSON.readTree(a.stdout().strip()).get("url").asText();
        String written = Files.readString(token);

        // When: a second sidecar is started on another port with the same token file
        Cli.Result b = cli.run("sidecar", "--connect", zk.connectString(), "--listen", "127.0.0.1:0",
                "--token-file", token.toString());

        // Then: it exits 2 naming --token-file and A's pid, the file still holds A's token, and A accepts it
        assertThat(b.exit()).as(b.toString()).isEqualTo(2);
        assertThat(b.stderr()).contains("--token-file", token.toString(), Long.toString(a.process().pid()));
        assertThat(b.stdout()).doesNotContain("\"started\"");
        assertThat(Files.readString(token)).isEqualTo(written);
        assertThat(inspectWithTheTokenIn(token, url)).isEqualTo(200);

        // And when A is killed (no shutdown hook runs), a sidecar with that token file starts and writes its own
        a.process().destroyForcibly();
        assertThat(a.process().waitFor(Timing.PROCESS.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        startSidecar(token);
        assertThat(Files.readString(token)).isNotEqualTo(written);
    }

    /** A sidecar on a free loopback port with {@code token} as its token file, once it says it started. */
    private Cli.Running startSidecar(Path token) {
        Cli.Running sidecar = cli.start("sidecar", "--connect", zk.connectString(), "--listen", "127.0.0.1:0",
                "--token-file", token.toString());
        await().atMost(Timing.APPEAR).until(() -> sidecar.stdout().contains("\"started\""));
        return sidecar;
    }

    /** The status of an inspect of this test's key at {@code url}, with the token {@code token} holds now. */
    private int inspectWithTheTokenIn(Path token, String url) throws IOException, InterruptedException {
        HttpResponse<String> inspect = HttpClient.newHttpClient().send(HttpRequest
                .newBuilder(URI.create(url + "/v1/inspect"))
                .header("Authorization", "Bearer " + Files.readString(token).strip())
                .POST(HttpRequest.BodyPublishers.ofString("{\"key\":\"" + key.key() + "\"}")).build(),
                HttpResponse.BodyHandlers.ofString());
        return inspect.statusCode();
    }

    @Test
    void connectionsThatSendOneByteAndStop_areClosed_andFreeTheRequestThreads() throws Exception {
        // Given: a sidecar with two request threads, and two local connections that each send one byte of a
        // request line and nothing more, until a /healthz call no longer gets an answer (both threads held)
        Cli.Running sidecar = cli.start("sidecar", "--connect", zk.connectString(), "--listen", "127.0.0.1:0",
                "--token-file", dir.resolve("sidecar.token").toString(), "--threads", "2");
        await().atMost(Timing.APPEAR).until(() -> sidecar.stdout().contains("\"started\""));
        URI url = URI.create(Cli.JSON.readTree(sidecar.stdout().strip()).get("url").asText());
        HttpClient http = HttpClient.newHttpClient();
        List<Socket> silent = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                Socket socket = new Socket();
                silent.add(socket);
                socket.connect(new InetSocketAddress("127.0.0.1", url.getPort()));
                OutputStream out = socket.getOutputStream();
                out.write('P');
                out.flush();
            }
            await().atMost(Timing.EVENTUALLY).until(() -> health(http, url, Duration.ofSeconds(1)) == -1);

            // When: /healthz is asked again, with patience well beyond the sidecar's 10 s request-read bound
            // Then: it answers 200 in time, and the two silent connections were closed by the sidecar
            await().atMost(Timing.scaled(Duration.ofSeconds(60)))
                    .until(() -> health(http, url, Duration.ofSeconds(5)) == 200);
            for (Socket socket : silent) {
                socket.setSoTimeout((int) Timing.EVENTUALLY.toMillis());
                assertThat(closedByPeer(socket.getInputStream())).isTrue();
            }
        } finally {
            for (Socket socket : silent) {
                socket.close();
            }
        }
    }

    /** GET /healthz's status, or -1 when no answer came within {@code patience}. */
    private static int health(HttpClient http, URI url, Duration patience) throws IOException, InterruptedException {
        try {
            return http.send(HttpRequest.newBuilder(url.resolve("/healthz")).timeout(patience).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode();
        } catch (java.net.http.HttpTimeoutException e) {
            return -1;
        }
    }

    /** Whether the server closed the connection: end of stream (or a reset), before any answer byte. */
    private static boolean closedByPeer(InputStream in) throws IOException {
        try {
            return in.read() == -1;
        } catch (java.net.SocketException e) {
            return true; // reset: closed with the byte unread
        }
    }
}
