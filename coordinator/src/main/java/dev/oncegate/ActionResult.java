package dev.oncegate;

import java.util.Objects;

/**
 * What a {@link BoundaryAction} reports when it returns normally: either a verified delivery
 * with the provider's receipt, or an unconfirmed one. A proven non-delivery is reported by
 * throwing {@link ProvenNotSentException} instead, never by a return value.
 *
 * <p>Immutable and thread-safe.
 *
 * @param verified whether delivery was confirmed
 * @param detail   the receipt (verified) or why it could not be confirmed (unconfirmed)
 */
public record ActionResult(boolean verified, String detail) {

    public ActionResult {
        Objects.requireNonNull(detail, "detail");
    }

    /** Delivery confirmed; {@code receipt} is the provider's proof (message id, upload id). */
    public static ActionResult verified(String receipt) {
        return new ActionResult(true, receipt);
    }

    /** The action ran but delivery could not be confirmed: recorded as {@code send_status_unknown}. */
    public static ActionResult unconfirmed(String why) {
        return new ActionResult(false, why);
    }
}
