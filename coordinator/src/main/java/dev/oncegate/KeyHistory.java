package dev.oncegate;

import java.util.List;
import java.util.Map;

/**
 * Everything recorded about one key, for operators ({@code oncegate inspect}). Records are
 * given as parsed JSON trees (maps, lists, strings, longs, booleans), exactly as stored.
 *
 * <p>Immutable and thread-safe.
 *
 * @param key              the key, 64 hex characters
 * @param path             its znode path
 * @param exists           whether any contender ever entered it
 * @param record           the key record (provider, identity, destination, sha256, created), or null
 * @param state            the key's current state: the state of its latest scope ({@code absent} when it does not exist)
 * @param scopes           every scope, oldest first
 * @param authorizations   every record under {@code authorizations}, by name
 * @param authorizeCommand for a consumed key, the zkCli command that authorizes one redelivery of
 *                         its latest scope (safe to paste twice: the second meets NodeExists); else null
 */
public record KeyHistory(String key, String path, boolean exists, Map<String, Object> record, String state,
                         List<ScopeHistory> scopes, List<AuthorizationRecord> authorizations, String authorizeCommand) {

    /**
     * One scope.
     *
     * @param scope   its number
     * @param state   {@code open}, {@code leased}, {@code armed}, {@code sent_verified},
     *                {@code send_status_unknown} or {@code not_sent}
     * @param version the scope znode's version (the current fencing token)
     * @param mzxid   the zxid of its last write
     * @param data    the scope znode's data (why it opened, the lease)
     * @param armed   the armed record, or null
     * @param outcome the outcome record, or null
     */
    public record ScopeHistory(int scope, String state, int version, long mzxid, Map<String, Object> data,
                               Map<String, Object> armed, Map<String, Object> outcome) {
    }

    /**
     * One record under the key's {@code authorizations} znode.
     *
     * @param name   its znode name ({@code after-<n>})
     * @param record its data ({@code by}, {@code reason}, …), or null when it is not JSON
     * @param after  the consumed scope it redelivers after, or -1 when its name is not {@code after-<n>}
     * @param usedBy the scope it opened, or -1
     * @param status {@code used} (it opened scope {@code after + 1}); {@code unused} (its scope is the
     *               latest and consumed: the next contender opens {@code after + 1} with it);
     *               {@code stale} (its scope is not the latest any more, and it was not used: never
     *               honoured); {@code premature} (created before its scope was consumed, or for a scope
     *               that does not exist: never honoured, an admin must remove it before that scope can
     *               be authorized); {@code unreadable} (contenders stop on it until it is repaired);
     *               {@code ignored} (not named {@code after-<n>}: never honoured)
     */
    public record AuthorizationRecord(String name, Map<String, Object> record, int after, int usedBy, String status) {
    }
}
