package dev.oncegate;

import java.util.Random;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A destination's provider name is {@code [a-z0-9][a-z0-9._-]{0,63}}: the hand-written check
 * ({@link Destination#isProviderName}) gives the regular expression's answer on the edge cases and
 * on random names over an alphabet around the allowed one (seed printed; replay with
 * {@code -Doncegate.destination.seed=N}).
 */
class DestinationTest {

    private static final Pattern RULE = Pattern.compile("[a-z0-9][a-z0-9._-]{0,63}");

    @ParameterizedTest
    @ValueSource(strings = {"slack", "s", "0", "desktop-chat", "a.b_c-d", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"})
    void providerNames_areTaken(String provider) {
        assertThat(Destination.stable(provider, "C1").provider()).isEqualTo(provider);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "-slack", ".slack", "_slack", "Slack", "sl ack", "slack:", "slåck", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"})
    void notProviderNames_areRefusedSayingTheRule(String provider) {
        assertThatThrownBy(() -> Destination.stable(provider, "C1")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("provider: '" + provider + "' must match [a-z0-9][a-z0-9._-]{0,63}");
    }

    @Test
    void randomNames_getTheRegularExpressionsAnswer() {
        long seed = Long.getLong("oncegate.destination.seed", System.nanoTime());
        System.out.println("DestinationTest seed " + seed + " (replay: -Doncegate.destination.seed=" + seed + ")");
        Random random = new Random(seed);
        String allowed = "az09._-";
        String around = allowed + "AZ:/ é\u0000";
        for (int i = 0; i < 20_000; i++) {
            String alphabet = i % 2 == 0 ? allowed : around; // half of them mostly valid, half mostly not
            StringBuilder name = new StringBuilder();
            int length = random.nextInt(68);
            for (int j = 0; j < length; j++) {
                name.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            String s = name.toString();
            assertThat(Destination.isProviderName(s)).as("'%s', seed %d", s, seed).isEqualTo(RULE.matcher(s).matches());
        }
    }
}
