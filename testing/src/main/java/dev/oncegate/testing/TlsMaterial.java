package dev.oncegate.testing;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import org.apache.zookeeper.client.ZKClientConfig;

/**
 * Throw-away TLS material for tests, made at test time by the JDK's own {@code keytool}: a
 * certificate authority, a server key store, a client key store and a trust store holding only
 * that CA, all PKCS12, in a private temporary directory that {@link #close()} removes. Nothing
 * is downloaded and nothing outlives the test.
 *
 * <p>How it is made ({@code keytool} run as a process, passwords passed through its environment
 * with {@code -storepass:env}, never on a command line):
 * <ol>
 *   <li>{@code -genkeypair} the CA (EC P-256, {@code BasicConstraints CA:true}, valid two days) and
 *       {@code -exportcert} its certificate;</li>
 *   <li>{@code -importcert} that certificate into the trust store;</li>
 *   <li>for the server ({@code CN=localhost}, SAN {@code IP:127.0.0.1, DNS:localhost}, EKU serverAuth) and
 *       the client ({@link #CLIENT_SUBJECT}, EKU clientAuth): {@code -genkeypair}, {@code -certreq},
 *       {@code -gencert} by the CA, and {@code -importcert} of the signed chain (leaf, CA) back
 *       into the key store.</li>
 * </ol>
 * Eleven short {@code keytool} runs (the two leaves side by side): a few seconds on a loaded
 * 2-core machine, so make it once per test class. One password protects every store (it is random per instance).
 *
 * <p>The client's certificate subject is its identity under ZooKeeper's
 * {@code X509AuthenticationProvider}: an ACL {@code x509:CN=oncegate-test-client,O=oncegate-test}
 * grants this client.
 *
 * <p>Immutable once made, so thread-safe; {@link #close()} is idempotent.
 */
public final class TlsMaterial implements AutoCloseable {

    /** The client certificate's subject, as ZooKeeper's x509 provider names the client (RFC 2253). */
    public static final String CLIENT_SUBJECT = "CN=oncegate-test-client,O=oncegate-test";

    private static final String SERVER_SUBJECT = "CN=localhost,O=oncegate-test";
    private static final String CA_SUBJECT = "CN=oncegate test CA,O=oncegate-test";
    private static final String PASSWORD_ENV = "ONCEGATE_TLS_STOREPASS";
    private static final String VALIDITY_DAYS = "2";
    private static final long KEYTOOL_TIMEOUT_SECONDS = 120;

    private final Path dir;
    private final String password;

    private TlsMaterial(Path dir, String password) {
        this.dir = dir;
        this.password = password;
    }

    /**
     * Makes a new CA and its server and client key stores and trust store in a new private
     * temporary directory.
     *
     * @throws IllegalStateException when {@code keytool} is missing (a JRE without the JDK tools) or fails;
     *                               the directory is removed again
     */
    public static TlsMaterial generate() {
        Path dir = Scratch.create("oncegate-tls-");
        byte[] secret = new byte[16];
        new SecureRandom().nextBytes(secret);
        TlsMaterial material = new TlsMaterial(dir, HexFormat.of().formatHex(secret));
        try {
            material.make();
            return material;
        } catch (RuntimeException | Error e) {
            material.close();
            throw e;
        }
    }

    private void make() {
        keytool("-genkeypair", "-alias", "ca", "-dname", CA_SUBJECT, "-keyalg", "EC", "-groupname", "secp256r1",
                "-validity", VALIDITY_DAYS, "-ext", "bc:c", "-storetype", "PKCS12", "-keystore", file("ca.p12"),
                "-storepass:env", PASSWORD_ENV);
        keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", file("ca.p12"), "-storepass:env", PASSWORD_ENV,
                "-file", file("ca.pem"));
        keytool("-importcert", "-noprompt", "-alias", "ca", "-file", file("ca.pem"), "-storetype", "PKCS12",
                "-keystore", trustStore().toString(), "-storepass:env", PASSWORD_ENV);
        // The two leaves only share the CA (read-only): make them side by side.
        CompletableFuture<Void> client = CompletableFuture.runAsync(
                () -> signedKeyStore("client", CLIENT_SUBJECT, "san=dns:localhost", "eku=clientAuth"),
                task -> new Thread(task, "oncegate-tls-keytool").start());
        signedKeyStore("server", SERVER_SUBJECT, "san=ip:127.0.0.1,dns:localhost", "eku=serverAuth");
        try {
            client.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException cause ? cause : e;
        }
    }

    /** {@code NAME.p12}: a key pair whose certificate the CA signed, with the chain (leaf, CA). */
    private void signedKeyStore(String name, String subject, String san, String eku) {
        String store = file(name + ".p12");
        keytool("-genkeypair", "-alias", name, "-dname", subject, "-keyalg", "EC", "-groupname", "secp256r1",
                "-validity", VALIDITY_DAYS, "-storetype", "PKCS12", "-keystore", store, "-storepass:env", PASSWORD_ENV);
        keytool("-certreq", "-alias", name, "-keystore", store, "-storepass:env", PASSWORD_ENV,
                "-file", file(name + ".csr"));
        keytool("-gencert", "-rfc", "-alias", "ca", "-keystore", file("ca.p12"), "-storepass:env", PASSWORD_ENV,
                "-infile", file(name + ".csr"), "-outfile", file(name + ".pem"), "-validity", VALIDITY_DAYS,
                "-ext", san, "-ext", eku);
        Path chain = dir.resolve(name + "-chain.pem");
        try {
            Files.writeString(chain, Files.readString(dir.resolve(name + ".pem"), StandardCharsets.US_ASCII)
                    + Files.readString(dir.resolve("ca.pem"), StandardCharsets.US_ASCII), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException("could not write " + chain + ": " + e.getMessage(), e);
        }
        keytool("-importcert", "-noprompt", "-alias", name, "-file", chain.toString(), "-keystore", store,
                "-storepass:env", PASSWORD_ENV);
    }

    private String file(String name) {
        return dir.resolve(name).toString();
    }

    private void keytool(String... args) {
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        if (!Files.isExecutable(keytool)) {
            throw new IllegalStateException("keytool not found at " + keytool + ": TlsMaterial needs a JDK, not a bare JRE");
        }
        List<String> command = new ArrayList<>();
        command.add(keytool.toString());
        // A short-lived JVM: no point in optimising its code or sizing a parallel collector.
        command.add("-J-XX:TieredStopAtLevel=1");
        command.add("-J-XX:+UseSerialGC");
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile())); // any prompt fails
        builder.environment().put(PASSWORD_ENV, password);
        try {
            Process process = builder.start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(KEYTOOL_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("keytool " + args[0] + " did not finish within "
                        + KEYTOOL_TIMEOUT_SECONDS + " s");
            }
            if (process.exitValue() != 0) {
                throw new IllegalStateException("keytool " + String.join(" ", args) + " exited with "
                        + process.exitValue() + ": " + output.strip());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not run " + keytool + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running keytool " + args[0], e);
        }
    }

    /** The directory that holds every file below; removed by {@link #close()}. */
    public Path directory() {
        return dir;
    }

    /** The CA's certificate, PEM. */
    public Path caCertificate() {
        return dir.resolve("ca.pem");
    }

    /** PKCS12: the server's key and its chain (leaf for {@code localhost} and {@code 127.0.0.1}, CA). */
    public Path serverKeyStore() {
        return dir.resolve("server.p12");
    }

    /** PKCS12: the client's key and its chain (leaf {@link #CLIENT_SUBJECT}, CA). */
    public Path clientKeyStore() {
        return dir.resolve("client.p12");
    }

    /** PKCS12: the CA's certificate only, for the server and the client alike. */
    public Path trustStore() {
        return dir.resolve("truststore.p12");
    }

    /** The password of every store (random, per instance). */
    public String password() {
        return password;
    }

    /**
     * What a ZooKeeper client needs to talk to a TLS client port with this material: the
     * properties of a {@code ZKClientConfig} file ({@code zookeeper.client.secure},
     * {@code zookeeper.clientCnxnSocket} = Netty, the client key store and the trust store).
     * A new, mutable copy on each call.
     */
    public Properties clientProperties() {
        Properties p = new Properties();
        p.setProperty(ZKClientConfig.SECURE_CLIENT, "true");
        p.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, "org.apache.zookeeper.ClientCnxnSocketNetty");
        p.setProperty("zookeeper.ssl.keyStore.location", clientKeyStore().toString());
        p.setProperty("zookeeper.ssl.keyStore.password", password);
        p.setProperty("zookeeper.ssl.keyStore.type", "PKCS12");
        p.setProperty("zookeeper.ssl.trustStore.location", trustStore().toString());
        p.setProperty("zookeeper.ssl.trustStore.password", password);
        p.setProperty("zookeeper.ssl.trustStore.type", "PKCS12");
        return p;
    }

    /** A new {@link ZKClientConfig} holding {@link #clientProperties()}: hand it to Curator's builder. */
    public ZKClientConfig clientConfig() {
        ZKClientConfig config = new ZKClientConfig();
        clientProperties().forEach((k, v) -> config.setProperty((String) k, (String) v));
        return config;
    }

    /**
     * Writes {@link #clientProperties()} to {@code file} (what {@code oncegate --zk-client-config}
     * and ZooKeeper's own tools read) and returns it. The file holds the password: keep it in a
     * directory the test removes.
     */
    public Path writeClientConfig(Path file) {
        Objects.requireNonNull(file, "file");
        try (OutputStream out = Files.newOutputStream(file)) {
            clientProperties().store(out, "ZooKeeper client TLS configuration (oncegate TlsMaterial, throw-away)");
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException("could not write " + file + ": " + e.getMessage(), e);
        }
    }

    /** Removes the directory and every key in it. */
    @Override
    public void close() {
        Scratch.delete(dir);
    }
}
