package dev.oncegate;

import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Everything recorded about one key, typed ({@link Operator#inspect}): its scopes in order with
 * their leases (and the last takeover), armed, outcome and reconciliation records, every record
 * under {@code authorizations} with what it does, every record that could not be read (never
 * hidden, never an exception), and in plain words what a new attempt would do now and why.
 *
 * <p>Immutable and thread-safe.
 *
 * @param key              the key, 64 hex characters
 * @param path             its znode path
 * @param exists           whether any contender ever entered it
 * @param record           the key record, or null (absent or unreadable)
 * @param scopes           every scope, oldest first
 * @param authorizations   every record under {@code KEY/authorizations}, by name
 * @param unreadable       every record that could not be read or contradicts the protocol
 * @param nextAttempt      what a new attempt would do now, and why, in one sentence
 * @param nextStop         the stop that new attempt would get, with its reason and evidence; null when
 *                         it would proceed (or take a lapsed lease over, or join the scope's election)
 * @param authorizeCommand for a consumed key, the zkCli command that authorizes one redelivery
 *                         of its latest scope (safe to paste twice); else null
 * @param genesis          the namespace's genesis id (its life)
 * @param zxid             the zxid that created the key's znode (0 when it does not exist): with the
 *                         genesis id, the incarnation of the key that every idempotency key of its
 *                         scopes is derived from ({@link EffectKey#idempotencyKey(int, String, long)})
 */
public record KeyHistory(String key, String path, boolean exists, KeyRecord record, List<Scope> scopes,
                         List<Authorization> authorizations, List<Unreadable> unreadable, String nextAttempt,
                         Decision.Stop nextStop, String authorizeCommand, String genesis, long zxid) {

    public KeyHistory {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(path, "path");
        scopes = List.copyOf(scopes);
        authorizations = List.copyOf(authorizations);
        unreadable = List.copyOf(unreadable);
        Objects.requireNonNull(nextAttempt, "nextAttempt");
    }

    /** The key's state: its latest scope's state; null when the key does not exist or that scope is unreadable. */
    public ScopeState state() {
        return scopes.isEmpty() ? null : scopes.get(scopes.size() - 1).state();
    }

    /** Whether every record of the key could be read. */
    public boolean readable() {
        return unreadable.isEmpty();
    }

    /**
     * The key record.
     *
     * @param provider    the destination's provider
     * @param identity    {@code stable} or {@code display-name}
     * @param destination the destination identifier
     * @param sha256      the content's SHA-256, hex
     * @param created     when the first contender created the key
     */
    public record KeyRecord(String provider, String identity, String destination, String sha256, Instant created) {
    }

    /**
     * One scope.
     *
     * @param scope          its number
     * @param path           its znode
     * @param state          its state, from its immutable records ({@link ScopeState}); null when a
     *                       record it rests on is unreadable or contradicts the protocol, or the scope
     *                       was not legitimately opened (its chain of custody is broken)
     * @param version        the scope znode's version (the current fencing token)
     * @param mzxid          the zxid of its last write
     * @param opened         why it opened: {@code initial}, {@code not_sent:<n-1>} or {@code after-<n-1>}
     * @param openedAt       when
     * @param lease          the current (or, once armed, the arming executor's) lease; null when none
     * @param armed          the armed record ({@code KEY/N/armed}), or null
     * @param outcome        the executor's outcome record, or null (none, or the scope was reconciled
     *                       while armed: the reconciliation wrote its outcome)
     * @param reconciliation an operator's reconciliation, or null
     * @param armedZxid      the zxid of the arming (the armed record's creation), when the scope was
     *                       consumed; 0 when not armed
     * @param recordedAt     when the record the state rests on was written, by the ZooKeeper
     *                       server's clock (the reconciliation's, outcome's or armed record's
     *                       znode, else the scope znode's last write): what retention dates a key by,
     *                       never the time a writer put into a record
     * @param outcomeWrites  how many times the scope's outcome was written: 0 for none, 1 for its one
     *                       write (the executor's, or a reconciliation's marker); more means it was
     *                       rewritten afterwards (an admin restoring it from a backup, or a holder of
     *                       the worker credential), so its outcome, detail and executor are not that
     *                       write's word: establish what happened at the destination before authorizing
     *                       a redelivery (a rewritten {@code not_sent} is unreadable: {@code state} null)
     */
    public record Scope(int scope, String path, ScopeState state, int version, long mzxid, String opened,
                        Instant openedAt, Lease lease, Armed armed, OutcomeRecord outcome, Reconciliation reconciliation,
                        long armedZxid, Instant recordedAt, int outcomeWrites) {
    }

    /**
     * A lease, as the scope znode holds it.
     *
     * @param holder       who holds it
     * @param electionNode the holder's LeaderLatch node (its lease writes are bound to it)
     * @param expires      when it lapses, by the holder's clock (renewed at each checkpoint)
     * @param takeover     how the holder got it when it took it over from another, else null
     */
    public record Lease(Actor holder, String electionNode, Instant expires, Takeover takeover) {
    }

    /**
     * A lease taken over from another holder.
     *
     * @param cause {@code lapsed}, {@code unrenewed}, {@code abandoned} or {@code stalled_election}
     * @param from  the previous holder (null for a stalled election: there was none)
     */
    public record Takeover(String cause, Actor from) {
    }

    /**
     * The armed record: the executor durably said it was crossing.
     *
     * @param by          the executor
     * @param token       its fencing token
     * @param checkpoints the checkpoints it passed, in order
     * @param at          when it armed
     */
    public record Armed(Actor by, FencingToken token, List<String> checkpoints, Instant at) {
        public Armed {
            checkpoints = List.copyOf(checkpoints);
        }
    }

    /**
     * The executor's outcome record.
     *
     * @param outcome what the action's result meant
     * @param detail  the receipt, the proof of non-delivery, or why the status is unknown
     * @param by      the executor
     * @param token   its fencing token
     * @param at      when it was recorded
     */
    public record OutcomeRecord(Outcome outcome, String detail, Actor by, FencingToken token, Instant at) {
    }

    /**
     * An operator's reconciliation: after checking the destination, a {@code send_status_unknown}
     * (or armed-without-outcome) scope is read as {@code sent_verified}. The original records stay.
     *
     * @param outcome  always {@code sent_verified}
     * @param by       who checked
     * @param evidence what they found
     * @param actor    the command that wrote it
     * @param at       when
     */
    public record Reconciliation(Outcome outcome, String by, String evidence, Actor actor, Instant at) {
    }

    /**
     * One record under {@code KEY/authorizations}.
     *
     * @param name   its znode name ({@code after-<n>})
     * @param path   its znode
     * @param after  the consumed scope it redelivers after; -1 when the name is not {@code after-<n>}
     * @param status what it does now
     * @param by     who authorized (null when unreadable)
     * @param reason why (null when unreadable)
     * @param at     when it was written (its znode's creation time)
     * @param actor  the {@code oncegate authorize} command that wrote it; null for the zkCli recipe
     * @param usedBy the scope it opened, or -1
     */
    public record Authorization(String name, String path, int after, AuthorizationStatus status, String by,
                                String reason, Instant at, Actor actor, int usedBy) {
    }

    /** What an authorization does now. */
    public enum AuthorizationStatus {
        /** It opened scope {@code after + 1}. */
        USED,
        /** Its scope is the latest and consumed: the next contender opens {@code after + 1} with it. */
        UNUSED,
        /** Its scope is not the latest any more and it opened nothing: never honoured. */
        STALE,
        /**
         * Written before its scope was consumed (or for a scope that does not exist): not an
         * informed decision about that scope, never honoured; an admin must remove it before that
         * scope can be authorized.
         */
        PREMATURE,
        /** It cannot be read: a contender that meets it stops (fail closed) until it is repaired. */
        UNREADABLE,
        /** Not named {@code after-<n>}: never honoured. */
        IGNORED;

        /** The name used in JSON. */
        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * A record that could not be read, or that contradicts the protocol.
     *
     * @param path    its znode
     * @param raw     its bytes as stored (empty when the znode itself is missing)
     * @param problem what is wrong
     * @param repair  what to do about it
     */
    public record Unreadable(String path, byte[] raw, String problem, String repair) {
        public Unreadable {
            raw = raw.clone();
        }

        @Override
        public byte[] raw() {
            return raw.clone();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Unreadable u && u.path.equals(path) && java.util.Arrays.equals(u.raw, raw)
                    && u.problem.equals(problem) && u.repair.equals(repair);
        }

        @Override
        public int hashCode() {
            return Objects.hash(path, java.util.Arrays.hashCode(raw), problem, repair);
        }

        @Override
        public String toString() {
            return "Unreadable[" + path + ": " + problem + "]";
        }
    }
}
