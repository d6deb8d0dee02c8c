package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** The JSON codec round-trips what it writes and refuses anything it cannot fully understand. */
class JsonTest {

    @Test
    void roundTrip_keepsEveryValue() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("v", 1L);
        m.put("s", "quote\" back\\ nl\n tab\t ctl\u0001 emoji 📊");
        m.put("n", null);
        m.put("b", true);
        m.put("list", List.of("a", 2L));
        m.put("obj", Map.of("x", -5L));

        assertThat(Json.decodeObject(Json.encode(m))).isEqualTo(m);
    }

    @Test
    void malformed_isRefused() {
        for (String bad : new String[] {"", "{", "{\"a\":1,}", "{\"a\":1} x", "{\"a\":1,\"a\":2}", "[1]", "{\"a\":\"\u0001\"}",
                "{\"a\":tru}", "{\"a\":\"\\q\"}"}) {
            assertThatThrownBy(() -> Json.decodeObject(bad.getBytes(StandardCharsets.UTF_8)))
                    .as(bad).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
