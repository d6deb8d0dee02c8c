package dev.oncegate;

import java.nio.charset.StandardCharsets;

/**
 * Records as oncegate wrote them before schema 4 (in schema 2's full names): a scope armed by the
 * holder its data names, that holder's {@code armed-<attempt>} record (no commitment), and an
 * outcome beside it at {@code KEY/n/outcome} (no secret). For tests of keys written back then.
 */
final class LegacyRecords {

    static final String ATTEMPT = "795e7ec2ce4e9760";
    /** The armed record's name: {@code armed-<attempt>} of the holder. */
    static final String ARMED = Layout.ARMED_PREFIX + ATTEMPT;

    private static final String ACTOR = "{\"task\":\"report-42\",\"host\":\"host-a\",\"pid\":4242,\"session\":\"1\","
            + "\"attempt\":\"" + ATTEMPT + "\"";

    private LegacyRecords() {
    }

    /** The scope's data: armed by {@link #ATTEMPT}, whose election node was {@code node}. */
    static byte[] armedScope(String node) {
        return utf8("{\"v\":2,\"opened\":\"initial\",\"at\":\"2026-11-30T12:00:00Z\",\"holder\":" + ACTOR + ",\"node\":\""
                + node + "\",\"expires\":\"2026-11-30T12:00:30Z\"},\"armed\":true}");
    }

    /** {@code armed-<attempt>}: who armed, with which token; no commitment. */
    static byte[] armed() {
        return utf8("{\"v\":2,\"by\":" + ACTOR + "},\"token\":1,\"zxid\":7,\"checkpoints\":[],\"at\":\"2026-11-30T12:00:01Z\"}");
    }

    /** {@code KEY/n/outcome}: the executor's outcome, no secret. */
    static byte[] outcome(Outcome outcome) {
        return utf8("{\"v\":2,\"outcome\":\"" + outcome.wireName() + "\",\"detail\":\"legacy\",\"by\":" + ACTOR
                + "},\"token\":1,\"zxid\":7,\"at\":\"2026-11-30T12:00:02Z\"}");
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
