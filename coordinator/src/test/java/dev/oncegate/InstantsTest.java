package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

/**
 * {@link Instants} is the JDK's {@code Instant.toString}/{@code Instant.parse}, result for result
 * and exception for exception: on hand-picked edges and on seeded instants and texts (the seed is
 * printed; {@code -Doncegate.instants.seed=N} replays it).
 */
class InstantsTest {

    private static final long SPAN = 253_402_300_799L + 62_167_219_200L;

    @Test
    void edges_areTheJdksOwn() {
        List<String> texts = List.of("1970-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z",
                "2000-02-29T12:00:00Z", "1900-02-29T12:00:00Z", "2100-02-28T23:59:59Z", "2024-02-29T00:00:00.5Z",
                "1969-12-31T23:59:59.000001Z", "2026-12-02T14:05:09.123Z", "2026-12-02t14:05:09z",
                "2026-12-02T23:59:60Z", "2026-12-02T24:00:00Z", "2026-13-01T00:00:00Z", "2026-04-31T00:00:00Z",
                "2026-12-02T14:05:09.Z", "2026-12-02T14:05:09.1234567890Z", "2026-12-02T14:05:09+01:00",
                "+10000-01-01T00:00:00Z", "-0001-12-31T00:00:00Z", "2026-12-02T14:05Z", "", "2026-12-02 14:05:09Z",
                "2026-1a-02T14:05:09Z", "２026-12-02T14:05:09Z");
        for (String text : texts) {
            assertSameParse(text);
        }
        for (Instant t : List.of(Instant.EPOCH, Instant.MIN, Instant.MAX, Instant.ofEpochSecond(-62_167_219_201L),
                Instant.ofEpochSecond(253_402_300_800L), Instant.ofEpochSecond(-1, 999_999_999),
                Instant.ofEpochSecond(0, 1_000), Instant.ofEpochSecond(0, 1_000_000), Instant.ofEpochSecond(0, 10))) {
            assertThat(Instants.format(t)).isEqualTo(t.toString());
        }
    }

    @Test
    void seededInstantsAndTexts_areTheJdksOwn() {
        long seed = Long.getLong("oncegate.instants.seed", System.nanoTime());
        System.out.println("InstantsTest seed " + seed + " (replay: -Doncegate.instants.seed=" + seed + ")");
        Random random = new Random(seed);
        String alphabet = "0123456789-:.TZtz+ 9";
        for (int i = 0; i < 20_000; i++) {
            long second = -62_167_219_200L - 1_000_000 + (long) (random.nextDouble() * (SPAN + 2_000_000));
            int nano = switch (random.nextInt(4)) {
                case 0 -> 0;
                case 1 -> random.nextInt(1000) * 1_000_000;
                case 2 -> random.nextInt(1_000_000) * 1000;
                default -> random.nextInt(1_000_000_000);
            };
            Instant t = Instant.ofEpochSecond(second, nano);
            String text = t.toString();
            assertThat(Instants.format(t)).as("seed %d", seed).isEqualTo(text);
            assertThat(Instants.parse(text)).as("seed %d: %s", seed, text).isEqualTo(t);
            // and a damaged copy reads (or fails) as the JDK reads it
            StringBuilder damaged = new StringBuilder(text);
            int at = random.nextInt(damaged.length());
            switch (random.nextInt(3)) {
                case 0 -> damaged.setCharAt(at, alphabet.charAt(random.nextInt(alphabet.length())));
                case 1 -> damaged.deleteCharAt(at);
                default -> damaged.insert(at, alphabet.charAt(random.nextInt(alphabet.length())));
            }
            assertSameParse(damaged.toString());
        }
    }

    private static void assertSameParse(String text) {
        Object jdk;
        try {
            jdk = Instant.parse(text);
        } catch (DateTimeParseException e) {
            jdk = e.getClass().getName() + ": " + e.getMessage();
        }
        Object ours;
        try {
            ours = Instants.parse(text);
        } catch (DateTimeParseException e) {
            ours = e.getClass().getName() + ": " + e.getMessage();
        }
        assertThat(ours).as(text).isEqualTo(jdk);
    }
}
