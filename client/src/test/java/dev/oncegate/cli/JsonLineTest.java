package dev.oncegate.cli;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.oncegate.Outcome;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Json#line} writes what Jackson's {@code ObjectMapper} wrote before it (the client's
 * tests and its users compare the JSON byte for byte): field order, nulls, escapes, numbers, and
 * the types it leaves to Jackson.
 */
class JsonLineTest {

    private static final ObjectMapper JACKSON = new ObjectMapper().disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);

    @Test
    void everyCharacter_isEscapedAsJacksonEscapesIt() throws Exception {
        StringBuilder all = new StringBuilder();
        for (int c = 0; c <= 0xFFFF; c++) {
            String one = String.valueOf((char) c);
            Map<String, Object> object = Json.object();
            object.put(one, one);

            assertThat(Json.line(object)).as("U+%04X", c).isEqualTo(JACKSON.writeValueAsString(object));
            all.append((char) c);
        }
        all.append("\ud83d\ude00 \ud800x\udc00");

        assertThat(Json.line(List.of(all.toString()))).isEqualTo(JACKSON.writeValueAsString(List.of(all.toString())));
    }

    @Test
    void recordsOfStringsIntegersBooleansAndNulls_matchJackson() throws Exception {
        Map<String, Object> object = Json.object();
        object.put("key", "db8c90dd89059f7dd1bfda7322e3ca93b87c6dad345d2c15415b74e2a8e31526");
        object.put("scope", 0);
        object.put("token", Long.MAX_VALUE);
        object.put("zxid", Long.MIN_VALUE);
        object.put("small", (short) -3);
        object.put("byte", (byte) 7);
        object.put("recorded", true);
        object.put("reads_as", null);
        object.put("empty", Json.object());
        object.put("none", List.of());
        object.put("set", new LinkedHashSet<>(List.of("b", "a")));
        object.put("nested", new ArrayList<>(Arrays.asList(Map.of("a", List.of(1, 2)), null, "x\"y\\z")));
        object.put("evidence", Json.evidence(new dev.oncegate.Evidence("/p", -1, null, "h", Instant.EPOCH, "d")));

        assertThat(Json.line(object)).isEqualTo(JACKSON.writeValueAsString(object));
    }

    @Test
    void typesLeftToJackson_areWrittenByJackson() throws Exception {
        Map<String, Object> object = new LinkedHashMap<>();
        object.put("double", 1.5);
        object.put("nan", Double.NaN);
        object.put("float", 1e20f);
        object.put("enum", Outcome.NOT_SENT);
        object.put("array", new int[] {1, 2});
        Map<Object, Object> integerKeys = new LinkedHashMap<>();
        integerKeys.put(1, "one");

        assertThat(Json.line(object)).isEqualTo(JACKSON.writeValueAsString(object));
        assertThat(Json.line(List.of(integerKeys))).isEqualTo(JACKSON.writeValueAsString(List.of(integerKeys)));
    }

    @Test
    void randomText_matchesJackson() throws Exception {
        long seed = System.nanoTime();
        System.out.println("JsonLineTest seed " + seed + " (-Doncegate.seed to replay)");
        Random random = new Random(Long.getLong("oncegate.seed", seed));
        for (int i = 0; i < 2_000; i++) {
            char[] text = new char[random.nextInt(40)];
            for (int j = 0; j < text.length; j++) {
                text[j] = (char) (random.nextBoolean() ? random.nextInt(0x80) : random.nextInt(0x10000));
            }
            Map<String, Object> object = Json.object();
            object.put(new String(text), List.of(new String(text), random.nextLong(), random.nextBoolean()));

            assertThat(Json.line(object)).isEqualTo(JACKSON.writeValueAsString(object));
        }
    }
}
