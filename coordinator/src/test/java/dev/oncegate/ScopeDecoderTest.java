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

    // ---- what a worker reads past its first contradiction, and what an operator reads anyway ----

    private static byte[] armedScope() {
        return Records.scope(new Records.Scope("initial", Instant.parse("2026-12-01T00:00:00Z"), new KeyHistory.Lease(
                new Actor("t", "h", 1, "1", "a1"), SCOPE + "/latch/_c_x-latch-0000000000",
                Instant.parse("2026-12-01T00:00:30Z"), null), true, false));
    }

    private static ScopeDecoder.Raw armed(byte[] data, List<String> children, byte[] armed, byte[] outcome) {
        return new ScopeDecoder.Raw(0, SCOPE, znode(data), children, armed == null ? null : znode(armed),
                outcome == null ? null : znode(outcome), null, null, true, null);
    }

    @Test
    void garbageArmedRecordAndOutcome_aWorkerGetsTheArmedRecordOnly_anOperatorBoth() throws Exception {
        // Given an armed scope whose armed record and outcome are both damaged
        ScopeDecoder.Raw raw = armed(armedScope(), List.of("latch", "armed"), GARBAGE, GARBAGE);

        // When a worker and an operator decode it
        ScopeDecoder.Decoded worker = ScopeDecoder.decode(raw, false, false, NOTHING_MORE);
        ScopeDecoder.Decoded operator = ScopeDecoder.decode(raw, false, true, NOTHING_MORE);

        // Then the worker stops on the armed record; the operator also hears of the outcome
        assertThat(worker.contradictions()).extracting(ScopeDecoder.Contradiction::path).containsExactly(SCOPE + "/armed");
        assertThat(operator.contradictions()).extracting(ScopeDecoder.Contradiction::path)
                .containsExactly(SCOPE + "/armed", SCOPE + "/armed/outcome");
        assertThat(operator.view()).isNull();
    }

    @Test
    void garbageScopeDataBesideTwoArmedRecords_aWorkerStopsOnTheData_anOperatorHearsOfBoth() throws Exception {
        ScopeDecoder.Raw raw = armed(GARBAGE, List.of("latch", "armed", "armed-x"), null, null);

        assertThat(ScopeDecoder.decode(raw, false, false, NOTHING_MORE).contradictions())
                .extracting(ScopeDecoder.Contradiction::path).containsExactly(SCOPE);
        assertThat(ScopeDecoder.decode(raw, false, true, NOTHING_MORE).contradictions())
                .extracting(ScopeDecoder.Contradiction::path, ScopeDecoder.Contradiction::kind).containsExactly(
                        org.assertj.core.groups.Tuple.tuple(SCOPE, ScopeDecoder.Kind.RECORD),
                        org.assertj.core.groups.Tuple.tuple(SCOPE, ScopeDecoder.Kind.RECORD));
    }

    @Test
    void garbageScopeDataBesideADamagedArmedRecord_anOperatorStillReadsTheArmedRecord() throws Exception {
        ScopeDecoder.Raw raw = armed(GARBAGE, List.of("latch", "armed"), GARBAGE, null);

        assertThat(ScopeDecoder.decode(raw, false, true, NOTHING_MORE).contradictions())
                .extracting(ScopeDecoder.Contradiction::path).containsExactly(SCOPE, SCOPE + "/armed");
    }

    @Test
    void garbageScopeDataBesideAGarbageLegacyOutcome_aWorkerStopsOnTheData_anOperatorHearsOfBoth() throws Exception {
        ScopeDecoder.Raw raw = new ScopeDecoder.Raw(0, SCOPE, znode(GARBAGE), List.of("latch", "outcome"), null, null,
                znode(GARBAGE), null, true, null);

        assertThat(ScopeDecoder.decode(raw, true, false, NOTHING_MORE).contradictions())
                .extracting(ScopeDecoder.Contradiction::path).containsExactly(SCOPE);
        assertThat(ScopeDecoder.decode(raw, true, true, NOTHING_MORE).contradictions())
                .extracting(ScopeDecoder.Contradiction::path).containsExactly(SCOPE, SCOPE + "/outcome");
    }

    // ---- records before schema 4: the armed record read on demand --------------------------------

    /** A fetch of the legacy armed record that remembers what it was asked for. */
    private static final class LegacyFetch implements ScopeDecoder.Fetch {
        final List<String> asked = new java.util.ArrayList<>();
        final byte[] answer;

        LegacyFetch(byte[] answer) {
            this.answer = answer;
        }

        @Override
        public ScopeDecoder.Znode read(String path) {
            asked.add(path);
            return answer == null ? null : znode(answer);
        }
    }

    private static ScopeDecoder.Raw legacy(byte[] outcome, byte[] authorization) {
        return new ScopeDecoder.Raw(0, SCOPE, znode(LegacyRecords.armedScope("_c_x-latch-0000000000")),
                List.of("latch", LegacyRecords.ARMED, "outcome"), null, null, znode(outcome),
                authorization == null ? null : znode(authorization), true, null);
    }

    @Test
    void legacyNotSent_aWorkerReadsItsArmedRecord_andBelievesItOnlyWithoutRoles() throws Exception {
        // Given a schema 2 scope: armed-ATTEMPT, and a not_sent beside it
        ScopeDecoder.Raw raw = legacy(LegacyRecords.outcome(Outcome.NOT_SENT), null);
        LegacyFetch fetch = new LegacyFetch(LegacyRecords.armed());

        // When a worker without roles decodes it, Then it read the armed record and believes the not_sent
        ScopeDecoder.Decoded trusted = ScopeDecoder.decode(raw, true, false, fetch).orThrow();
        assertThat(fetch.asked).containsExactly(SCOPE + "/" + LegacyRecords.ARMED);
        assertThat(trusted.view().state()).isEqualTo(ScopeState.NOT_SENT);
        assertThat(trusted.facts().armed().commitment()).isNull();
        // and with roles it cannot verify it: unreadable
        assertThat(ScopeDecoder.decode(raw, false, false, fetch).contradictions()).singleElement()
                .satisfies(c -> assertThat(c.problem()).contains("cannot be verified"));
    }

    @Test
    void legacyDelivered_aWorkerNeedsNoArmedRecord_unlessAnAuthorizationNamesTheScope_anOperatorReadsItAnyway()
            throws Exception {
        ScopeDecoder.Raw delivered = legacy(LegacyRecords.outcome(Outcome.SENT_VERIFIED), null);
        LegacyFetch worker = new LegacyFetch(LegacyRecords.armed());
        LegacyFetch operator = new LegacyFetch(LegacyRecords.armed());
        LegacyFetch authorized = new LegacyFetch(LegacyRecords.armed());

        ScopeDecoder.Decoded read = ScopeDecoder.decode(delivered, false, false, worker).orThrow();
        ScopeDecoder.Decoded inspected = ScopeDecoder.decode(delivered, false, true, operator);
        ScopeDecoder.Decoded withAuthorization = ScopeDecoder.decode(legacy(LegacyRecords.outcome(Outcome.SENT_VERIFIED),
                "{\"by\":\"bob\",\"reason\":\"resend\"}".getBytes(StandardCharsets.UTF_8)), false, false, authorized).orThrow();

        assertThat(read.view().state()).isEqualTo(ScopeState.SENT_VERIFIED);
        assertThat(worker.asked).isEmpty();
        assertThat(read.facts().armed()).isNull();
        assertThat(inspected.contradictions()).isEmpty();
        assertThat(operator.asked).containsExactly(SCOPE + "/" + LegacyRecords.ARMED);
        assertThat(inspected.view().armedZxid()).isZero(); // the fetched znode's stat: a new Stat here
        assertThat(inspected.facts().armed()).isNotNull();
        assertThat(authorized.asked).hasSize(1);
        assertThat(withAuthorization.authorization().presence()).isEqualTo(AuthorizationView.Presence.PRESENT);
    }

    @Test
    void legacyArmedRecordGoneOrDamaged_isAContradiction_andADamagedOutcomeStopsAWorkerBeforeTheFetch() throws Exception {
        ScopeDecoder.Raw notSent = legacy(LegacyRecords.outcome(Outcome.NOT_SENT), null);

        assertThat(ScopeDecoder.decode(notSent, true, false, new LegacyFetch(null)).contradictions()).singleElement()
                .satisfies(c -> {
                    assertThat(c.path()).isEqualTo(SCOPE + "/" + LegacyRecords.ARMED);
                    assertThat(c.problem()).contains("it is gone");
                });
        assertThat(ScopeDecoder.decode(notSent, true, false, new LegacyFetch(GARBAGE)).contradictions()).singleElement()
                .satisfies(c -> assertThat(c.data()).isEqualTo(GARBAGE));
        LegacyFetch never = new LegacyFetch(LegacyRecords.armed());
        assertThat(ScopeDecoder.decode(legacy(GARBAGE, null), true, false, never).contradictions()).singleElement()
                .satisfies(c -> assertThat(c.path()).isEqualTo(SCOPE + "/outcome"));
        assertThat(never.asked).isEmpty();
    }
}
