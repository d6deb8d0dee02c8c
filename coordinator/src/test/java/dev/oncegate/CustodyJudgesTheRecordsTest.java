package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.List;

import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;

/**
 * {@link Custody}'s judgement over records built by hand, one row per rule: the state each set of
 * records proves (and the evidence it rests on), or the contradiction that stops a reader. The
 * rows are the ones no honest history writes (legacy schema 2/3 records, an outcome written twice,
 * a reconciliation marker out of place, a forged outcome, zxids on the edges of the chain's rules),
 * so neither the simulator nor the real-server tests reach them; Custody is pure, so no ZooKeeper.
 */
class CustodyJudgesTheRecordsTest {

    static final String KEY = "/ns/keys/ab/cd/k";
    static final String SCOPE = KEY + "/0";
    static final Instant AT = Instant.parse("2026-12-01T00:00:00Z");
    static final String ATTEMPT = "795e7ec2ce4e9760";
    static final Actor EXECUTOR = new Actor("report-42", "host-a", 42, "100002ce6530002", ATTEMPT);
    static final String SECRET = "00112233445566778899aabbccddeeff";
    static final String FORGED = "ffeeddccbbaa99887766554433221100";
    static final String LEGACY_ARMED = Layout.ARMED_PREFIX + ATTEMPT;

    /** A stat as ZooKeeper would return it: creation and last-write zxids, data version. */
    static Stat stat(long czxid, long mzxid, int version) {
        Stat s = new Stat();
        s.setCzxid(czxid);
        s.setMzxid(mzxid);
        s.setVersion(version);
        return s;
    }

    static Records.Scope leasedBy(String attempt, boolean armedFlag) {
        return new Records.Scope("initial", AT, new KeyHistory.Lease(new Actor("t", "h", 1, "1", attempt),
                SCOPE + "/latch/_c_x-latch-0000000000", AT.plusSeconds(30), null), armedFlag, false);
    }

    static final Records.Scope OPEN = new Records.Scope("initial", AT, null, false, false);
    static final Records.Scope ARMED_BY_EXECUTOR = leasedBy(ATTEMPT, true);

    static Records.ArmedData armedRecord(String committedSecret) {
        return new Records.ArmedData(new KeyHistory.Armed(EXECUTOR, new FencingToken(2, 10), List.of(), AT),
                committedSecret == null ? null : Records.commitment(committedSecret));
    }

    static Records.ExecutorOutcome outcome(Outcome o, String secret) {
        return new Records.ExecutorOutcome(new KeyHistory.OutcomeRecord(o, "receipt", EXECUTOR, new FencingToken(2, 10), AT),
                secret);
    }

    static KeyHistory.Reconciliation aReconciliation() {
        return new KeyHistory.Reconciliation(Outcome.SENT_VERIFIED, "alice", "seen in the channel",
                new Actor("oncegate", "ops", 7, "2", "a1b2c3d4e5f60718"), AT);
    }

    /**
     * One scope's records (scope 0, created at zxid 5, armed at zxid 10 (record) with its outcome
     * znode created then), changed one field at a time.
     */
    record Row(Records.Scope data, List<String> children, Records.ArmedData armed, Records.OutcomeData outcome,
               int outcomeWrites, Records.OutcomeData legacyOutcome, KeyHistory.Reconciliation reconciliation,
               long reconciliationCzxid) {

        /** Schema 4: armed by the executor, committing to {@link #SECRET}, no outcome written yet. */
        static Row armedNow() {
            return new Row(ARMED_BY_EXECUTOR, List.of("latch", Layout.ARMED), armedRecord(SECRET), null, 0, null, null, 0);
        }

        /** Schema 2/3: {@code armed-<attempt>} beside the scope, named after the holder, no commitment. */
        static Row legacyArmed() {
            return new Row(ARMED_BY_EXECUTOR, List.of("latch", LEGACY_ARMED), armedRecord(null), null, 0, null, null, 0);
        }

        Row data(Records.Scope d) {
            return new Row(d, children, armed, outcome, outcomeWrites, legacyOutcome, reconciliation, reconciliationCzxid);
        }

        Row children(String... c) {
            return new Row(data, List.of(c), armed, outcome, outcomeWrites, legacyOutcome, reconciliation, reconciliationCzxid);
        }

        Row armed(Records.ArmedData a) {
            return new Row(data, children, a, outcome, outcomeWrites, legacyOutcome, reconciliation, reconciliationCzxid);
        }

        /** {@code armed/outcome} holding {@code o} after {@code writes} writes (schema 4). */
        Row outcome(Records.OutcomeData o, int writes) {
            return new Row(data, children, armed, o, writes, legacyOutcome, reconciliation, reconciliationCzxid);
        }

        /** {@code KEY/0/outcome}, where records before schema 4 kept it. */
        Row legacyOutcome(Records.OutcomeData o) {
            return new Row(data, children, armed, outcome, outcomeWrites, o, reconciliation, reconciliationCzxid);
        }

        /** {@code authorizations/reconciled-0}, created at {@code czxid}. */
        Row reconciled(long czxid) {
            return new Row(data, children, armed, outcome, outcomeWrites, legacyOutcome, aReconciliation(), czxid);
        }

        Custody.Facts facts() {
            boolean schema4 = children.contains(Layout.ARMED);
            return new Custody.Facts(0, SCOPE, data, stat(5, 9, 3), children, armed,
                    armed == null ? null : stat(10, 10, 0), outcome,
                    schema4 ? stat(10, outcomeWrites == 0 ? 10 : 20 + outcomeWrites, outcomeWrites) : null,
                    legacyOutcome, legacyOutcome == null ? null : stat(20, 20, 0), reconciliation,
                    reconciliation == null ? null : stat(reconciliationCzxid, reconciliationCzxid, 0));
        }

        ScopeView judged(boolean legacyTrusted) {
            return Custody.judge(facts(), legacyTrusted);
        }

        /** Judged in a namespace with roles. */
        ScopeView judged() {
            return judged(false);
        }

        void isUnreadable(String path, String problem) {
            assertThatThrownBy(this::judged).isInstanceOf(UnreadableRecordException.class)
                    .hasMessageContaining(problem)
                    .satisfies(e -> assertThat(((UnreadableRecordException) e).path()).isEqualTo(path));
        }
    }

    // ---- schema 4: the armed record and its outcome -------------------------------------

    @Test
    void notSentWrittenOnce_revealingTheSecret_readsNotSent_onTheOutcome() {
        // Given the executor's one not_sent write, When judged
        ScopeView view = Row.armedNow().outcome(outcome(Outcome.NOT_SENT, SECRET), 1).judged();

        // Then not_sent, resting on the outcome record written at zxid 21
        assertThat(view.state()).isEqualTo(ScopeState.NOT_SENT);
        assertThat(view.outcomeZxid()).isEqualTo(21);
        assertThat(view.armedZxid()).isEqualTo(10);
        assertThat(view.evidence("stop").path()).isEqualTo(SCOPE + "/armed/outcome");
    }

    @Test
    void notSentWrittenTwice_isUnreadable_evenWithTheSecret() {
        // Given a not_sent that was written again (the worker credential may setData it), When judged
        // Then nothing is proved by it: readers stop
        Row.armedNow().outcome(outcome(Outcome.NOT_SENT, SECRET), 2)
                .isUnreadable(SCOPE + "/armed/outcome", "a not_sent outcome written 2 times");
    }

    @Test
    void sentVerifiedWrittenTwice_readsSentVerified_anAdminsRestore() {
        // Given a sent_verified an admin restored (a second write), When judged
        ScopeView view = Row.armedNow().outcome(outcome(Outcome.SENT_VERIFIED, SECRET), 2).judged();

        // Then it still stops contenders as delivered: only a not_sent needs its one write
        assertThat(view.state()).isEqualTo(ScopeState.SENT_VERIFIED);
        assertThat(view.outcomeVersion()).isEqualTo(2);
    }

    @Test
    void outcomeZnodeWrittenButEmpty_isUnreadable() {
        // Given an outcome znode written once whose content is gone (version 1, no record)
        Row.armedNow().outcome(null, 1).isUnreadable(SCOPE + "/armed/outcome", "(1 writes) disagree");
    }

    @Test
    void outcomeWithoutAWrite_isUnreadable() {
        // Given an outcome content at version 0 (the arming multi creates the znode empty)
        Row.armedNow().outcome(outcome(Outcome.SENT_VERIFIED, SECRET), 0)
                .isUnreadable(SCOPE + "/armed/outcome", "(0 writes) disagree");
    }

    @Test
    void armedWithoutOutcome_readsArmed_onTheArmedRecord() {
        ScopeView view = Row.armedNow().judged();

        assertThat(view.state()).isEqualTo(ScopeState.ARMED);
        assertThat(view.outcomeVersion()).isEqualTo(-1);
        assertThat(view.evidence("stop").path()).isEqualTo(SCOPE + "/armed");
        assertThat(view.evidence("stop").detail()).contains("no outcome recorded");
    }

    @Test
    void forgedNotSent_notRevealingTheSecret_isUnreadable() {
        // Given a not_sent written with another secret (or none): not the executor that armed
        Row.armedNow().outcome(outcome(Outcome.NOT_SENT, FORGED), 1)
                .isUnreadable(SCOPE + "/armed/outcome", "a not_sent outcome that does not reveal the secret");
        Row.armedNow().outcome(outcome(Outcome.NOT_SENT, null), 1)
                .isUnreadable(SCOPE + "/armed/outcome", "does not reveal the secret");
    }

    @Test
    void forgedSentVerifiedOrUnknown_notRevealingTheSecret_isUnreadable() {
        Row.armedNow().outcome(outcome(Outcome.SENT_VERIFIED, FORGED), 1)
                .isUnreadable(SCOPE + "/armed/outcome", "an outcome that does not reveal the secret");
        Row.armedNow().outcome(outcome(Outcome.SEND_STATUS_UNKNOWN, null), 1)
                .isUnreadable(SCOPE + "/armed/outcome", "an outcome that does not reveal the secret");
        // and revealing it, each reads as written
        assertThat(Row.armedNow().outcome(outcome(Outcome.SEND_STATUS_UNKNOWN, SECRET), 1).judged().state())
                .isEqualTo(ScopeState.SEND_STATUS_UNKNOWN);
    }

    @Test
    void armedRecordDamaged_isUnreadable_eachWay() {
        // listed but not readable, without a commitment, without its outcome znode, with an outcome beside it
        Row.armedNow().armed(null).isUnreadable(SCOPE + "/armed", "cannot be read");
        Row.armedNow().armed(armedRecord(null)).isUnreadable(SCOPE + "/armed", "without a commitment");
        assertThatThrownBy(() -> Custody.judge(withoutOutcomeZnode(Row.armedNow().facts()), false))
                .isInstanceOf(UnreadableRecordException.class).hasMessageContaining("lost its outcome znode");
        Row.armedNow().legacyOutcome(outcome(Outcome.NOT_SENT, SECRET))
                .isUnreadable(SCOPE + "/outcome", "where the protocol writes none");
    }

    @Test
    void twoArmedRecords_orOneTheProtocolNeverWrites_areUnreadable() {
        Row.armedNow().children("latch", Layout.ARMED, LEGACY_ARMED)
                .isUnreadable(SCOPE, "more than one armed record");
        Row.armedNow().children("latch", "armed-by-hand").isUnreadable(SCOPE + "/armed-by-hand", "never writes");
    }

    @Test
    void reconciliationWithItsMarker_readsSentVerified_onTheReconciliation() {
        // Given the operator's multi: the marker written as the outcome (zxid 21) and reconciled-0 created (zxid 21)
        ScopeView view = Row.armedNow().outcome(new Records.ReconciledMarker(0), 1).reconciled(21).judged();

        // Then sent_verified, resting on the reconciliation record
        assertThat(view.state()).isEqualTo(ScopeState.SENT_VERIFIED);
        assertThat(view.evidence("stop").path()).isEqualTo(KEY + "/authorizations/reconciled-0");
        assertThat(view.evidence("stop").detail()).contains("reconciled sent_verified by alice");
    }

    @Test
    void reconciliationMarker_notWrittenWithItsReconciliation_isUnreadable() {
        // another scope's marker, a marker written in another transaction, a marker with no reconciliation
        Row.armedNow().outcome(new Records.ReconciledMarker(1), 1).reconciled(21)
                .isUnreadable(SCOPE + "/armed/outcome", "a reconciliation marker not written with");
        Row.armedNow().outcome(new Records.ReconciledMarker(0), 1).reconciled(22)
                .isUnreadable(SCOPE + "/armed/outcome", "a reconciliation marker not written with");
        Row.armedNow().outcome(new Records.ReconciledMarker(0), 1)
                .isUnreadable(SCOPE + "/armed/outcome", "a reconciliation marker without its reconciliation record");
    }

    @Test
    void reconciliationBesideTheExecutorsOutcome_unknownReadsSentVerified_notSentIsUnreadable() {
        assertThat(Row.armedNow().outcome(outcome(Outcome.SEND_STATUS_UNKNOWN, SECRET), 1).reconciled(30).judged()
                .state()).isEqualTo(ScopeState.SENT_VERIFIED);
        Row.armedNow().outcome(outcome(Outcome.NOT_SENT, SECRET), 1).reconciled(30)
                .isUnreadable(KEY + "/authorizations/reconciled-0", "but its executor proved not_sent");
    }

    @Test
    void scopeNeverArmed_withAnOutcomeOrAReconciliation_isUnreadable_andOtherwiseOpenOrLeased() {
        Row open = Row.armedNow().data(OPEN).children("latch").armed(null);
        assertThat(open.judged().state()).isEqualTo(ScopeState.OPEN);
        assertThat(open.data(leasedBy(ATTEMPT, false)).judged().state()).isEqualTo(ScopeState.LEASED);
        open.legacyOutcome(outcome(Outcome.NOT_SENT, null)).isUnreadable(SCOPE + "/outcome", "never armed");
        open.reconciled(30).isUnreadable(KEY + "/authorizations/reconciled-0", "a reconciliation of a scope never armed");
    }

    /**
     * A deleteall of the namespace deletes the deepest znodes first: {@code armed/outcome}, then {@code armed},
     * while the scope above them still holds the data its arming wrote. Read as open, a delivered scope would
     * be delivered again by the next contender (the simulator's seed 180, SimulationRegressionTest).
     */
    @Test
    void scopeWhoseArmingFlagOutlivedItsArmedRecord_isUnreadable_notOpen() {
        Row armedRecordDeleted = Row.armedNow().children("latch").armed(null);
        armedRecordDeleted.isUnreadable(SCOPE + "/armed", "the scope's data says it was armed, but it has no armed record");
        armedRecordDeleted.children(new String[0]).isUnreadable(SCOPE + "/armed", "has no armed record");
        // the flag written by hand on a scope never armed: readers stop (a stop is the worst a worker credential may cause)
        Row.armedNow().data(leasedBy(ATTEMPT, true)).children(new String[0]).armed(null)
                .isUnreadable(SCOPE + "/armed", "has no armed record");
    }

    private static Custody.Facts withoutOutcomeZnode(Custody.Facts f) {
        return new Custody.Facts(f.scope(), f.path(), f.data(), f.stat(), f.children(), f.armed(), f.armedStat(), null,
                null, null, null, null, null);
    }

    // ---- schemas 2 and 3: armed-<attempt>, and an outcome without a secret --------------

    @Test
    void legacyArmedRecord_namedAfterTheHolder_readsArmed() {
        // Given a schema 3 scope: armed flag, holder ATTEMPT, armed-ATTEMPT beside it, no outcome yet
        ScopeView view = Row.legacyArmed().judged();

        // Then armed (consumed), resting on armed-ATTEMPT
        assertThat(view.state()).isEqualTo(ScopeState.ARMED);
        assertThat(view.armedName()).isEqualTo(LEGACY_ARMED);
        assertThat(view.evidence("stop").path()).isEqualTo(SCOPE + "/" + LEGACY_ARMED);
    }

    @Test
    void legacyArmedName_notTheHoldersOrWithoutTheArmedFlagOrScopeData_isUnreadable() {
        String path = SCOPE + "/" + LEGACY_ARMED;
        // another attempt holds the lease
        Row.legacyArmed().data(leasedBy("0000000000000000", true)).isUnreadable(path, "never writes");
        // the scope's data does not say armed
        Row.legacyArmed().data(leasedBy(ATTEMPT, false)).isUnreadable(path, "never writes");
        // armed, but no holder to name the record after
        Row.legacyArmed().data(new Records.Scope("initial", AT, null, true, false)).isUnreadable(path, "never writes");
        // the scope's data could not be decoded (an operator's reading goes on with null)
        assertThatThrownBy(() -> Custody.armedChild(SCOPE, null, List.of(LEGACY_ARMED)))
                .isInstanceOf(UnreadableRecordException.class).hasMessageContaining("never writes");
    }

    @Test
    void legacyNotSent_isBelievedOnlyWithoutRoles() {
        Row notSent = Row.legacyArmed().legacyOutcome(outcome(Outcome.NOT_SENT, null));

        // Without roles, any client could have rewritten anything: the legacy not_sent is believed
        ScopeView view = notSent.judged(true);
        assertThat(view.state()).isEqualTo(ScopeState.NOT_SENT);
        assertThat(view.evidence("stop").path()).isEqualTo(SCOPE + "/outcome");
        // With roles, it cannot be verified: an operator must establish what happened
        notSent.isUnreadable(SCOPE + "/outcome", "cannot be verified in a namespace with roles");
    }

    @Test
    void legacyNotSent_carryingASecret_isUnreadable_evenWithoutRoles() {
        // a schema 4 outcome beside an armed record that committed to nothing: not the protocol's writing
        Row notSent = Row.legacyArmed().legacyOutcome(outcome(Outcome.NOT_SENT, SECRET));
        assertThatThrownBy(() -> notSent.judged(true)).isInstanceOf(UnreadableRecordException.class)
                .hasMessageContaining("without a commitment");
    }

    @Test
    void legacyNotSent_judgedWithoutItsArmedRecord_isTheCallersBug() {
        // Given a legacy not_sent whose armed record the caller did not read (needsLegacyArmedRecord says to)
        Row notSent = Row.legacyArmed().armed(null).legacyOutcome(outcome(Outcome.NOT_SENT, null));

        assertThatThrownBy(() -> notSent.judged(true)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("without its armed record");
    }

    @Test
    void legacyDeliveredOrUnknown_readAsWritten_withRoles_andWithOrWithoutTheArmedRecord() {
        // Only a not_sent needs proof: the outcomes that stop contenders are taken as they are
        for (Records.ArmedData record : java.util.Arrays.asList(armedRecord(null), null)) {
            assertThat(Row.legacyArmed().armed(record).legacyOutcome(outcome(Outcome.SENT_VERIFIED, null)).judged()
                    .state()).isEqualTo(ScopeState.SENT_VERIFIED);
            assertThat(Row.legacyArmed().armed(record).legacyOutcome(outcome(Outcome.SEND_STATUS_UNKNOWN, null))
                    .judged().state()).isEqualTo(ScopeState.SEND_STATUS_UNKNOWN);
        }
    }

    @Test
    void needsLegacyArmedRecord_onlyForALegacyNameWhoseJudgementDependsOnIt() {
        Records.OutcomeData notSent = outcome(Outcome.NOT_SENT, null);
        Records.OutcomeData sent = outcome(Outcome.SENT_VERIFIED, null);
        // not armed, or schema 4 (always read with the scope): never
        assertThat(Custody.needsLegacyArmedRecord(null, null, true)).isFalse();
        assertThat(Custody.needsLegacyArmedRecord(Layout.ARMED, notSent, true)).isFalse();
        // legacy: without an outcome (its evidence), for a not_sent (its proof), or when an authorization names it
        assertThat(Custody.needsLegacyArmedRecord(LEGACY_ARMED, null, false)).isTrue();
        assertThat(Custody.needsLegacyArmedRecord(LEGACY_ARMED, notSent, false)).isTrue();
        assertThat(Custody.needsLegacyArmedRecord(LEGACY_ARMED, sent, true)).isTrue();
        // but not for a delivered outcome nobody authorized after, nor for a reconciliation's marker
        assertThat(Custody.needsLegacyArmedRecord(LEGACY_ARMED, sent, false)).isFalse();
        assertThat(Custody.needsLegacyArmedRecord(LEGACY_ARMED, new Records.ReconciledMarker(0), false)).isFalse();
    }

    // ---- the chain of custody: how scope 1 was opened from scope 0, and whether a reader accepts it

    static final String NEXT = KEY + "/1";

    /** Scope 0 consumed as {@code state}: armed record at {@code armedZxid}, outcome written at zxid 20. */
    ScopeView previous(ScopeState state, String armedName, long armedZxid) {
        return new ScopeView(0, SCOPE, ARMED_BY_EXECUTOR, 3, 20, 5, armedName, null, armedZxid,
                null, 20, 1, null, state);
    }

    ScopeView next(long czxid) {
        return new ScopeView(1, NEXT, OPEN, 0, czxid, czxid, null, null, 0, null, 0, -1, null, ScopeState.OPEN);
    }

    AuthorizationView after(int n, long czxid) {
        return AuthorizationView.present(KEY + "/authorizations/after-" + n, n, stat(czxid, czxid, 0),
                new Records.Authorization("bob", "resend", null, null));
    }

    @Test
    void notSentInTheSameMulti_opens() {
        assertThat(Custody.opening(previous(ScopeState.NOT_SENT, Layout.ARMED, 10), next(20), null))
                .isEqualTo(Custody.Opening.NOT_SENT);
        // a not_sent written in another transaction than the next scope's creation opens nothing
        assertThat(Custody.opening(previous(ScopeState.NOT_SENT, Layout.ARMED, 10), next(21), null))
                .isEqualTo(Custody.Opening.NONE);
    }

    @Test
    void authorizationAfterTheArmingAndBeforeTheScope_opens() {
        assertThat(Custody.opening(previous(ScopeState.SEND_STATUS_UNKNOWN, Layout.ARMED, 10), next(30), after(0, 25)))
                .isEqualTo(Custody.Opening.AUTHORIZATION);
    }

    @Test
    void authorizationOnTheEdges_orForAnotherScope_orOfAScopeNotKnownArmed_opensNothing() {
        ScopeView unknown = previous(ScopeState.SEND_STATUS_UNKNOWN, Layout.ARMED, 10);
        // created in the arming's transaction, or in the next scope's: not strictly between them
        assertThat(Custody.opening(unknown, next(30), after(0, 10))).isEqualTo(Custody.Opening.NONE);
        assertThat(Custody.opening(unknown, next(30), after(0, 30))).isEqualTo(Custody.Opening.NONE);
        // before the arming, after the next scope
        assertThat(Custody.opening(unknown, next(30), after(0, 9))).isEqualTo(Custody.Opening.NONE);
        assertThat(Custody.opening(unknown, next(30), after(0, 31))).isEqualTo(Custody.Opening.NONE);
        // for another scope, absent, unreadable
        assertThat(Custody.opening(unknown, next(30), after(1, 25))).isEqualTo(Custody.Opening.NONE);
        assertThat(Custody.opening(unknown, next(30), AuthorizationView.absent(KEY + "/authorizations/after-0", 0)))
                .isEqualTo(Custody.Opening.NONE);
        assertThat(Custody.opening(unknown, next(30), AuthorizationView.unreadable(KEY + "/authorizations/after-0", 0,
                stat(25, 25, 0), "garbage"))).isEqualTo(Custody.Opening.NONE);
        // a scope never armed, or armed at an unknown zxid (its armed record not read)
        assertThat(Custody.opening(previous(ScopeState.SEND_STATUS_UNKNOWN, null, 10), next(30), after(0, 25)))
                .isEqualTo(Custody.Opening.NONE);
        assertThat(Custody.opening(previous(ScopeState.SEND_STATUS_UNKNOWN, LEGACY_ARMED, 0), next(30), after(0, 25)))
                .isEqualTo(Custody.Opening.NONE);
    }

    @Test
    void requireOpened_acceptsANotSentOrAnAuthorizationUnderOperatorOnlyAcls() {
        ScopeView unknown = previous(ScopeState.SEND_STATUS_UNKNOWN, Layout.ARMED, 10);
        Custody.requireOpened(unknown, next(30), Custody.Opening.NOT_SENT, "ignored for a not_sent");
        Custody.requireOpened(unknown, next(30), Custody.Opening.AUTHORIZATION, null);
    }

    @Test
    void requireOpened_refusesAnAuthorizationUnderAWeakAuthorizationsZnode_namingTheWeakness() {
        ScopeView unknown = previous(ScopeState.SEND_STATUS_UNKNOWN, Layout.ARMED, 10);

        assertThatThrownBy(() -> Custody.requireOpened(unknown, next(30), Custody.Opening.AUTHORIZATION,
                "world:anyone may create"))
                .isInstanceOf(UnreadableRecordException.class)
                .hasMessageContaining("only operators may create (world:anyone may create)")
                .satisfies(e -> assertThat(((UnreadableRecordException) e).path()).isEqualTo(NEXT));
    }

    @Test
    void requireOpened_refusesAScopeOpenedByNothing() {
        ScopeView unknown = previous(ScopeState.SEND_STATUS_UNKNOWN, Layout.ARMED, 10);

        assertThatThrownBy(() -> Custody.requireOpened(unknown, next(30), Custody.Opening.NONE, null))
                .isInstanceOf(UnreadableRecordException.class)
                .hasMessageContaining("scope 1 was opened neither by a not_sent outcome of scope 0")
                .hasMessageNotContaining("only operators may create");
    }

    // ---- the authorization rule on its own (AuthorizationView.honours) --------------------

    AuthorizationView after0(long czxid) {
        return AuthorizationView.present(KEY + "/authorizations/after-0", 0, stat(czxid, czxid, 0),
                new Records.Authorization("bob", "resend", null, null));
    }

    @Test
    void presentForThatConsumedScope_createdAfterItsArming_honoured() {
        ScopeView consumed = new ScopeView(0, SCOPE, ARMED_BY_EXECUTOR, 3, 20, 5, Layout.ARMED, null, 10, null, 20, 1,
                null, ScopeState.SEND_STATUS_UNKNOWN);

        assertThat(after0(11).honours(consumed)).isTrue();
        for (ScopeState consumedState : List.of(ScopeState.ARMED, ScopeState.SENT_VERIFIED)) {
            assertThat(after0(11).honours(0, consumedState, 10)).isTrue();
        }
    }

    @Test
    void createdAtOrBeforeTheArming_orArmingUnknown_notHonoured() {
        assertThat(after0(10).honours(0, ScopeState.SEND_STATUS_UNKNOWN, 10)).isFalse();
        assertThat(after0(9).honours(0, ScopeState.SEND_STATUS_UNKNOWN, 10)).isFalse();
        assertThat(after0(11).honours(0, ScopeState.SEND_STATUS_UNKNOWN, 0)).isFalse();
    }

    @Test
    void forAnotherScope_aScopeNotConsumed_orAbsentOrUnreadable_notHonoured() {
        assertThat(after0(11).honours(1, ScopeState.SEND_STATUS_UNKNOWN, 10)).isFalse();
        for (ScopeState open : List.of(ScopeState.OPEN, ScopeState.LEASED, ScopeState.NOT_SENT)) {
            assertThat(after0(11).honours(0, open, 10)).as(open.wireName()).isFalse();
        }
        assertThat(after0(11).honours(0, null, 10)).isFalse();
        assertThat(AuthorizationView.absent(KEY + "/authorizations/after-0", 0)
                .honours(0, ScopeState.SEND_STATUS_UNKNOWN, 10)).isFalse();
        AuthorizationView garbage = ScopeDecoder.authorization(KEY + "/authorizations/after-0", 0, stat(11, 11, 0),
                "{\"by\":\"bob\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertThat(garbage.presence()).isEqualTo(AuthorizationView.Presence.UNREADABLE);
        assertThat(garbage.problem()).contains("reason");
        assertThat(garbage.czxid()).isEqualTo(11);
        assertThat(garbage.honours(0, ScopeState.SEND_STATUS_UNKNOWN, 10)).isFalse();
    }
}
