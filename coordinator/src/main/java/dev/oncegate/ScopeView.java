package dev.oncegate;

import java.util.Objects;

/**
 * One scope as a reader judged it ({@link Custody#judge}): its znode data and stat, its armed
 * record's name (and the record, when it was read), its outcome and reconciliation, and the state
 * they prove. The state rests on immutable records only; the scope znode's data (the lease) only
 * says who holds an open scope. Immutable.
 *
 * @param mzxid       the zxid of the scope znode's last write
 * @param czxid       the zxid of its creation: its incarnation (it names the armed record)
 * @param armedName   its armed record's child name, or null when not armed
 * @param armed       the armed record, or null when not armed or not read
 * @param armedZxid   the armed record's creation zxid: when the scope was consumed (0 when not read)
 * @param outcome     the executor's outcome, or null (none, or an operator's reconciliation marker)
 * @param outcomeZxid the zxid of the outcome's write, whoever wrote it (0 when none)
 * @param outcomeVersion the outcome znode's version when it holds an outcome (-1 when none)
 * @param reconciliation an operator's reconciliation, or null
 * @param state       what the records prove
 */
record ScopeView(int scope, String path, Records.Scope data, int version, long mzxid, long czxid, String armedName,
                 KeyHistory.Armed armed, long armedZxid, KeyHistory.OutcomeRecord outcome, long outcomeZxid,
                 int outcomeVersion, KeyHistory.Reconciliation reconciliation, ScopeState state) {

    ScopeView {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(data, "data");
        Objects.requireNonNull(state, "state");
    }

    /**
     * A scope this contender just created (with its key) and has not read back: open, version 0.
     * Its zxids are unknown (0) until the lease write's stat tells them.
     */
    static ScopeView created(int scope, String path, Records.Scope data) {
        return new ScopeView(scope, path, data, 0, 0, 0, null, null, 0, null, 0, -1, null, ScopeState.OPEN);
    }

    /** The armed record's path. */
    String armedPath() {
        if (armedName == null) {
            throw new IllegalStateException("scope " + scope + " is not armed");
        }
        return path + "/" + armedName;
    }

    /** The record this view's state rests on, as evidence for a decision. */
    Evidence evidence(String detail) {
        if (reconciliation != null) {
            return new Evidence(Layout.reconciliation(Layout.keyOfScope(path), scope), scope, reconciliation.actor().task(), reconciliation.actor().host(),
                    reconciliation.at(), detail + ": reconciled sent_verified by " + reconciliation.by() + " ("
                    + reconciliation.evidence() + ")");
        }
        if (outcome != null) {
            Actor by = outcome.by();
            return new Evidence(Layout.ARMED.equals(armedName) ? Layout.outcome(path) : Layout.legacyOutcome(path), scope, by.task(), by.host(), outcome.at(),
                    detail + ": outcome " + outcome.outcome().wireName() + " (" + outcome.detail() + ")");
        }
        if (armed != null) {
            Actor by = armed.by();
            return new Evidence(armedPath(), scope, by.task(), by.host(), armed.at(),
                    detail + ": armed with token " + armed.token() + ", no outcome recorded");
        }
        if (armedName != null) {
            return new Evidence(armedPath(), scope, null, null, data.at(), detail + ": armed");
        }
        if (data.lease() != null) {
            Actor by = data.lease().holder();
            return new Evidence(path, scope, by.task(), by.host(), data.at(),
                    detail + ": lease held by attempt " + by.attempt() + " (pid " + by.pid()
                            + ") until " + data.lease().expires());
        }
        return new Evidence(path, scope, null, null, data.at(), detail + ": scope open (" + data.opened() + ")");
    }
}
