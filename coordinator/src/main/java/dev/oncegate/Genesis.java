package dev.oncegate;

import java.time.Instant;
import java.util.Objects;

/**
 * A namespace's identity, written once by {@code oncegate init}. Gates remember the id they
 * first saw and refuse to work when it is missing or different: lost or replaced ZooKeeper
 * data must never look like a fresh start. When access control is on, it also names the three
 * roles' identities (the README's "Access control"), from which every record's ACL is derived.
 *
 * <p>Immutable and thread-safe.
 *
 * @param id      random identifier of this namespace's life
 * @param created when {@code init} wrote it
 * @param roles   the digest identities of the worker, operator and admin roles; null when
 *                access control is off (every record readable and writable by anyone)
 */
public record Genesis(String id, Instant created, Roles roles) {

    public Genesis {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(created, "created");
    }

    /**
     * The three roles' ZooKeeper digest ids ({@code user:base64(sha1(user:password))}, what
     * {@code DigestAuthenticationProvider.generateDigest} gives; never a password).
     *
     * @param worker   creates keys, scopes, leases, armed records and outcomes; deletes nothing
     * @param operator reads everything; creates authorizations and reconciliations
     * @param admin    everything: initialises namespaces and runs retention (the only deletes)
     */
    public record Roles(String worker, String operator, String admin) {
        public Roles {
            Objects.requireNonNull(worker, "worker");
            Objects.requireNonNull(operator, "operator");
            Objects.requireNonNull(admin, "admin");
        }
    }
}
