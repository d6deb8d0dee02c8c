package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oncegate.testing.Timing;
import dev.oncegate.testing.TlsMaterial;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code oncegate sidecar --tls-keystore}: the sidecar serves HTTPS with the key store's key (the
 * only way it listens beyond loopback), a client that trusts its CA gets its answers over
 * TLS, and every /v1/ call still needs the bearer token. A key store it cannot open is bad input
 * (exit 2) before anything is served. (It listens on 127.0.0.1 here: tests bind loopback only; the
 * refusal of a non-loopback address without TLS is {@link SidecarCommandIT}'s.)
 */
class SidecarOverTlsIT extends CliFixture {

    /** A throw-away CA, and a server key store for 127.0.0.1 it signed (the kit's, made by keytool). */
    private TlsMaterial tls;

    @AfterEach
    void removeKeys() {
        if (tls != null) {
            tls.close();
        }
    }

    /** The server key store, with its password in a file. */
    private Path keystore() throws Exception {
        tls = TlsMaterial.generate();
        Files.writeString(dir.resolve("tls.password"), tls.password() + "\n");
        return tls.serverKeyStore();
    }

    /** An HTTP client that trusts the test CA only. */
    private HttpClient trustingTheCa() throws Exception {
        KeyStore trusted = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(tls.trustStore())) {
            trusted.load(in, tls.password().toCharArray());
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trusted);
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(null, tmf.getTrustManagers(), null);
        return HttpClient.newBuilder().sslContext(tls).connectTimeout(Timing.PROCESS).build();
    }

    @Test
    void keystoreGiven_servesHttps_andStillRequiresTheToken() throws Exception {
        // Given: a sidecar with a key store
        Path store = keystore();
        Path token = dir.resolve("sidecar.token");
        Cli.Running sidecar = cli.start("sidecar", "--connect", zk.connectString(), "--listen", "127.0.0.1:0",
                "--token-file", token.toString(), "--tls-keystore", store.toString(),
                "--tls-password-file", dir.resolve("tls.password").toString());
        await().atMost(Timing.APPEAR).until(() -> sidecar.stdout().contains("\"started\""));
        String url = Cli.JSON.readTree(sidecar.stdout().strip()).get("url").asText();
        HttpClient https = trustingTheCa();
        String enter = "{\"destination\":\"" + dest + "\",\"sha256\":\"" + HexFormat.of().formatHex(new byte[32]) + "\"}";

        // When: a client that trusts its certificate asks over TLS, without the token and with it
        HttpResponse<String> health = https.send(HttpRequest.newBuilder(URI.create(url + "/healthz")).build(),
                HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> anonymous = https.send(HttpRequest.newBuilder(URI.create(url + "/v1/enter"))
                .POST(HttpRequest.BodyPublishers.ofString(enter)).build(), HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> entered = https.send(HttpRequest.newBuilder(URI.create(url + "/v1/enter"))
                .header("Authorization", "Bearer " + Files.readString(token).strip())
                .POST(HttpRequest.BodyPublishers.ofString(enter)).build(), HttpResponse.BodyHandlers.ofString());

        // Then: the URL is https, health answers, the call without the token is refused and changed nothing,
        // the call with it proceeds
        assertThat(url).startsWith("https://127.0.0.1:");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(anonymous.statusCode()).isEqualTo(401);
        assertThat(Cli.JSON.readTree(anonymous.body()).get("field").asText()).isEqualTo("Authorization");
        assertThat(entered.statusCode()).as(entered.body()).isEqualTo(200);
        JsonNode decision = Cli.JSON.readTree(entered.body());
        assertThat(decision.get("decision").asText()).isEqualTo("proceed");
        sidecar.process().destroy();
        assertThat(sidecar.process().waitFor(Timing.PROCESS.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(sidecar.process().exitValue()).isZero();
    }

    @Test
    void wrongKeystorePassword_exit2NamingTheKeystore_andNothingServed() throws Exception {
        // Given: a key store and a password file that does not open it
        Path store = keystore();
        Files.writeString(dir.resolve("wrong.password"), "not-" + tls.password() + "\n");
        Path token = dir.resolve("sidecar.token");

        // When: the sidecar is started with them
        Cli.Result refused = cli.start("sidecar", "--connect", zk.connectString(), "--listen", "127.0.0.1:0",
                "--token-file", token.toString(), "--tls-keystore", store.toString(),
                "--tls-password-file", dir.resolve("wrong.password").toString()).await(Timing.PROCESS);

        // Then: exit 2 naming --tls-keystore; no token was written, nothing started
        assertThat(refused.exit()).isEqualTo(2);
        assertThat(refused.stderr()).contains("--tls-keystore", store.toString());
        assertThat(refused.stdout()).doesNotContain("started");
        assertThat(token).doesNotExist();
    }
}
