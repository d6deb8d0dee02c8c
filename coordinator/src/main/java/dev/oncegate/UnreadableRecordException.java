package dev.oncegate;

/**
 * A znode's data cannot be parsed or contradicts the protocol. The worker that reads it stops
 * with {@code unavailable}: an unreadable history is never taken as an empty one.
 */
final class UnreadableRecordException extends OncegateException {

    private final String path;
    private final String problem;

    UnreadableRecordException(String path, String problem) {
        super("unreadable record at " + path + ": " + problem
                + " (inspect it with `oncegate inspect`; do not delete it: a missing history allows a second delivery)");
        this.path = path;
        this.problem = problem;
    }

    String path() {
        return path;
    }

    /** What is wrong, without the path. */
    String problem() {
        return problem;
    }
}
