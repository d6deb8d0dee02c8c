package dev.oncegate.cli;

import java.time.Duration;

import picocli.CommandLine.Option;

/**
 * Options of the subcommands that talk to ZooKeeper.
 *
 * <p>Not thread-safe; filled in by picocli on the main thread.
 */
final class ConnectOptions {

    @Option(names = "--connect", paramLabel = "HOST:PORT[,…]",
            defaultValue = "${env:ONCEGATE_CONNECT:-127.0.0.1:2181}",
            description = "ZooKeeper connect string (default: $$ONCEGATE_CONNECT, else 127.0.0.1:2181).")
    String connect;

    @Option(names = "--connect-timeout", paramLabel = "DURATION", defaultValue = "15s",
            converter = Durations.class,
            description = "How long to wait for ZooKeeper before failing closed with exit 13 (default: ${DEFAULT-VALUE}).")
    Duration connectTimeout;

    /** The connect string, refused (exit 2) when empty. */
    String connect() {
        if (connect == null || connect.isBlank()) {
            throw new IllegalArgumentException("connect: the ZooKeeper connect string is empty"
                    + " (set --connect or ONCEGATE_CONNECT, e.g. 127.0.0.1:2181)");
        }
        return connect.strip();
    }
}
