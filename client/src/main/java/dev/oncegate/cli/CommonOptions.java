package dev.oncegate.cli;

import dev.oncegate.Gate;
import picocli.CommandLine.Option;

/**
 * Options every subcommand accepts: the namespace and the log level. {@code --verbose} is also
 * read by {@link Main} from the raw arguments, before any logger exists.
 *
 * <p>Not thread-safe; filled in by picocli on the main thread.
 */
final class CommonOptions {

    static final String NAMESPACE_ENV = "ONCEGATE_NAMESPACE";

    @Option(names = "--namespace", paramLabel = "PATH",
            description = "ZooKeeper namespace (default: $$" + NAMESPACE_ENV + ", else " + Gate.DEFAULT_NAMESPACE + ").")
    String namespace;

    @Option(names = {"-v", "--verbose"},
            description = "Log oncegate's stops and outcomes (INFO) on stderr, each line ending with its key, scope"
                    + " and task (also: ONCEGATE_VERBOSE=1).")
    boolean verbose;

    /**
     * The namespace: --namespace, else a non-empty $ONCEGATE_NAMESPACE, else the default; checked
     * by the library's own rules.
     *
     * @throws IllegalArgumentException naming the namespace when it is not an absolute ZooKeeper path
     */
    String namespace() {
        return namespace(namespace);
    }

    /** {@link #namespace()} for the value of {@code --namespace}, null when it is not given. */
    static String namespace(String namespace) {
        if (namespace != null) {
            return Gate.checkNamespace(namespace);
        }
        String env = System.getenv(NAMESPACE_ENV);
        if (env == null || env.isEmpty()) {
            return Gate.DEFAULT_NAMESPACE;
        }
        try {
            return Gate.checkNamespace(env);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(NAMESPACE_ENV + ": " + e.getMessage(), e);
        }
    }
}
