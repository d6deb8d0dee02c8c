package dev.oncegate;

import java.util.Objects;

/**
 * Thrown by a {@link BoundaryAction} that can prove nothing was delivered (the provider
 * rejected the request before accepting any of it, say). It is the only way an invoked action
 * gets a {@code not_sent} outcome; every other exception records {@code send_status_unknown}.
 *
 * <p>Not thread-safe in the sense that exceptions are not shared; its fields are final.
 */
public class ProvenNotSentException extends Exception {

    private final String evidence;

    /**
     * @param evidence what proves nothing was delivered; recorded in the outcome znode
     */
    public ProvenNotSentException(String evidence) {
        super("proven not sent: " + Objects.requireNonNull(evidence, "evidence"));
        this.evidence = evidence;
    }

    public ProvenNotSentException(String evidence, Throwable cause) {
        super("proven not sent: " + Objects.requireNonNull(evidence, "evidence"), cause);
        this.evidence = evidence;
    }

    /** What proves nothing was delivered. */
    public String evidence() {
        return evidence;
    }
}
