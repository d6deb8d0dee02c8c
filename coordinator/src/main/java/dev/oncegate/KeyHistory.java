package dev.oncegate;

import java.util.List;
import java.util.Map;

/**
 * Everything recorded about one key, for operators ({@code oncegate inspect}). Records are
 * given as parsed JSON trees (maps, lists, strings, longs, booleans), exactly as stored.
 *
 * <p>Immutable and thread-safe.
 *
 * @param key            the key, 64 hex characters
 * @param path           its znode path
 * @param exists         whether any contender ever entered it
 * @param record         the key record (provider, identity, destination, sha256, created), or null
 * @param state          the key's current state: the state of its latest scope ({@code absent} when it does not exist)
 * @param scopes         every scope, oldest first
 * @param authorizations every redelivery authorization, oldest first
 */
public record KeyHistory(String key, String path, boolean exists, Map<String, Object> record, String state,
                         List<ScopeHistory> scopes, List<AuthorizationRecord> authorizations) {

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
     * One operator authorization.
     *
     * @param name   its znode name ({@code auth-NNNNNNNNNN})
     * @param record its data ({@code by}, {@code reason}, …)
     * @param usedBy the scope it opened, or -1 when unused
     */
    public record AuthorizationRecord(String name, Map<String, Object> record, int usedBy) {
    }
}
