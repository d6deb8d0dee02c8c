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

    @Test
    void key_doesNotDependOnFileNameOrLocation(@TempDir Path dir) throws IOException {
        Destination d = Destination.stable("slack", "C024BE91L");
        Path a = Files.writeString(dir.resolve("a.txt"), "hello world\n");
        Path b = Files.writeString(Files.createDirectories(dir.resolve("sub")).resolve("other-name.pdf"), "hello world\n");

        assertThat(EffectKey.of(d, a)).isEqualTo(EffectKey.of(d, b));
        assertThat(EffectKey.of(d, a).key()).isEqualTo("db8c90dd89059f7dd1bfda7322e3ca93b87c6dad345d2c15415b74e2a8e31526");
    }

    @Test
    void idempotencyKey_isTheDocumentedDerivation_perScope() {
        EffectKey key = EffectKey.of(Destination.stable("slack", "C024BE91L"), "hello world\n".getBytes(StandardCharsets.UTF_8));

        // printf 'oncegate-idempotency/v1\n%s\n%s\n' KEY SCOPE | sha256sum | cut -c1-32
        assertThat(key.idempotencyKey(0)).isEqualTo("3811eda8acbca315e9850f7af8351b4a");
        assertThat(key.idempotencyKey(1)).isEqualTo("e8acc2468df4037dc53dd59f2fe16a79");
        assertThat(new BoundaryAction.Context(key, 1, new FencingToken(7, 99L), "any-task").idempotencyKey())
                .isEqualTo(key.idempotencyKey(1));
        assertThatThrownBy(() -> key.idempotencyKey(-1)).hasMessageStartingWith("scope:");
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
