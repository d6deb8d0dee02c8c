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
 * @param id               random identifier of this namespace's life
 * @param created          when {@code init} wrote it
 * @param roles            the digest identities of the worker, operator and admin roles; null when
 *                         access control is off (every record readable and writable by anyone)
 * @param restoresAccepted how many times the admin accepted that the ensemble was restored from an
 *                         older snapshot ({@code oncegate init --accept-restore}): each one starts the
 *                         hosts' rollback witness afresh for this namespace (see {@link ZxidMarks})
 * @param acceptance       a random identifier of the last acceptance (null when none): two acceptances
 *                         that counted to the same number (one made after a restore to before the
 *                         other) are not the same witness life
 * @param automatic        written without anyone asking for it: by {@code oncegate server} on an empty
 *                         data directory, or by a gate allowed to initialise namespaces. A host whose
 *                         zxid marks know another life of the namespace does not take such a genesis for
 *                         a fresh start (its data was lost) until the admin accepts it
 *                         ({@code oncegate init --accept-restore}); one written by {@code oncegate init}
 *                         is the admin's decision already
 */
public record Genesis(String id, Instant created, Roles roles, int restoresAccepted, String acceptance,
                      boolean automatic) {

    public Genesis {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(created, "created");
        if (restoresAccepted < 0) {
            throw new IllegalArgumentException("restoresAccepted must not be negative: " + restoresAccepted);
        }
        if ((restoresAccepted == 0) != (acceptance == null)) {
            throw new IllegalArgumentException("an acceptance id goes with a positive count of accepted restores, and"
                    + " only with one: " + restoresAccepted + ", " + acceptance);
        }
    }

    /** A genesis that {@code oncegate init} wrote, and no restore was accepted in. */
    public Genesis(String id, Instant created, Roles roles) {
        this(id, created, roles, 0, null, false);
    }

    /** This genesis naming {@code other} roles, all else the same. */
    Genesis withRoles(Roles other) {
        return new Genesis(id, created, other, restoresAccepted, acceptance, automatic);
    }

    /** This genesis counting one more accepted restore, under the new acceptance id {@code next}. */
    Genesis accepting(String next) {
        return new Genesis(id, created, roles, restoresAccepted + 1, Objects.requireNonNull(next, "next"), automatic);
    }

    /**
     * The name of the namespace life the rollback witness keeps its marks under: the id, and after
     * the first accepted restore, {@code ID#N-ACCEPTANCE}. A restore accepted by the admin so starts the
     * witness afresh (the marks of the life before it are another life's), and a host whose marks
     * know a later acceptance than the genesis it reads knows that the genesis went back.
     */
    public String witnessLife() {
        return restoresAccepted == 0 ? id : id + "#" + restoresAccepted + "-" + acceptance;
    }

    /**
     * The count of accepted restores in a {@link #witnessLife()} of genesis {@code id}: 0 for the id
     * itself, -1 for a life of another genesis or one this version does not name.
     */
    public static int restoresAcceptedIn(String life, String id) {
        if (life.equals(id)) {
            return 0;
        }
        if (!life.startsWith(id + "#")) {
            return -1;
        }
        String rest = life.substring(id.length() + 1);
        int dash = rest.indexOf('-');
        try {
            return dash <= 0 ? -1 : Integer.parseInt(rest.substring(0, dash));
        } catch (NumberFormatException e) {
            return -1;
        }
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
