package dev.oncegate;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;

import org.apache.zookeeper.data.Stat;

/**
 * The one decoder of a scope: from its znodes as read (a worker's read-only {@code multi}, or an
 * operator's reads one znode at a time) to its view, judged by {@link Custody}, together with
 * every contradiction found on the way. Readers differ only in what they do with the list: a
 * worker stops on the first contradiction ({@link Decoded#orThrow}: {@code unreadable_record},
 * fail closed), an operator reports them all ({@code oncegate inspect}).
 *
 * <p>The order in which the records are decoded, and so which contradiction comes first: the
 * scope znode's data, the scope's children (znodes the protocol never writes there, reported to
 * operators only; which armed record it has), the armed record, its outcome, an outcome where
 * records before schema 4 kept it, the reconciliation, and last {@link Custody#judge} on the
 * records that could all be decoded.
 *
 * <p>Pure apart from {@link Fetch}, which reads an armed record of schema 3 or older (its name
 * depends on the scope's data, so no reader can read it with the rest). Stateless; thread-safe.
 */
final class ScopeDecoder {

    private ScopeDecoder() {
    }

    /** A znode as read: its bytes (never null) and its stat. */
    record Znode(byte[] data, Stat stat) {
    }

    /**
     * One scope's znodes as read; a znode that does not exist is null.
     *
     * @param scope          the scope's number
     * @param path           the scope znode's path
     * @param data           the scope znode
     * @param children       the scope znode's children
     * @param armed          {@code KEY/n/armed}
     * @param outcome        {@code KEY/n/armed/outcome}
     * @param legacyOutcome  {@code KEY/n/outcome}, where records before schema 4 kept the outcome
     * @param authorization  {@code KEY/authorizations/after-n}, or null when absent or not read
     * @param readAuthorization whether the reader read {@code after-n} (a worker does, with the scope)
     * @param reconciliation {@code KEY/authorizations/reconciled-n}
     */
    record Raw(int scope, String path, Znode data, List<String> children, Znode armed, Znode outcome,
               Znode legacyOutcome, Znode authorization, boolean readAuthorization, Znode reconciliation) {
    }

    /** Reads one more znode (an armed record before schema 4); null when it does not exist. */
    interface Fetch {
        Znode read(String path) throws Exception;
    }

    /** Whether a contradiction is in the protocol's records, or a znode the protocol never writes there. */
    enum Kind {
        /** A record that cannot be parsed or contradicts the protocol: readers stop on it. */
        RECORD,
        /** A znode oncegate never writes where it was found: ignored by workers, reported to operators. */
        FOREIGN
    }

    /**
     * What is wrong with one znode.
     *
     * @param data the znode's bytes as read, or null when the decoder has not read it
     */
    record Contradiction(String path, byte[] data, String problem, Kind kind) {
    }

    /**
     * A scope decoded.
     *
     * @param facts          its records, each null where absent or not decodable
     * @param view           the scope judged, or null when a record could not be decoded or the records
     *                       contradict each other or the protocol
     * @param authorization  its {@code after-n} authorization (absent, present or unreadable), or null
     *                       when the reader did not read it
     * @param contradictions every contradiction found, in the order above
     */
    record Decoded(Custody.Facts facts, ScopeView view, AuthorizationView authorization,
                   List<Contradiction> contradictions) {

        /** The decoded scope, or a worker's stop: the first contradiction, as an {@link UnreadableRecordException}. */
        Decoded orThrow() {
            for (Contradiction c : contradictions) {
                if (c.kind() == Kind.RECORD) {
                    throw new UnreadableRecordException(c.path(), c.problem());
                }
            }
            return this;
        }
    }

    /**
     * Decodes and judges one scope.
     *
     * @param legacyTrusted whether a {@code not_sent} without a commitment (schema 3 or older) is
     *                      believed: only in a namespace without roles ({@link Custody})
     * @param everything    an operator's reading: go on past the first contradiction, report foreign
     *                      znodes, and read an armed record before schema 4 even where judging does not
     *                      need it; a worker's (false) stops at the first contradiction
     * @param fetch         reads an armed record before schema 4
     */
    static Decoded decode(Raw raw, boolean legacyTrusted, boolean everything, Fetch fetch) throws Exception {
        List<Contradiction> found = new ArrayList<>();
        String scopePath = raw.path();
        Records.Scope data = decode(Records::decodeScope, scopePath, raw.data(), found);
        if (everything) {
            for (String child : raw.children()) {
                if (!child.startsWith(Layout.ARMED) && !child.equals(Layout.OUTCOME) && !child.equals(Layout.LATCH)) {
                    found.add(new Contradiction(scopePath + "/" + child, null, "an unexpected znode under the scope",
                            Kind.FOREIGN));
                }
            }
        }
        String armedName = null;
        if (everything || found.isEmpty()) {
            try {
                armedName = Custody.armedChild(scopePath, data, raw.children());
            } catch (UnreadableRecordException e) {
                found.add(new Contradiction(e.path(), null, e.problem(), Kind.RECORD));
            }
        }
        Records.ArmedData armed = null;
        Stat armedStat = null;
        Records.OutcomeData outcome = null;
        Stat outcomeStat = null;
        Records.OutcomeData legacy = null;
        Stat legacyStat = null;
        if (Layout.ARMED.equals(armedName) && (everything || found.isEmpty())) {
            if (raw.armed() != null) {
                armed = decode(Records::decodeArmed, Layout.armed(scopePath), raw.armed(), found);
                armedStat = armed == null ? null : raw.armed().stat();
            }
            if (raw.outcome() != null && (everything || found.isEmpty())) {
                outcomeStat = raw.outcome().stat();
                outcome = raw.outcome().data().length == 0 ? null
                        : decode(Records::decodeOutcome, Layout.outcome(scopePath), raw.outcome(), found);
            }
        }
        if (raw.legacyOutcome() != null && (everything || found.isEmpty())) {
            legacy = decode(Records::decodeOutcome, Layout.legacyOutcome(scopePath), raw.legacyOutcome(), found);
            legacyStat = legacy == null ? null : raw.legacyOutcome().stat();
        }
        if (armedName != null && !Layout.ARMED.equals(armedName) && (everything || found.isEmpty())
                && (everything || Custody.needsLegacyArmedRecord(armedName, legacy, raw.authorization() != null))) {
            String path = scopePath + "/" + armedName;
            Znode z = fetch.read(path);
            if (z == null) {
                found.add(new Contradiction(path, null, "the scope lists this armed record but it is gone", Kind.RECORD));
            } else {
                armed = decode(Records::decodeArmed, path, z, found);
                armedStat = armed == null ? null : z.stat();
            }
        }
        String reconciliationPath = Layout.reconciliation(Layout.keyOfScope(scopePath), raw.scope());
        KeyHistory.Reconciliation reconciliation = null;
        if (raw.reconciliation() != null && (everything || found.isEmpty())) {
            reconciliation = decode(Records::decodeReconciliation, reconciliationPath, raw.reconciliation(), found);
        }
        Custody.Facts facts = new Custody.Facts(raw.scope(), scopePath, data, raw.data().stat(), raw.children(), armed,
                armedStat, outcome, outcomeStat, legacy, legacyStat, reconciliation,
                reconciliation == null ? null : raw.reconciliation().stat());
        ScopeView view = null;
        // An operator's reading judges nothing beside a foreign znode either: it shows that scope unreadable.
        if (found.isEmpty()) {
            try {
                view = Custody.judge(facts, legacyTrusted);
            } catch (UnreadableRecordException e) {
                found.add(new Contradiction(e.path(), null, e.problem(), Kind.RECORD));
            }
        }
        AuthorizationView authorization = null;
        if (raw.readAuthorization()) {
            String authPath = Layout.authorization(Layout.keyOfScope(scopePath), raw.scope());
            authorization = raw.authorization() == null ? AuthorizationView.absent(authPath, raw.scope())
                    : authorization(authPath, raw.scope(), raw.authorization().stat(), raw.authorization().data());
        }
        return new Decoded(facts, view, authorization, List.copyOf(found));
    }

    /** An authorization as read: parsed, or reported unreadable (its reader decides what that means). */
    static AuthorizationView authorization(String path, int n, Stat stat, byte[] data) {
        try {
            return AuthorizationView.present(path, n, stat, Records.decodeAuthorization(path, data));
        } catch (UnreadableRecordException e) {
            return AuthorizationView.unreadable(path, n, stat, e.getMessage());
        }
    }

    private static <T> T decode(BiFunction<String, byte[], T> decoder, String path, Znode znode,
                                List<Contradiction> found) {
        try {
            return decoder.apply(path, znode.data());
        } catch (UnreadableRecordException e) {
            found.add(new Contradiction(path, znode.data(), e.problem(), Kind.RECORD));
            return null;
        }
    }
}
