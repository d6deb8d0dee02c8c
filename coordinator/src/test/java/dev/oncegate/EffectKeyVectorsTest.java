package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every vector of {@code key-vectors.json} (this module's test resources) reproduces byte for
 * byte, whichever way the content arrives. Where the project's specification keeps its own copy
 * beside the repository, the two are compared; without it that comparison reports "skipped".
 */
class EffectKeyVectorsTest {

    /** Where the shared vectors are looked for when this system property does not say. */
    private static final String SHARED_PROPERTY = "oncegate.sharedKeyVectors";

    @SuppressWarnings("unchecked")
    static Stream<Map<String, Object>> vectors() throws IOException {
        Map<String, Object> root = Json.decodeObject(resourceCopy());
        return ((List<Map<String, Object>>) root.get("vectors")).stream();
    }

    private static byte[] resourceCopy() throws IOException {
        try (InputStream in = EffectKeyVectorsTest.class.getResourceAsStream("/key-vectors.json")) {
            assertThat(in).as("the test resources' copy of key-vectors.json").isNotNull();
            return in.readAllBytes();
        }
    }

    static byte[] content(Map<String, Object> v) {
        if (v.get("content_hex") != null) {
            return HexFormat.of().parseHex((String) v.get("content_hex"));
        }
        assertThat((String) v.get("content_desc")).isEqualTo("the byte 0x61 ('a') repeated 100000 times");
        byte[] bytes = new byte[100_000];
        Arrays.fill(bytes, (byte) 'a');
        return bytes;
    }

    static Destination destination(Map<String, Object> v) {
        return new Destination((String) v.get("provider"), IdentityKind.fromWireName((String) v.get("identity")),
                (String) v.get("destination"));
    }

    @ParameterizedTest
    @MethodSource("vectors")
    void vector_reproducesCanonicalTextAndKeyFromBytes(Map<String, Object> v) {
        EffectKey key = EffectKey.of(destination(v), content(v));

        assertThat(key.sha256()).isEqualTo(v.get("content_sha256"));
        assertThat(key.canonicalText()).isEqualTo(v.get("canonical"));
        assertThat(key.key()).isEqualTo(v.get("key"));
    }

    @ParameterizedTest
    @MethodSource("vectors")
    void vector_reproducesKeyFromStreamAndFile(Map<String, Object> v, @TempDir Path dir) throws IOException {
        byte[] bytes = content(v);
        Path file = Files.write(dir.resolve("any-name.bin"), bytes);

        assertThat(EffectKey.of(destination(v), new ByteArrayInputStream(bytes)).key()).isEqualTo(v.get("key"));
        assertThat(EffectKey.of(destination(v), file).key()).isEqualTo(v.get("key"));
    }

    @Test
    void vectors_matchTheSharedCopyWhenItIsBesideTheRepository() throws IOException {
        // Surefire runs in the module directory: ../.. is the directory that holds the repository.
        Path shared = Path.of(System.getProperty(SHARED_PROPERTY, "../../shared/key-vectors.json"));
        assumeTrue(Files.isRegularFile(shared), () -> "no shared vectors at " + shared.toAbsolutePath().normalize()
                + " (set -D" + SHARED_PROPERTY + "=PATH to compare with them); the resource copy was not compared");

        assertThat(Json.decodeObject(resourceCopy())).isEqualTo(Json.decodeObject(Files.readAllBytes(shared)));
    }

    /** A stream that would go on for ever: only the interrupt ends the read, and the flag stays set for the caller. */
    @Test
    void streamedContent_readOnAnInterruptedThread_stopsWithAnInterruptedIOException_andKeepsTheFlag() {
        InputStream endless = new InputStream() {
            @Override
            public int read() {
                return 0;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                return len;
            }
        };
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> EffectKey.of(Destination.stable("slack", "C024BE91L"), endless))
                    .isInstanceOf(java.io.UncheckedIOException.class)
                    .hasCauseInstanceOf(java.io.InterruptedIOException.class);
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void key_doesNotDependOnFileNameOrLocation(@TempDir Path dir) throws IOException {
        Destination d = Destination.stable("slack", "C024BE91L");
        Path a = Files.writeString(dir.resolve("a.txt"), "hello world\n");
        Path b = Files.writeString(Files.createDirectories(dir.resolve("sub")).resolve("other-name.pdf"), "hello world\n");

        assertThat(EffectKey.of(d, a)).isEqualTo(EffectKey.of(d, b));
        assertThat(EffectKey.of(d, a).key()).isEqualTo("db8c90dd89059f7dd1bfda7322e3ca93b87c6dad345d2c15415b74e2a8e31526");
    }

    @Test
    void idempotencyKey_isTheDocumentedDerivation_perScopeAndIncarnation() {
        EffectKey key = EffectKey.of(Destination.stable("slack", "C024BE91L"), "hello world\n".getBytes(StandardCharsets.UTF_8));
        String genesis = "0b5cf2a4-7c1e-4f7d-9a0e-5d6f3b2a1c00";

        // printf 'oncegate-idempotency/v2\n%s\n%s\n%s\n%s\n' KEY SCOPE GENESIS ZXID | sha256sum | cut -c1-32
        assertThat(key.idempotencyKey(0, genesis, 0x100000002L)).isEqualTo(shell(key.key(), 0, genesis, "4294967298"));
        assertThat(key.idempotencyKey(1, genesis, 0x100000002L)).isEqualTo(shell(key.key(), 1, genesis, "4294967298"))
                .isNotEqualTo(key.idempotencyKey(0, genesis, 0x100000002L));
        // another incarnation of the key (removed by retention and entered again, or another namespace life)
        assertThat(key.idempotencyKey(0, genesis, 0x100000077L)).isNotEqualTo(key.idempotencyKey(0, genesis, 0x100000002L));
        assertThat(key.idempotencyKey(0, "other-genesis", 0x100000002L)).isNotEqualTo(key.idempotencyKey(0, genesis, 0x100000002L));
        assertThat(new BoundaryAction.Context(key, 1, new FencingToken(7, 99L), "any-task", genesis, 0x100000002L).idempotencyKey())
                .isEqualTo(key.idempotencyKey(1, genesis, 0x100000002L));
        assertThatThrownBy(() -> key.idempotencyKey(-1, genesis, 1)).hasMessageStartingWith("scope:");
        assertThatThrownBy(() -> key.idempotencyKey(0, "", 1)).hasMessageStartingWith("genesisId:");
        assertThatThrownBy(() -> key.idempotencyKey(0, genesis, 0)).hasMessageStartingWith("keyZxid:");
    }

    /** The README's shell recipe, run by a shell when one is here (else the same text hashed in Java). */
    private static String shell(String key, int scope, String genesis, String zxid) {
        String text = "oncegate-idempotency/v2\n" + key + "\n" + scope + "\n" + genesis + "\n" + zxid + "\n";
        try {
            Process p = new ProcessBuilder("sh", "-c", "printf 'oncegate-idempotency/v2\\n%s\\n%s\\n%s\\n%s\\n' \"$0\" \"$1\" \"$2\" \"$3\""
                    + " | sha256sum | cut -c1-32", key, String.valueOf(scope), genesis, zxid).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (p.waitFor() == 0 && out.length() == 32) {
                return out;
            }
        } catch (java.io.IOException e) {
            // no shell: fall back to the text itself
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(StandardCharsets.UTF_8))).substring(0, 32);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void identifier_isTakenExactly() {
        EffectKey plain = EffectKey.of(Destination.stable("slack", "general"), new byte[0]);

        assertThat(EffectKey.of(Destination.stable("slack", " general"), new byte[0])).isNotEqualTo(plain);
        assertThat(EffectKey.of(Destination.stable("slack", "General"), new byte[0])).isNotEqualTo(plain);
        assertThat(EffectKey.of(Destination.displayName("slack", "general"), new byte[0])).isNotEqualTo(plain);
    }

    @Test
    void keyAndSha256Text_areExactly64LowerCaseHexCharacters() {
        String good = "db8c90dd89059f7dd1bfda7322e3ca93b87c6dad345d2c15415b74e2a8e31526";
        Destination d = Destination.stable("slack", "C024BE91L");
        assertThat(EffectKey.requireKeyText(good)).isEqualTo(good);
        assertThat(EffectKey.of(d, good).sha256()).isEqualTo(good);
        for (String bad : List.of("", good.substring(1), good + "0", good.toUpperCase(Locale.ROOT),
                good.substring(1) + "g", good.substring(1) + "/", good.substring(1) + ":", good.substring(1) + "`",
                good.substring(1) + "\u0660", " " + good.substring(1))) {
            assertThatThrownBy(() -> EffectKey.requireKeyText(bad)).as("key '%s'", bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("key: expected 64 lower-case hex");
            assertThatThrownBy(() -> EffectKey.of(d, bad)).as("sha256 '%s'", bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("sha256: expected 64 lower-case hex");
        }
    }

    @Test
    void badInput_isRefusedNamingTheField(@TempDir Path dir) {
        assertThatThrownBy(() -> Destination.stable("slack", "")).hasMessageStartingWith("destination:");
        assertThatThrownBy(() -> Destination.stable("Slack", "x")).hasMessageStartingWith("provider:");
        assertThatThrownBy(() -> Destination.stable("-slack", "x")).hasMessageStartingWith("provider:");
        assertThatThrownBy(() -> Destination.stable("a".repeat(65), "x")).hasMessageStartingWith("provider:");
        assertThatThrownBy(() -> Destination.stable("slack", "\ud800x")).hasMessageStartingWith("destination:")
                .hasMessageContaining("surrogate");
        assertThatThrownBy(() -> Destination.stable("slack", "é".repeat(513))).hasMessageStartingWith("destination:")
                .hasMessageContaining("1026");
        assertThatThrownBy(() -> Destination.parse(IdentityKind.STABLE, "no-colon")).hasMessageStartingWith("destination:");
        assertThatThrownBy(() -> IdentityKind.fromWireName("Stable")).hasMessageStartingWith("identity:");
        assertThatThrownBy(() -> EffectKey.of(Destination.stable("slack", "x"), dir.resolve("missing")))
                .hasMessageStartingWith("file:");
        assertThatThrownBy(() -> EffectKey.of(Destination.stable("slack", "x"), dir)).hasMessageStartingWith("file:");
        assertThatThrownBy(() -> EffectKey.requireKeyText("ABC")).hasMessageStartingWith("key:");
    }

    @Test
    void identifier_atTheLimit_isAccepted() {
        String id = "a".repeat(Destination.MAX_ID_BYTES);
        assertThat(Destination.stable("slack", id).id()).hasSize(1024);
        assertThat(Destination.parse(IdentityKind.STABLE, "slack:a:b").id()).isEqualTo("a:b");
    }

    @Test
    void path_isBucketedUnderTheNamespace() {
        EffectKey key = EffectKey.of(Destination.stable("slack", "C024BE91L"), "hello world\n".getBytes(StandardCharsets.UTF_8));

        assertThat(key.path("/oncegate")).isEqualTo(
                "/oncegate/keys/db/8c/db8c90dd89059f7dd1bfda7322e3ca93b87c6dad345d2c15415b74e2a8e31526");
        assertThatThrownBy(() -> key.path("oncegate")).hasMessageStartingWith("namespace:");
        assertThatThrownBy(() -> key.path("/oncegate/")).hasMessageStartingWith("namespace:");
    }
}
