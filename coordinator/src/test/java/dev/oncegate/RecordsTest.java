package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;

/** Every record kind: what its encoder writes, its strict decoder reads back, and nothing else. */
class RecordsTest {

    static final Instant AT = Instant.parse("2026-11-30T12:00:00.123Z");
    static final Actor ACTOR = new Actor("report-42", "host-a", 4242, "100002ce6530002", "795e7ec2ce4e9760");
    static final String SCOPE = "/ns/keys/ab/cd/abcd/0";

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void genesis_roundTrips_withAndWithoutRoles() {
        Genesis open = new Genesis("g-1", AT, null);
        Genesis guarded = new Genesis("g-2", AT, new Genesis.Roles("w:aGFzaA==", "o:aGFzaA==", "a:aGFzaA=="));
        assertThat(Records.decodeGenesis("/ns/genesis", Records.genesis(open))).isEqualTo(open);
        assertThat(Records.decodeGenesis("/ns/genesis", Records.genesis(guarded))).isEqualTo(guarded);
    }

    @Test
    void key_roundTrips() {
        EffectKey key = EffectKey.of(Destination.stable("slack", "C024BE91L"), utf8("report"));
        KeyHistory.KeyRecord decoded = Records.decodeKey("/k", Records.key(key, AT));
        assertThat(decoded).isEqualTo(new KeyHistory.KeyRecord("slack", "stable", "C024BE91L", key.sha256(), AT));
    }

    @Test
    void scope_roundTrips_openLeasedTakenOverArmedReconciled() {
        Records.Scope open = new Records.Scope("initial", AT, null, false, false);
        KeyHistory.Lease lease = new KeyHistory.Lease(ACTOR, SCOPE + "/latch/_c_x-latch-0000000001", AT.plusSeconds(30),
                new KeyHistory.Takeover("lapsed", new Actor("old", "host-b", 7, "1", "0011223344556677")));
        Records.Scope leased = open.withLease(lease);
        Records.Scope stalled = open.withLease(new KeyHistory.Lease(ACTOR, SCOPE + "/latch/n", AT, new KeyHistory.Takeover("stalled_election", null)));
        for (Records.Scope s : List.of(open, leased, stalled, leased.armedNow(),
                new Records.Scope("initial", AT, lease, true, true))) {
            assertThat(Records.decodeScope(SCOPE, Records.scope(s))).isEqualTo(s);
        }
        // the election node is stored by name only: it lives under the scope's latch
        assertThat(new String(Records.scope(leased), StandardCharsets.UTF_8)).contains("\"n\":\"_c_x-latch-0000000001\"")
                .doesNotContain("/latch/");
    }

    @Test
    void armedOutcomeReconciliationAuthorization_roundTrip() {
        KeyHistory.Armed armed = new KeyHistory.Armed(ACTOR, new FencingToken(3, 77), List.of("picker-open"), AT);
        KeyHistory.OutcomeRecord outcome = new KeyHistory.OutcomeRecord(Outcome.SEND_STATUS_UNKNOWN, "timeout", ACTOR,
                new FencingToken(3, 77), AT);
        KeyHistory.Reconciliation reconciliation = new KeyHistory.Reconciliation(Outcome.SENT_VERIFIED, "alice",
                "the file is in the channel", ACTOR, AT);
        Records.Authorization authorization = new Records.Authorization("alice", "customer lost it", AT, ACTOR);
        String secret = Records.newSecret();
        assertThat(Records.decodeArmed("/a", Records.armed(armed, secret)))
                .isEqualTo(new Records.ArmedData(armed, Records.commitment(secret)));
        assertThat(Records.decodeOutcome("/o", Records.outcome(outcome, secret)))
                .isEqualTo(new Records.ExecutorOutcome(outcome, secret));
        assertThat(Records.decodeOutcome("/o", Records.reconciledMarker(3))).isEqualTo(new Records.ReconciledMarker(3));
        assertThat(Records.decodeReconciliation("/r", Records.reconciliation(reconciliation))).isEqualTo(reconciliation);
        assertThat(Records.decodeAuthorization("/z", Records.authorization(authorization))).isEqualTo(authorization);
    }

    @Test
    void authorization_fromTheZkCliRecipe_needsOnlyByAndReason() {
        assertThat(Records.decodeAuthorization("/z", utf8("{\"by\":\"alice\",\"reason\":\"resend\"}")))
                .isEqualTo(new Records.Authorization("alice", "resend", null, null));
        assertThatThrownBy(() -> Records.decodeAuthorization("/z", utf8("{\"by\":\" \",\"reason\":\"resend\"}")))
                .isInstanceOf(UnreadableRecordException.class).hasMessageContaining("by");
        assertThatThrownBy(() -> Records.decodeAuthorization("/z", utf8("{\"by\":\"alice\"}")))
                .isInstanceOf(UnreadableRecordException.class).hasMessageContaining("reason");
    }

    @Test
    void outcomeDetail_withAnUnpairedSurrogate_isWrittenAnyway() {
        KeyHistory.OutcomeRecord odd = Records.outcomeRecord(Outcome.SENT_VERIFIED, "receipt \ud800!", ACTOR,
                new FencingToken(1, 2), AT);
        assertThat(((Records.ExecutorOutcome) Records.decodeOutcome("/o", Records.outcome(odd, Records.newSecret())))
                .outcome().detail()).isEqualTo("receipt \ufffd!");
    }

    @Test
    void keyScopeArmedOutcome_areWrittenInSchema4_withOneLetterNames_andTheCommitment() {
        EffectKey key = EffectKey.of(Destination.stable("slack", "C024BE91L"), utf8("report"));
        KeyHistory.Lease lease = new KeyHistory.Lease(ACTOR, SCOPE + "/latch/_c_x-latch-0000000001", AT.plusSeconds(30), null);
        assertThat(new String(Records.key(key, AT), StandardCharsets.UTF_8)).isEqualTo("{\"v\":4,\"p\":\"slack\","
                + "\"i\":\"stable\",\"d\":\"C024BE91L\",\"s\":\"" + key.sha256() + "\",\"c\":\"2026-11-30T12:00:00.123Z\"}");
        assertThat(new String(Records.scope(new Records.Scope("initial", AT, lease, true, false)), StandardCharsets.UTF_8))
                .isEqualTo("{\"v\":4,\"o\":\"initial\",\"t\":\"2026-11-30T12:00:00.123Z\",\"h\":{\"t\":\"report-42\","
                        + "\"h\":\"host-a\",\"p\":4242,\"s\":\"100002ce6530002\",\"a\":\"795e7ec2ce4e9760\","
                        + "\"n\":\"_c_x-latch-0000000001\",\"e\":\"2026-11-30T12:00:30.123Z\"},\"a\":true}");
        String secret = "00112233445566778899aabbccddeeff";
        assertThat(new String(Records.outcome(new KeyHistory.OutcomeRecord(Outcome.SENT_VERIFIED, "receipt-1", ACTOR,
                new FencingToken(2, 10), AT), secret), StandardCharsets.UTF_8)).isEqualTo("{\"v\":4,\"o\":\"sent_verified\","
                + "\"d\":\"receipt-1\",\"s\":\"" + secret + "\",\"b\":{\"t\":\"report-42\",\"h\":\"host-a\",\"p\":4242,"
                + "\"s\":\"100002ce6530002\",\"a\":\"795e7ec2ce4e9760\"},\"k\":2,\"z\":10,\"t\":\"2026-11-30T12:00:00.123Z\"}");
        // the armed record commits to the secret: sha256("oncegate-commitment/v1\n" + secret)
        assertThat(new String(Records.armed(new KeyHistory.Armed(ACTOR, new FencingToken(2, 10), List.of(), AT), secret),
                StandardCharsets.UTF_8)).isEqualTo("{\"v\":4,\"c\":[],\"m\":\"" + Records.commitment(secret) + "\",\"b\":{"
                + "\"t\":\"report-42\",\"h\":\"host-a\",\"p\":4242,\"s\":\"100002ce6530002\",\"a\":\"795e7ec2ce4e9760\"},"
                + "\"k\":2,\"z\":10,\"t\":\"2026-11-30T12:00:00.123Z\"}");
        assertThat(Records.commitment(secret)).isEqualTo(EffectKey.hexSha256(
                ("oncegate-commitment/v1\n" + secret).getBytes(StandardCharsets.UTF_8)));
        assertThat(new String(Records.reconciledMarker(0), StandardCharsets.UTF_8))
                .isEqualTo("{\"v\":4,\"o\":\"sent_verified\",\"r\":\"reconciled-0\"}");
        // the operator-facing records keep schema 2 and its names
        assertThat(new String(Records.authorization(new Records.Authorization("alice", "resend", AT, ACTOR)),
                StandardCharsets.UTF_8)).startsWith("{\"v\":2,\"by\":\"alice\",\"reason\":\"resend\",\"actor\":{\"task\":");
    }

    @Test
    void recordsWrittenInSchema2_stillRead_asTheSameValues() {
        String actor = "{\"task\":\"report-42\",\"host\":\"host-a\",\"pid\":4242,\"session\":\"100002ce6530002\","
                + "\"attempt\":\"795e7ec2ce4e9760\"}";
        String sha = "f".repeat(64);
        assertThat(Records.decodeKey("/k", utf8("{\"v\":2,\"provider\":\"slack\",\"identity\":\"stable\","
                + "\"destination\":\"C024BE91L\",\"sha256\":\"" + sha + "\",\"created\":\"2026-11-30T12:00:00.123Z\"}")))
                .isEqualTo(new KeyHistory.KeyRecord("slack", "stable", "C024BE91L", sha, AT));
        KeyHistory.Lease lease = new KeyHistory.Lease(ACTOR, SCOPE + "/latch/_c_x-latch-0000000001", AT.plusSeconds(30),
                new KeyHistory.Takeover("lapsed", new Actor("old", "host-b", 7, "1", "0011223344556677")));
        assertThat(Records.decodeScope(SCOPE, utf8("{\"v\":2,\"opened\":\"initial\",\"at\":\"2026-11-30T12:00:00.123Z\","
                + "\"holder\":{\"task\":\"report-42\",\"host\":\"host-a\",\"pid\":4242,\"session\":\"100002ce6530002\","
                + "\"attempt\":\"795e7ec2ce4e9760\",\"node\":\"_c_x-latch-0000000001\",\"expires\":\"2026-11-30T12:00:30.123Z\","
                + "\"over\":{\"cause\":\"lapsed\",\"task\":\"old\",\"host\":\"host-b\",\"pid\":7,\"session\":\"1\","
                + "\"attempt\":\"0011223344556677\"}},\"armed\":true}")))
                .isEqualTo(new Records.Scope("initial", AT, lease, true, false));
        assertThat(Records.decodeArmed("/a", utf8("{\"v\":2,\"by\":" + actor + ",\"token\":3,\"zxid\":77,"
                + "\"checkpoints\":[\"picker-open\"],\"at\":\"2026-11-30T12:00:00.123Z\"}")))
                .as("no commitment before schema 4")
                .isEqualTo(new Records.ArmedData(new KeyHistory.Armed(ACTOR, new FencingToken(3, 77), List.of("picker-open"), AT), null));
        assertThat(Records.decodeOutcome("/o", utf8("{\"v\":2,\"outcome\":\"send_status_unknown\",\"detail\":\"timeout\","
                + "\"by\":" + actor + ",\"token\":3,\"zxid\":77,\"at\":\"2026-11-30T12:00:00.123Z\"}")))
                .isEqualTo(new Records.ExecutorOutcome(new KeyHistory.OutcomeRecord(Outcome.SEND_STATUS_UNKNOWN, "timeout",
                        ACTOR, new FencingToken(3, 77), AT), null));
    }

    @Test
    void records_ofAnotherSchemaOrWithMissingFields_areUnreadable() {
        assertThatThrownBy(() -> Records.decodeScope(SCOPE, utf8("{\"v\":1,\"opened\":\"initial\",\"at\":\"2026-01-01T00:00:00Z\",\"holder\":null}")))
                .isInstanceOf(UnreadableRecordException.class).hasMessageContaining("schema version 1").hasMessageContaining("older pre-release");
        assertThatThrownBy(() -> Records.decodeScope(SCOPE, utf8("{\"v\":5,\"o\":\"initial\",\"t\":\"2026-01-01T00:00:00Z\",\"h\":null}")))
                .isInstanceOf(UnreadableRecordException.class).hasMessageContaining("upgrade oncegate")
                .hasMessageContaining("versions 2 to 4");
        assertThatThrownBy(() -> Records.decodeArmed("/a", utf8("{\"v\":4,\"c\":[],\"b\":{\"t\":\"x\",\"h\":\"h\",\"p\":1,"
                + "\"s\":\"1\",\"a\":\"1\"},\"k\":1,\"z\":1,\"t\":\"2026-01-01T00:00:00Z\"}")))
                .as("schema 4 armed without its commitment").isInstanceOf(UnreadableRecordException.class)
                .hasMessageContaining("'m' (commitment)");
        assertThatThrownBy(() -> Records.decodeOutcome("/o", utf8("{\"v\":4,\"o\":\"not_sent\",\"r\":\"reconciled-0\"}")))
                .as("a reconciliation marker says sent_verified").isInstanceOf(UnreadableRecordException.class);
        assertThatThrownBy(() -> Records.decodeGenesis("/ns/genesis", utf8("{\"v\":4,\"id\":\"g\",\"created\":\"2026-01-01T00:00:00Z\"}")))
                .isInstanceOf(UnreadableRecordException.class).hasMessageContaining("upgrade oncegate")
                .hasMessageContaining("versions 2 to 3");
        assertThatThrownBy(() -> Records.decodeGenesis("/ns/genesis", utf8("{\"v\":3,\"id\":\"g\",\"created\":"
                + "\"2026-01-01T00:00:00Z\",\"restores_accepted\":1}")))
                .as("an acceptance count without its id").isInstanceOf(UnreadableRecordException.class)
                .hasMessageContaining("acceptance");
        Genesis accepted = Records.decodeGenesis("/ns/genesis", Records.genesis(new Genesis("g",
                java.time.Instant.parse("2026-01-01T00:00:00Z"), null, 2, "a1", true)));
        assertThat(accepted.restoresAccepted()).isEqualTo(2);
        assertThat(accepted.acceptance()).isEqualTo("a1");
        assertThat(accepted.automatic()).isTrue();
        assertThat(accepted.witnessLife()).isEqualTo("g#2-a1");
        assertThat(new String(Records.genesis(accepted), java.nio.charset.StandardCharsets.UTF_8)).startsWith("{\"v\":3,");
        assertThatThrownBy(() -> Records.decodeScope(SCOPE, utf8("{\"v\":3,\"t\":\"2026-01-01T00:00:00Z\",\"h\":null}")))
                .isInstanceOf(UnreadableRecordException.class).hasMessageContaining("field 'o' (opened) is missing");
        assertThatThrownBy(() -> Records.decodeScope(SCOPE, utf8("{\"v\":3,\"opened\":\"initial\",\"at\":\"2026-01-01T00:00:00Z\",\"holder\":null}")))
                .as("version 3 with version 2's names").isInstanceOf(UnreadableRecordException.class)
                .hasMessageContaining("field 'h' (holder) is missing");
        assertThatThrownBy(() -> Records.decodeScope(SCOPE, utf8("{\"v\":2,\"at\":\"2026-01-01T00:00:00Z\",\"holder\":null}")))
                .isInstanceOf(UnreadableRecordException.class).hasMessageContaining("opened");
        assertThatThrownBy(() -> Records.decodeScope(SCOPE, utf8("{\"v\":2,\"opened\":\"initial\",\"at\":\"2026-01-01T00:00:00Z\",\"holder\":null,\"armed\":true}")))
                .isInstanceOf(UnreadableRecordException.class).hasMessageContaining("names no holder");
        assertThatThrownBy(() -> Records.decodeReconciliation("/r", Records.reconciliation(new KeyHistory.Reconciliation(
                Outcome.NOT_SENT, "x", "y", ACTOR, AT)))).isInstanceOf(UnreadableRecordException.class).hasMessageContaining("only say sent_verified");
        assertThatThrownBy(() -> Records.decodeScope(SCOPE, utf8("not json")))
                .isInstanceOf(UnreadableRecordException.class).hasMessageContaining(SCOPE);
    }
}
