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

    @Option(names = "--namespace", paramLabel = "PATH", defaultValue = Gate.DEFAULT_NAMESPACE,
            description = "ZooKeeper namespace (default: ${DEFAULT-VALUE}).")
    String namespace;

    @Option(names = {"-v", "--verbose"},
            description = "Log oncegate's stops and outcomes (INFO) on stderr, each line ending with its key, scope"
                    + " and task (also: ONCEGATE_VERBOSE=1).")
    boolean verbose;

    /**
     * The namespace, checked by the library's own rules.
     *
     * @throws IllegalArgumentException naming the namespace when it is not an absolute ZooKeeper path
     */
    String namespace() {
        return Gate.checkNamespace(namespace);
    }
}
