package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;

import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;

/**
 * The contention rules on their own: no ZooKeeper, no threads, a clock that is just an
 * {@link Instant} the test moves. Each test is one situation and the step it must give.
 */
class ContentionRulesTest {

    static final Duration TTL = Duration.ofSeconds(10);
    static final Instant T0 = Instant.parse("2026-11-30T12:00:00Z");
    static final String NODE = "/ns/keys/ab/cd/k/0/latch/_c_x-latch-0000000001";
    static final Actor HOLDER = new Actor("task-a", "host-a", 1, "1f", "a1b2c3d4e5f60718");

    // ---- scopes -------------------------------------------------------------------------------

    static ScopeView open(int version) {
        return view(0, new Records.Scope("initial", T0, null, false, false), version, 100, null);
    }

    static ScopeView leased(int version, Instant expires) {
        KeyHistory.Lease lease = new KeyHistory.Lease(HOLDER, "/ns/keys/ab/cd/k/0/latch/_c_h-latch-0000000000", expires, null);
        return view(0, new Records.Scope("initial", T0, lease, false, false), version, 100, null);
    }

    static ScopeView armed(long mzxid) {
        KeyHistory.Lease lease = new KeyHistory.Lease(HOLDER, NODE, T0.plus(TTL), null);
        return view(0, new Records.Scope("initial", T0, lease, true, false), 2, mzxid, null);
    }

    static ScopeView withOutcome(Outcome outcome, long mzxid) {
        KeyHistory.Lease lease = new KeyHistory.Lease(HOLDER, NODE, T0.plus(TTL), null);
        KeyHistory.OutcomeRecord record = new KeyHistory.OutcomeRecord(outcome, "receipt", HOLDER, new FencingToken(1, 90), T0);
        return view(0, new Records.Scope("initial", T0, lease, true, false), 2, mzxid, record);
    }

    /** A scope as a reader judges it: armed when {@code data} says so (then armed at {@code mzxid}), decided by {@code outcome}. */
    static ScopeView view(int n, Records.Scope data, int version, long mzxid, KeyHistory.OutcomeRecord outcome) {
        ScopeState state = outcome != null ? switch (outcome.outcome()) {
            case SENT_VERIFIED -> ScopeState.SENT_VERIFIED;
            case SEND_STATUS_UNKNOWN -> ScopeState.SEND_STATUS_UNKNOWN;
            case NOT_SENT -> ScopeState.NOT_SENT;
        } : data.armed() ? ScopeState.ARMED : data.lease() == null ? ScopeState.OPEN : ScopeState.LEASED;
        boolean armed = data.armed() || outcome != null;
        return new ScopeView(n, "/ns/keys/ab/cd/k/" + n, data, version, mzxid, 1, armed ? "armed-1" : null, null,
                armed ? mzxid : 0, outcome, outcome != null ? mzxid + 1 : 0, outcome != null ? 1 : -1, null, state);
    }

    static AuthorizationView authorization(long czxid) {
        Stat stat = new Stat();
        stat.setCzxid(czxid);
        return AuthorizationView.present("/ns/keys/ab/cd/k/authorizations/after-0", 0, stat,
                new Records.Authorization("alice", "resend", null, null));
    }

    // ---- situations ---------------------------------------------------------------------------

    record Given(ScopeView view, AuthorizationView auth, ContentionRules.Election election,
                 ContentionRules.Observations seen, Boolean holder, Instant now, Duration waitFor, boolean own) {

        static Given scope(ScopeView view) {
            return new Given(view, null, ContentionRules.Election.NONE, ContentionRules.Observations.NONE.observe(view, false, T0),
                    null, T0, Duration.ZERO, false);
        }

        Given authorized(AuthorizationView a) {
            return new Given(view, a, election, seen, holder, now, waitFor, own);
        }

        Given joined(boolean leader) {
            return new Given(view, auth, new ContentionRules.Election(true, leader, NODE), seen, holder, now, waitFor, own);
        }

        Given joinedWithoutNodeSince(Instant since) {
            ContentionRules.Observations o = ContentionRules.Observations.NONE.observe(view, true, since);
            return new Given(view, auth, new ContentionRules.Election(true, false, null), o, holder, now, waitFor, own);
        }

        Given holderPresent(boolean present) {
            return new Given(view, auth, election, seen, present, now, waitFor, own);
        }

        Given waiting(Duration w) {
            return new Given(view, auth, election, seen, holder, now, w, own);
        }

        Given at(Instant t) {
            return new Given(view, auth, election, seen, holder, t, waitFor, own);
        }

        /** This contender created (or opened) the scope itself. */
        Given ownScope() {
            return new Given(view, auth, election, seen, holder, now, waitFor, true);
        }

        ContentionRules.Step step() {
            return ContentionRules.next(new ContentionRules.Situation(view, auth, election, seen, holder, now,
                    T0.plus(waitFor), !waitFor.isZero(), TTL, own));
        }
    }

    static Decision.Stop stopOf(ContentionRules.Step step) {
        assertThat(step).isInstanceOf(ContentionRules.Stop.class);
        return ((ContentionRules.Stop) step).stop();
    }

    // ---- consumed scopes and authorizations -----------------------------------------------------

    @Test
    void notSent_advancesToTheNextScope() {
        assertThat(Given.scope(withOutcome(Outcome.NOT_SENT, 100)).step()).isInstanceOf(ContentionRules.Advance.class);
    }

    @Test
    void sentVerified_withoutAuthorization_stopsSent() {
        Decision.Stop stop = stopOf(Given.scope(withOutcome(Outcome.SENT_VERIFIED, 100)).step());
        assertThat(stop).isInstanceOf(Decision.StopSent.class);
        assertThat(stop.reason()).isEqualTo(StopReason.SENT_VERIFIED);
    }

    @Test
    void consumed_authorizationCreatedAfterArming_opensTheNextScope() {
        ContentionRules.Step step = Given.scope(withOutcome(Outcome.SEND_STATUS_UNKNOWN, 100)).authorized(authorization(101)).step();
        assertThat(step).isInstanceOfSatisfying(ContentionRules.OpenAuthorized.class,
                o -> assertThat(o.authorization().after()).isZero());
    }

    @Test
    void consumed_authorizationCreatedBeforeArming_isNeverHonoured() {
        Decision.Stop stop = stopOf(Given.scope(withOutcome(Outcome.SENT_VERIFIED, 100)).authorized(authorization(99)).step());
        assertThat(stop).isInstanceOf(Decision.StopSent.class);
    }

    @Test
    void consumed_unreadableAuthorization_failsClosed() {
        Stat stat = new Stat();
        stat.setCzxid(200);
        AuthorizationView broken = AuthorizationView.unreadable("/ns/keys/ab/cd/k/authorizations/after-0", 0, stat, "not JSON");
        Decision.Stop stop = stopOf(Given.scope(withOutcome(Outcome.SENT_VERIFIED, 100)).authorized(broken).step());
        assertThat(stop).isInstanceOf(Decision.StopUnavailable.class);
        assertThat(stop.reason()).isEqualTo(StopReason.UNREADABLE_RECORD);
        assertThat(stop.evidence().path()).endsWith("/authorizations/after-0");
    }

    @Test
    void armed_waiting_waitsForTheOutcome_elseStopsUnknown() {
        Given armed = Given.scope(armed(100));
        assertThat(armed.waiting(Duration.ofSeconds(5)).step()).isEqualTo(new ContentionRules.Wait(T0.plusSeconds(5)));
        Decision.Stop stop = stopOf(armed.step());
        assertThat(stop.reason()).isEqualTo(StopReason.ARMED_WITHOUT_OUTCOME);
    }

    @Test
    void armed_withAnAuthorizationAfterArming_opensTheNextScope() {
        assertThat(Given.scope(armed(100)).authorized(authorization(150)).waiting(Duration.ofSeconds(5)).step())
                .isInstanceOf(ContentionRules.OpenAuthorized.class);
    }

    // ---- open and leased scopes -------------------------------------------------------------------

    @Test
    void notJoined_onItsOwnScope_joinsTheElection() {
        assertThat(Given.scope(open(0)).ownScope().step()).isInstanceOf(ContentionRules.Join.class);
    }

    @Test
    void notJoined_onAScopeAnotherJustCreated_watchesForTheGrace_thenJoins() {
        Given g = Given.scope(open(0)).waiting(Duration.ofSeconds(30));
        assertThat(g.step()).isEqualTo(new ContentionRules.Wait(T0.plus(ContentionRules.ELECTION_NODE_GRACE)));
        assertThat(g.at(T0.plus(ContentionRules.ELECTION_NODE_GRACE)).step()).isInstanceOf(ContentionRules.Join.class);
    }

    @Test
    void notJoined_onAnOpenScopeNobodyIsJoining_joinsAtOnce() {
        // Written since it was created (a released lease), or opened by a not_sent outcome: no creator is joining.
        assertThat(Given.scope(open(2)).waiting(Duration.ofSeconds(30)).step()).isInstanceOf(ContentionRules.Join.class);
        ScopeView afterNotSent = view(1, new Records.Scope("not_sent:0", T0, null, false, false), 0, 100, null);
        assertThat(Given.scope(afterNotSent).waiting(Duration.ofSeconds(30)).step()).isInstanceOf(ContentionRules.Join.class);
    }

    @Test
    void notJoined_onALiveLease_looksUpTheHolder_waitsOutside_andJoinsWhenItsNodeIsGone() {
        Given g = Given.scope(leased(1, T0.plus(TTL))).waiting(Duration.ofSeconds(30));
        assertThat(g.step()).isEqualTo(new ContentionRules.CheckHolder("/ns/keys/ab/cd/k/0/latch/_c_h-latch-0000000000"));
        assertThat(g.holderPresent(true).step()).isEqualTo(new ContentionRules.Wait(T0.plus(TTL)));
        assertThat(g.holderPresent(false).step()).isInstanceOf(ContentionRules.Join.class);
    }

    @Test
    void notJoined_onALapsedOrUnrenewedLease_joinsToTakeItOver() {
        assertThat(Given.scope(leased(1, T0.minusMillis(1))).waiting(Duration.ofSeconds(30)).step())
                .isInstanceOf(ContentionRules.Join.class);
        Given fastClock = Given.scope(leased(1, T0.plus(Duration.ofHours(1)))).waiting(Duration.ofMinutes(5));
        assertThat(fastClock.at(T0.plus(TTL)).step()).isInstanceOf(ContentionRules.Join.class);
    }

    @Test
    void leasedAndNotWaiting_stopsBusyWithoutJoining() {
        Decision.Stop stop = stopOf(Given.scope(leased(1, T0.plus(TTL))).step());
        assertThat(stop).isInstanceOf(Decision.StopBusy.class);
        assertThat(stop.reason()).isEqualTo(StopReason.EXECUTOR_ACTIVE);
    }

    @Test
    void openAndLeader_takesTheLeaseWithItsElectionNode() {
        assertThat(Given.scope(open(0)).joined(true).step()).isEqualTo(new ContentionRules.TakeLease(null, NODE));
    }

    @Test
    void openAndNotLeader_waitsOneTtl_thenTakesTheStalledScope_thenGivesUpAfterTwo() {
        Given follower = Given.scope(open(0)).joined(false);
        assertThat(follower.step()).isEqualTo(new ContentionRules.Wait(T0.plus(TTL)));
        assertThat(follower.at(T0.plus(TTL)).step())
                .isEqualTo(new ContentionRules.TakeLease(ContentionRules.STALLED_ELECTION, NODE));
    }

    @Test
    void openForTwoTtls_withoutAnElectionNode_stopsBusyWaitExpired() {
        Given follower = Given.scope(open(0)).joined(false);
        ContentionRules.Situation late = new ContentionRules.Situation(follower.view(), null,
                new ContentionRules.Election(true, false, null), follower.seen(), null, T0.plus(TTL.multipliedBy(2)),
                T0, false, TTL, false);
        Decision.Stop stop = stopOf(ContentionRules.next(late));
        assertThat(stop.reason()).isEqualTo(StopReason.WAIT_EXPIRED);
    }

    @Test
    void leaseLapsedByItsExpiry_anyContenderTakesItOver() {
        Given g = Given.scope(leased(1, T0.minusMillis(1))).joined(false).waiting(Duration.ofSeconds(30));
        assertThat(g.step()).isEqualTo(new ContentionRules.TakeLease(ContentionRules.LAPSED, NODE));
    }

    @Test
    void lapsedLease_notWaiting_justJoined_waitsForItsElectionNodeInsteadOfGivingUp() {
        Given g = Given.scope(leased(1, T0.minusMillis(1)));
        assertThat(g.step()).isInstanceOf(ContentionRules.Join.class);
        ContentionRules.Situation joined = new ContentionRules.Situation(g.view(), null,
                new ContentionRules.Election(true, false, null), g.seen(), null, T0, T0, false, TTL, false);
        assertThat(ContentionRules.next(joined)).isEqualTo(new ContentionRules.Wait(T0.plus(ContentionRules.NODE_POLL)));
    }

    @Test
    void holderWithAFastClock_unchangedForATtlOnOurClock_isTakenOver() {
        // The holder's clock runs an hour ahead: its lease "expires" an hour from now.
        Given g = Given.scope(leased(1, T0.plus(Duration.ofHours(1)).plus(TTL))).joined(false).waiting(Duration.ofMinutes(5));
        assertThat(g.step()).isEqualTo(new ContentionRules.Wait(T0.plus(TTL)));
        assertThat(g.at(T0.plus(TTL)).step()).isEqualTo(new ContentionRules.TakeLease(ContentionRules.UNRENEWED, NODE));
    }

    @Test
    void renewedLease_restartsTheContendersOwnClock() {
        ContentionRules.Observations first = ContentionRules.Observations.NONE.observe(leased(1, T0.plus(TTL)), false, T0);
        ContentionRules.Observations renewed = first.observe(leased(2, T0.plus(TTL)), false, T0.plusSeconds(9));
        assertThat(renewed.since()).isEqualTo(T0.plusSeconds(9));
        assertThat(renewed.observe(leased(2, T0.plus(TTL)), false, T0.plusSeconds(12)).since()).isEqualTo(T0.plusSeconds(9));
    }

    @Test
    void leaderOnALiveLease_looksUpTheHolder_andTakesOverOnlyWhenItsElectionNodeIsGone() {
        Given leader = Given.scope(leased(1, T0.plus(TTL))).joined(true).waiting(Duration.ofSeconds(30));
        assertThat(leader.step()).isInstanceOf(ContentionRules.CheckHolder.class);
        assertThat(leader.holderPresent(false).step()).isEqualTo(new ContentionRules.TakeLease(ContentionRules.ABANDONED, NODE));
        assertThat(leader.holderPresent(true).step()).isEqualTo(new ContentionRules.Wait(T0.plus(TTL)));
    }

    @Test
    void leasedAndWaitRunsOut_stopsBusyWaitExpired() {
        Given g = Given.scope(leased(1, T0.plus(TTL))).joined(false).waiting(Duration.ofSeconds(1)).at(T0.plusSeconds(1));
        Decision.Stop stop = stopOf(g.step());
        assertThat(stop).isInstanceOf(Decision.StopBusy.class);
        assertThat(stop.reason()).isEqualTo(StopReason.WAIT_EXPIRED);
    }

    @Test
    void electedButOwnNodeNotKnownYet_pollsInsteadOfTakingTheLease() {
        Given g = Given.scope(open(0));
        ContentionRules.Situation s = new ContentionRules.Situation(g.view(), null, new ContentionRules.Election(true, true, null),
                g.seen(), null, T0, T0, false, TTL, false);
        assertThat(ContentionRules.next(s)).isEqualTo(new ContentionRules.Wait(T0.plus(ContentionRules.NODE_POLL)));
    }

    // ---- a missing election node ------------------------------------------------------------------

    @Test
    void electionNodeMissing_lessThanTheGrace_polls_thenAsksZooKeeper_neverStopsOnTimeAlone() {
        Given missing = Given.scope(open(0)).joinedWithoutNodeSince(T0);
        assertThat(missing.step()).isEqualTo(new ContentionRules.Wait(T0.plus(ContentionRules.NODE_POLL)));
        ContentionRules.Step later = missing.at(T0.plus(ContentionRules.ELECTION_NODE_GRACE)).step();
        assertThat(later).isInstanceOf(ContentionRules.ProbeElection.class);
        // Past the election window it gives up busy (a liveness bound), never "permission denied" by time alone.
        Decision.Stop stop = stopOf(missing.at(T0.plus(Duration.ofMinutes(10))).step());
        assertThat(stop).isInstanceOf(Decision.StopBusy.class);
        assertThat(stop.reason()).isEqualTo(StopReason.WAIT_EXPIRED);
    }

    @Test
    void electionNodeMissing_afterZooKeeperPermittedIt_getsAnotherGrace() {
        ContentionRules.Observations seen = ContentionRules.Observations.NONE.observe(open(0), true, T0)
                .permitted(T0.plus(ContentionRules.ELECTION_NODE_GRACE));
        assertThat(seen.nodeMissingSince()).isEqualTo(T0.plus(ContentionRules.ELECTION_NODE_GRACE));
        assertThat(seen.observe(open(0), false, T0.plusSeconds(3)).nodeMissingSince()).isNull();
    }
}
