package dev.oncegate.bench;

/** What one contender's attempt at one effect came to, in every arm alike. */
enum Verdict {
    /** This contender ran the effect's action. */
    EXECUTED,
    /** This contender learnt that the effect was already taken care of, and did not run it. */
    STOPPED,
    /** Neither: busy, unavailable, timed out or failed (counted, and reported with the first error). */
    UNDECIDED
}
