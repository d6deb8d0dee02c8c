package dev.oncegate.cli;

import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import picocli.CommandLine.Option;

/**
 * Options every subcommand accepts: the namespace and the log level. {@code --verbose} is also
 * read by {@link Main} from the raw arguments, before any logger exists.
 *
 * <p>Not thread-safe; filled in by picocli on the main thread.
 */
final class CommonOptions {

    /** A fixed key, used only to let the library validate a namespace before anything connects. */
    private static final EffectKey NAMESPACE_PROBE =
            EffectKey.of(Destination.stable("oncegate", "namespace-probe"), new byte[0]);

    @Option(names = "--namespace", paramLabel = "PATH", defaultValue = Gate.DEFAULT_NAMESPACE,
            description = "ZooKeeper namespace (default: ${DEFAULT-VALUE}).")
    String namespace;

    @Option(names = {"-v", "--verbose"},
            description = "Log oncegate's decisions at INFO on stderr (also: ONCEGATE_VERBOSE=1).")
    boolean verbose;

    /**
     * The namespace, checked by the library's own rules.
     *
     * @throws IllegalArgumentException naming the namespace when it is not an absolute ZooKeeper path
     */
    String namespace() {
        NAMESPACE_PROBE.path(namespace);
        return namespace;
    }
}
