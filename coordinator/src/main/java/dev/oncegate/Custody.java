package dev.oncegate;

import java.util.ArrayList;
import java.util.List;

import org.apache.zookeeper.data.Stat;

/**
 * What a scope's records prove, judged by every reader alike (a contender deciding, an operator
 * inspecting, retention choosing): the scope's state, from its immutable records only, and
 * whether it was legitimately opened (its chain of custody). Pure: no ZooKeeper, no clock.
 *
 * <h2>The threat it answers</h2>
 * With roles on, every worker host holds the worker credential, which may create znodes under a
 * key and under its scopes (with any ACL it likes) and write a scope znode's data (the lease). So
 * nothing a worker can write or remove decides safety here:
 * <ul>
 *   <li><b>Armed</b> is the existence of the scope's armed record {@code KEY/n/armed}, created once
 *       by the arming multi together with its child {@code armed/outcome}, never a flag in the
 *       scope's data. The create is the barrier only one arming can pass (a second one, or one after
 *       a forged armed record, meets NodeExists). The arming executor gives both its role ACLs, and
 *       a znode with a child cannot be removed: whoever created the scope above them, nobody but the
 *       admin can ever remove them. Any other {@code armed*} child is unreadable. (Records older
 *       than schema 4 named the armed record {@code armed-<attempt>} after the holder in the scope's
 *       data, with the outcome beside it; such a record still reads as armed, that is consumed.)</li>
 *   <li><b>An outcome</b> is the write of {@code armed/outcome} (version 0 → 1; a {@code not_sent}
 *       written again is unreadable, whereas an admin may restore a damaged {@code sent_verified} or
 *       {@code send_status_unknown}, which only ever stop contenders). {@code not_sent} — the one outcome that lets a
 *       contender deliver afterwards — counts only when it reveals the secret the armed record
 *       committed to ({@link Records.ExecutorOutcome#opens}): only the executor that armed knows
 *       it. An outcome that does not is unreadable. (A {@code not_sent} of schema 3 or older carries
 *       no secret: trusted only in a namespace without roles, where any client may rewrite anything.)</li>
 *   <li><b>A reconciliation</b> is {@code KEY/authorizations/reconciled-n}, which only operators
 *       may create; the {@code sent_verified} marker it writes as the scope's outcome counts only
 *       beside it, written in the same multi.</li>
 *   <li><b>Scope n &gt; 0</b> is valid only if scope n−1 has a valid {@code not_sent} outcome written
 *       in the same multi that created scope n, or an authorization {@code after-(n−1)} created after
 *       scope n−1 was armed and before scope n, under an {@code authorizations} znode where only
 *       operators may create ({@link #requireOpened}). Anything else is unreadable.</li>
 * </ul>
 * So a forged record makes readers stop ({@code unreadable_record}, or a consumed key), never
 * deliver: the worst the credential can do to other contenders is stop them.
 *
 * <p>Stateless; thread-safe.
 */
final class Custody {

    private Custody() {
    }

    /**
     * The child of the scope that is its armed record ({@link Layout#ARMED}, or before schema 4
     * {@code armed-<attempt>} of the holder the scope's data names), or null when it is not armed.
     *
     * @throws UnreadableRecordException when there are several, or one the protocol never writes
     */
    static String armedChild(String scopePath, Records.Scope data, List<String> children) {
        List<String> arms = new ArrayList<>();
        for (String child : children) {
            if (child.startsWith(Layout.ARMED)) {
                arms.add(child);
            }
        }
        if (arms.isEmpty()) {
            return null;
        }
        if (arms.size() > 1) {
            throw new UnreadableRecordException(scopePath, "more than one armed record " + arms
                    + " (two crossings, or one forged)");
        }
        String name = arms.get(0);
        boolean legacy = data != null && data.armed() && data.lease() != null
                && name.equals(Layout.ARMED_PREFIX + data.lease().holder().attempt());
        if (!name.equals(Layout.ARMED) && !legacy) {
            throw new UnreadableRecordException(scopePath + "/" + name, "an armed record the protocol never writes"
                    + " (its armed record is " + Layout.ARMED + ")");
        }
        return name;
    }

    /**
     * One scope's records as read, decoded, with each znode's stat.
     *
     * @param data               the scope znode's data (its lease; never trusted for safety)
     * @param stat               the scope znode's stat
     * @param children           the scope znode's children
     * @param armed              the armed record, or null when absent (or, before schema 4, not read)
     * @param armedStat          its stat, or null
     * @param outcome            {@code armed/outcome} decoded, or null when absent or not written yet (empty)
     * @param outcomeStat        its stat, or null when absent
     * @param legacyOutcome      {@code KEY/n/outcome} (where records before schema 4 kept it), or null
     * @param legacyOutcomeStat  its stat, or null
     * @param reconciliation     {@code authorizations/reconciled-n}, or null
     * @param reconciliationStat its stat, or null
     */
    record Facts(int scope, String path, Records.Scope data, Stat stat, List<String> children,
                 Records.ArmedData armed, Stat armedStat, Records.OutcomeData outcome, Stat outcomeStat,
                 Records.OutcomeData legacyOutcome, Stat legacyOutcomeStat, KeyHistory.Reconciliation reconciliation,
                 Stat reconciliationStat) {
    }

    /**
     * The scope's state from its records, as a view.
     *
     * @param legacyTrusted whether a {@code not_sent} without a commitment (schema 3 or older) is
     *                      believed: only in a namespace without roles
     * @throws UnreadableRecordException when the records contradict each other or the protocol
     * @throws IllegalStateException     when a {@code not_sent} of an armed record before schema 4 is
     *                                   judged without that record (its caller must read it)
     */
    static ScopeView judge(Facts r, boolean legacyTrusted) {
        String armedName = armedChild(r.path(), r.data(), r.children());
        String reconciliationPath = Layout.reconciliation(Layout.keyOfScope(r.path()), r.scope());
        Records.OutcomeData outcome;
        Stat outcomeStat;
        String outcomePath;
        if (Layout.ARMED.equals(armedName)) {
            outcomePath = Layout.outcome(r.path());
            if (r.armed() == null) {
                throw new UnreadableRecordException(Layout.armed(r.path()), "the scope lists its armed record but it"
                        + " cannot be read (removed by an admin?)");
            }
            if (r.armed().commitment() == null) {
                throw new UnreadableRecordException(Layout.armed(r.path()), "an armed record without a commitment");
            }
            if (r.outcomeStat() == null) {
                throw new UnreadableRecordException(outcomePath, "the armed record has lost its outcome znode");
            }
            if (r.legacyOutcome() != null) {
                throw new UnreadableRecordException(Layout.legacyOutcome(r.path()), "an outcome beside the armed record,"
                        + " where the protocol writes none");
            }
            int writes = r.outcomeStat().getVersion();
            if (writes >= 1 && r.outcome() == null || writes == 0 && r.outcome() != null) {
                throw new UnreadableRecordException(outcomePath, "the outcome znode's content and its version (" + writes
                        + " writes) disagree");
            }
            if (writes > 1 && r.outcome() instanceof Records.ExecutorOutcome e && e.outcome().outcome() == Outcome.NOT_SENT) {
                throw new UnreadableRecordException(outcomePath, "a not_sent outcome written " + writes + " times: only"
                        + " the executor's one write proves anything (rewritten with the worker credential?)");
            }
            outcome = r.outcome();
            outcomeStat = r.outcomeStat();
        } else {
            outcomePath = Layout.legacyOutcome(r.path());
            outcome = r.legacyOutcome();
            outcomeStat = r.legacyOutcomeStat();
        }
        KeyHistory.OutcomeRecord executorOutcome = outcome instanceof Records.ExecutorOutcome e ? e.outcome() : null;
        ScopeState state;
        if (armedName == null) {
            if (r.outcome() != null || r.legacyOutcome() != null) {
                throw new UnreadableRecordException(outcomePath, "an outcome on a scope never armed (it has no armed record)");
            }
            if (r.reconciliation() != null) {
                throw new UnreadableRecordException(reconciliationPath, "a reconciliation of a scope never armed");
            }
            if (r.data().armed()) {
                // The arming multi wrote this flag with the armed record; the flag alone never says armed (a
                // worker may write it), but with the record gone it says the record was deleted: by an admin, or
                // by a deleteall of the namespace under way (it deletes the deepest znodes first). Open it would
                // deliver again in a scope that may have been delivered: stop instead.
                throw new UnreadableRecordException(Layout.armed(r.path()), "the scope's data says it was armed, but it"
                        + " has no armed record (deleted by an admin, or the namespace is being deleted)");
            }
            state = r.data().lease() == null ? ScopeState.OPEN : ScopeState.LEASED;
        } else if (r.reconciliation() != null) {
            if (outcome instanceof Records.ReconciledMarker marker
                    && (marker.scope() != r.scope() || outcomeStat.getMzxid() != r.reconciliationStat().getCzxid())) {
                throw new UnreadableRecordException(outcomePath, "a reconciliation marker not written with "
                        + reconciliationPath);
            }
            if (executorOutcome != null && executorOutcome.outcome() == Outcome.NOT_SENT) {
                throw new UnreadableRecordException(reconciliationPath, "reconciled as delivered, but its executor"
                        + " proved not_sent (a reconciliation that raced the outcome, before oncegate refused that)");
            }
            state = ScopeState.SENT_VERIFIED;
        } else if (outcome == null) {
            state = ScopeState.ARMED;
        } else if (outcome instanceof Records.ReconciledMarker) {
            throw new UnreadableRecordException(outcomePath, "a reconciliation marker without its reconciliation record "
                    + reconciliationPath);
        } else {
            Records.ExecutorOutcome e = (Records.ExecutorOutcome) outcome;
            if (e.outcome().outcome() == Outcome.NOT_SENT) {
                if (r.armed() == null) {
                    throw new IllegalStateException("a not_sent outcome is judged without its armed record: " + outcomePath);
                }
                checkNotSent(outcomePath, e, r.armed(), legacyTrusted);
            } else if (r.armed() != null && r.armed().commitment() != null && !e.opens(r.armed())) {
                throw new UnreadableRecordException(outcomePath, "an outcome that does not reveal the secret its armed"
                        + " record committed to: not written by the executor that armed");
            }
            state = switch (e.outcome().outcome()) {
                case SENT_VERIFIED -> ScopeState.SENT_VERIFIED;
                case SEND_STATUS_UNKNOWN -> ScopeState.SEND_STATUS_UNKNOWN;
                case NOT_SENT -> ScopeState.NOT_SENT;
            };
        }
        return new ScopeView(r.scope(), r.path(), r.data(), r.stat().getVersion(), r.stat().getMzxid(),
                r.stat().getCzxid(), armedName, r.armed() == null ? null : r.armed().armed(),
                r.armedStat() == null ? 0 : r.armedStat().getCzxid(), executorOutcome,
                outcome == null ? 0 : outcomeStat.getMzxid(), outcome == null ? -1 : outcomeStat.getVersion(),
                r.reconciliation(), state);
    }

    /**
     * Whether judging a scope armed before schema 4 ({@code armed-<attempt>}) needs that record's
     * content (its name alone says armed): for a {@code not_sent}, or when an authorization names the
     * scope. (A schema 4 armed record is always read with the scope: its path is fixed.)
     */
    static boolean needsLegacyArmedRecord(String armedName, Records.OutcomeData legacyOutcome, boolean authorizationPresent) {
        return armedName != null && !Layout.ARMED.equals(armedName) && (legacyOutcome == null || authorizationPresent
                || legacyOutcome instanceof Records.ExecutorOutcome e && e.outcome().outcome() == Outcome.NOT_SENT);
    }

    private static void checkNotSent(String outcomePath, Records.ExecutorOutcome e, Records.ArmedData armed,
                                     boolean legacyTrusted) {
        if (armed.commitment() != null) {
            if (!e.opens(armed)) {
                throw new UnreadableRecordException(outcomePath, "a not_sent outcome that does not reveal the secret its"
                        + " armed record committed to: not written by the executor that armed, so it proves nothing");
            }
        } else if (e.secret() != null || !legacyTrusted) {
            throw new UnreadableRecordException(outcomePath, "a not_sent outcome of an armed record without a commitment"
                    + " (written before schema 4) cannot be verified in a namespace with roles: an operator must"
                    + " establish what happened (see the runbook, 'A corrupt record')");
        }
    }

    /** How a scope n &gt; 0 was opened, as its records prove. */
    enum Opening {
        /** By scope n−1's {@code not_sent} outcome, created in the same multi. */
        NOT_SENT,
        /** By an authorization {@code after-(n−1)} created after scope n−1 was armed and before scope n. */
        AUTHORIZATION,
        /** By nothing the protocol knows: created by hand, or the history is incomplete. */
        NONE
    }

    /**
     * How scope {@code next} (= {@code previous} + 1) was opened: by {@code previous}'s valid
     * {@code not_sent} outcome in the same multi (the outcome's write is {@code next}'s creation), or by the
     * authorization {@code after-previous}, created after {@code previous} was armed and before
     * {@code next}. (Whether only operators could create that authorization is the ACL of
     * {@code KEY/authorizations}, checked by the caller: {@link #requireOpened}.)
     *
     * @param authorization {@code after-previous} as read
     */
    static Opening opening(ScopeView previous, ScopeView next, AuthorizationView authorization) {
        if (previous.state() == ScopeState.NOT_SENT && previous.outcomeZxid() == next.czxid()) {
            return Opening.NOT_SENT;
        }
        boolean authorized = authorization != null && authorization.presence() == AuthorizationView.Presence.PRESENT
                && authorization.after() == previous.scope() && previous.armedName() != null && previous.armedZxid() > 0
                && authorization.czxid() > previous.armedZxid() && authorization.czxid() < next.czxid();
        return authorized ? Opening.AUTHORIZATION : Opening.NONE;
    }

    /**
     * Checks that {@code next} was legitimately opened.
     *
     * @param weakness for an {@link Opening#AUTHORIZATION}, why {@code KEY/authorizations} lets
     *                 someone other than an operator create there, or null when it does not (or roles are off)
     * @throws UnreadableRecordException when it was not
     */
    static void requireOpened(ScopeView previous, ScopeView next, Opening opening, String weakness) {
        if (opening == Opening.NOT_SENT || opening == Opening.AUTHORIZATION && weakness == null) {
            return;
        }
        throw new UnreadableRecordException(next.path(), "scope " + next.scope() + " was opened neither by a not_sent"
                + " outcome of scope " + previous.scope() + " (created with it) nor by an authorization after-"
                + previous.scope() + " made after that scope was armed"
                + (opening == Opening.AUTHORIZATION ? " under an authorizations znode where only operators may create ("
                + weakness + ")" : "") + ": it was created by hand, or the key's history is incomplete; nothing may be"
                + " delivered in it");
    }
}
