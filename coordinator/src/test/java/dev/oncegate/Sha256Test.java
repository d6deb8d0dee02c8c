package dev.oncegate;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Sha256} computes exactly the JDK's SHA-256: every length from 0 to 4 blocks and a
 * little more (each way the padding can fall), random contents up to its limit, the limit itself
 * and one byte past it (where the JDK takes over), and FIPS 180-4's own examples. Random contents
 * come from a seed that is printed and that {@code -Doncegate.sha256.seed=N} replays.
 */
class Sha256Test {

    @TempDir
    Path dir;

    @Test
    void fipsExamples() {
        assertThat(hex(Sha256.digest("abc".getBytes(StandardCharsets.US_ASCII))))
                .isEqualTo("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assertThat(hex(Sha256.digest(new byte[0])))
                .isEqualTo("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assertThat(hex(Sha256.digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".getBytes(StandardCharsets.US_ASCII))))
                .isEqualTo("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    }

    @Test
    void everyLengthOfAFewBlocks_andRandomContents_matchTheJdk() {
        long seed = Long.getLong("oncegate.sha256.seed", System.nanoTime());
        System.out.println("Sha256Test seed " + seed + " (replay: -Doncegate.sha256.seed=" + seed + ")");
        Random random = new Random(seed);
        for (int length = 0; length <= 4 * 64 + 9; length++) {
            byte[] data = new byte[length];
            random.nextBytes(data);
            assertThat(hex(Sha256.digest(data))).as("length %d, seed %d", length, seed).isEqualTo(jdk(data));
        }
        for (int i = 0; i < 20; i++) {
            byte[] data = new byte[random.nextInt(Sha256.SMALL + 1)];
            random.nextBytes(data);
            assertThat(hex(Sha256.digest(data))).as("length %d, seed %d", data.length, seed).isEqualTo(jdk(data));
        }
        for (int length : new int[] {Sha256.SMALL, Sha256.SMALL + 1}) {
            byte[] data = new byte[length];
            random.nextBytes(data);
            assertThat(hex(Sha256.digest(data))).as("length %d, seed %d", length, seed).isEqualTo(jdk(data));
        }
    }

    @Test
    void aFileOnEitherSideOfTheLimit_hasTheKeyOfItsStream() throws Exception {
        Destination dest = Destination.parse(IdentityKind.STABLE, "slack:C024BE91L");
        for (int length : new int[] {0, 1, Sha256.SMALL, Sha256.SMALL + 1}) {
            byte[] data = new byte[length];
            new Random(length).nextBytes(data);
            Path file = Files.write(dir.resolve("content-" + length), data);

            EffectKey fromFile = EffectKey.of(dest, file);

            assertThat(fromFile.sha256()).as("length %d", length).isEqualTo(jdk(data));
            assertThat(fromFile).isEqualTo(EffectKey.of(dest, new java.io.ByteArrayInputStream(data)));
        }
    }

    private static String jdk(byte[] data) {
        return hex(Sha256.jdk().digest(data));
    }

    private static String hex(byte[] digest) {
        return HexFormat.of().formatHex(digest);
    }
}
