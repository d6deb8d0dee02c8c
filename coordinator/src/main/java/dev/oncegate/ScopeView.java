package dev.oncegate;

/**
 * One scope as read from ZooKeeper: its znode data and stat, and its armed and outcome
 * records when present. Reads happen in the reverse order of the protocol's writes (outcome,
 * then the scope znode, whose {@code armed} flag is written in the same multi as the armed
 * znode), so a view never shows a later state without the earlier ones. Immutable.
 */
record ScopeView(int scope, String path, Records.Scope data, int version, long mzxid,
                 Records.Armed armed, Records.OutcomeRecord outcome) {

    enum State { OPEN, LEASED, ARMED, SENT_VERIFIED, SEND_STATUS_UNKNOWN, NOT_SENT }

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

    /** The record this view's state rests on, as evidence for a decision. */
    Evidence evidence(String detail) {
        if (outcome != null) {
            Records.Actor by = outcome.by();
            return new Evidence(Layout.outcome(path), scope, by.task(), by.host(), outcome.at(),
                    detail + ": outcome " + outcome.outcome().wireName() + " (" + outcome.detail() + ")");
        }
        if (armed != null) {
            Records.Actor by = armed.by();
            return new Evidence(Layout.armed(path), scope, by.task(), by.host(), armed.at(),
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
