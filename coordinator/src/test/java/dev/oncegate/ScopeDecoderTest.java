package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;

import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;

/**
 * The one scope decoder on its own (no ZooKeeper): a worker's reading stops on the first
 * contradiction, an operator's reports every one, and both judge the same records alike.
 */
class ScopeDecoderTest {

    private static final String KEY = "/ns/keys/ab/cd/k";
    private static final String SCOPE = KEY + "/0";
    private static final byte[] GARBAGE = "not json".getBytes(StandardCharsets.UTF_8);
    private static final ScopeDecoder.Fetch NOTHING_MORE = path -> null;

    private static ScopeDecoder.Znode znode(byte[] data) {
        return new ScopeDecoder.Znode(data, new Stat());
    }

    private static byte[] openScope() {
        return Records.scope(new Records.Scope("initial", Instant.parse("2026-12-01T00:00:00Z"), null, false, false));
    }

    private static ScopeDecoder.Raw scope(byte[] data, List<String> children, byte[] reconciliation) {
        return new ScopeDecoder.Raw(0, SCOPE, znode(data), children, null, null, null, null, true,
                reconciliation == null ? null : znode(reconciliation));
    }

    @Test
    void openScope_decodesToItsViewWithoutContradiction() throws Exception {
        // Given an open scope as read, When decoded
        ScopeDecoder.Decoded decoded = ScopeDecoder.decode(scope(openScope(), List.of("latch"), null), false, false,
                NOTHING_MORE);

        // Then it reads open, with its after-0 authorization absent
        assertThat(decoded.contradictions()).isEmpty();
        assertThat(decoded.view().state()).isEqualTo(ScopeState.OPEN);
        assertThat(decoded.authorization().presence()).isEqualTo(AuthorizationView.Presence.ABSENT);
        assertThat(decoded.orThrow()).isSameAs(decoded);
    }

    @Test
    void severalDamagedRecords_anOperatorGetsEveryOne_inReadingOrder() throws Exception {
        // Given a scope whose data is garbage, with a znode oncegate never writes, and a garbage reconciliation
        ScopeDecoder.Raw raw = scope(GARBAGE, List.of("latch", "stray"), GARBAGE);

        // When an operator decodes it
        ScopeDecoder.Decoded decoded = ScopeDecoder.decode(raw, false, true, NOTHING_MORE);

        // Then every problem is reported, in order, and no state is judged
        assertThat(decoded.contradictions()).extracting(ScopeDecoder.Contradiction::path, ScopeDecoder.Contradiction::kind)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(SCOPE, ScopeDecoder.Kind.RECORD),
                        org.assertj.core.groups.Tuple.tuple(SCOPE + "/stray", ScopeDecoder.Kind.FOREIGN),
                        org.assertj.core.groups.Tuple.tuple(KEY + "/authorizations/reconciled-0", ScopeDecoder.Kind.RECORD));
        assertThat(decoded.contradictions().get(0).data()).isEqualTo(GARBAGE);
        assertThat(decoded.view()).isNull();
    }

    @Test
    void severalDamagedRecords_aWorkerStopsOnTheFirst() throws Exception {
        // Given the same damaged scope
        ScopeDecoder.Raw raw = scope(GARBAGE, List.of("latch", "stray"), GARBAGE);

        // When a worker decodes it
        ScopeDecoder.Decoded decoded = ScopeDecoder.decode(raw, false, false, NOTHING_MORE);

        // Then it has the first contradiction only, and stops on it (unreadable_record at the scope)
        assertThat(decoded.contradictions()).hasSize(1);
        assertThatThrownBy(decoded::orThrow).isInstanceOf(UnreadableRecordException.class)
                .satisfies(e -> assertThat(((UnreadableRecordException) e).path()).isEqualTo(SCOPE));
    }

    @Test
    void foreignZnodeAlone_aWorkerIgnoresIt_anOperatorReportsIt() throws Exception {
        // Given an open scope with a znode oncegate never writes beneath it
        ScopeDecoder.Raw raw = scope(openScope(), List.of("latch", "stray"), null);

        // When a worker and an operator decode it
        ScopeDecoder.Decoded worker = ScopeDecoder.decode(raw, false, false, NOTHING_MORE);
        ScopeDecoder.Decoded operator = ScopeDecoder.decode(raw, false, true, NOTHING_MORE);

        // Then the worker reads it open; the operator reports the znode and, as before, judges no state
        assertThat(worker.orThrow().view().state()).isEqualTo(ScopeState.OPEN);
        assertThat(operator.contradictions()).singleElement()
                .satisfies(c -> assertThat(c.kind()).isEqualTo(ScopeDecoder.Kind.FOREIGN));
        assertThat(operator.view()).isNull();
    }

    @Test
    void reconciliationOfAScopeNeverArmed_isAContradictionForBoth() throws Exception {
        // Given an open scope with a (well-formed) reconciliation: the protocol never writes one there
        byte[] reconciliation = Records.reconciliation(new KeyHistory.Reconciliation(Outcome.SENT_VERIFIED, "alice",
                "seen at the destination", new Actor("oncegate", "h", 1, "1f", "a1b2c3d4e5f60718"),
                Instant.parse("2026-12-01T00:00:00Z")));
        ScopeDecoder.Raw raw = scope(openScope(), List.of("latch"), reconciliation);

        // When a worker and an operator decode it, Then both find Custody's verdict, and the worker stops on it
        assertThat(ScopeDecoder.decode(raw, false, true, NOTHING_MORE).contradictions()).singleElement()
                .satisfies(c -> assertThat(c.problem()).contains("reconciliation of a scope never armed"));
        assertThatThrownBy(() -> ScopeDecoder.decode(raw, false, false, NOTHING_MORE).orThrow())
                .isInstanceOf(UnreadableRecordException.class).hasMessageContaining("never armed");
    }
}
