package dev.oncegate;

/**
 * One scope as read from ZooKeeper: its znode data and stat, and its armed and outcome
 * records when present. Reads happen in the reverse order of the protocol's writes (outcome,
 * then the scope znode, whose {@code armed} flag is written in the same multi as the armed
 * znode), so a view never shows a later state without the earlier ones. Immutable.
 *
 * @param mzxid the zxid of the scope znode's last write; once armed, that is the arming multi's
 *              zxid (nothing writes the scope znode after arming), which dates the consumption
 */
record ScopeView(int scope, String path, Records.Scope data, int version, long mzxid,
                 Records.Armed armed, Records.OutcomeRecord outcome) {

    enum State {
        OPEN, LEASED, ARMED, SENT_VERIFIED, SEND_STATUS_UNKNOWN, NOT_SENT;

        /**
         * Whether no executor may cross this scope any more and nothing opens the next one by
         * itself: a verified or unknown outcome, or armed without an outcome (which reads as
         * unknown). Only an operator's authorization for this scope opens the next.
         */
        boolean consumed() {
            return this == ARMED || this == SENT_VERIFIED || this == SEND_STATUS_UNKNOWN;
        }

        /** The name used in JSON and by {@code oncegate list}. */
        String wireName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    State state() {
        if (outcome != null) {
            return switch (outcome.outcome()) {
                case SENT_VERIFIED -> State.SENT_VERIFIED;
                case SEND_STATUS_UNKNOWN -> State.SEND_STATUS_UNKNOWN;
                case NOT_SENT -> State.NOT_SENT;
            };
        }
        if (data.armed()) {
            return State.ARMED;
        }
        return data.lease() == null ? State.OPEN : State.LEASED;
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
        if (outcome != null) {
            Records.Actor by = outcome.by();
            return new Evidence(Layout.outcome(path), scope, by.task(), by.host(), outcome.at(),
                    detail + ": outcome " + outcome.outcome().wireName() + " (" + outcome.detail() + ")");
        }
        if (armed != null) {
            Records.Actor by = armed.by();
            return new Evidence(armedPath(), scope, by.task(), by.host(), armed.at(),
                    detail + ": armed with token " + armed.token() + ", no outcome recorded");
        }
        if (data.lease() != null) {
            Records.Actor by = data.lease().holder();
            return new Evidence(path, scope, by.task(), by.host(), data.at(),
                    detail + ": lease held by attempt " + by.attempt() + " (pid " + by.pid()
                            + ") until " + java.time.Instant.ofEpochMilli(data.lease().expires()));
        }
        return new Evidence(path, scope, null, null, data.at(), detail + ": scope open (" + data.opened() + ")");
    }
}
