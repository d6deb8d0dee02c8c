package dev.oncegate;

import java.util.Objects;

/**
 * One scope as a contender reads it: its znode data and stat, and its armed, outcome and
 * reconciliation records when present. Reads happen in the reverse order of the protocol's
 * writes (outcome, then the scope znode, whose {@code armed} flag is written in the same multi
 * as the armed znode), so a view never shows a later state without the earlier ones. Immutable.
 *
 * @param mzxid the zxid of the scope znode's last write; once armed, that is the arming multi's
 *              zxid (only a reconciliation writes the scope znode after arming), which dates the
 *              consumption
 */
record ScopeView(int scope, String path, Records.Scope data, int version, long mzxid,
                 KeyHistory.Armed armed, KeyHistory.OutcomeRecord outcome, KeyHistory.Reconciliation reconciliation) {

    ScopeView {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(data, "data");
    }

    ScopeState state() {
        if (data.reconciled()) {
            return ScopeState.SENT_VERIFIED;
        }
        if (outcome != null) {
            return switch (outcome.outcome()) {
                case SENT_VERIFIED -> ScopeState.SENT_VERIFIED;
                case SEND_STATUS_UNKNOWN -> ScopeState.SEND_STATUS_UNKNOWN;
                case NOT_SENT -> ScopeState.NOT_SENT;
            };
        }
        if (data.armed()) {
            return ScopeState.ARMED;
        }
        return data.lease() == null ? ScopeState.OPEN : ScopeState.LEASED;
    }

    /** The armed record's path: named by the attempt that armed (the holder the scope data names). */
    String armedPath() {
        if (!data.armed()) {
            throw new IllegalStateException("scope " + scope + " is not armed");
        }
        return Layout.armed(path, data.lease().holder().attempt());
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
            return new Evidence(Layout.outcome(path), scope, by.task(), by.host(), outcome.at(),
                    detail + ": outcome " + outcome.outcome().wireName() + " (" + outcome.detail() + ")");
        }
        if (armed != null) {
            Actor by = armed.by();
            return new Evidence(armedPath(), scope, by.task(), by.host(), armed.at(),
                    detail + ": armed with token " + armed.token() + ", no outcome recorded");
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
