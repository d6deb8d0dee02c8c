package dev.oncegate.cli;

import picocli.CommandLine.Mixin;

/**
 * A subcommand that works in a namespace on ZooKeeper: it takes the {@link ZooKeeperOptions}
 * (namespace, connection, state directory) and connects through them only.
 *
 * <p>Not thread-safe; filled in by picocli and run on the main thread.
 */
abstract class NamespaceCommand extends Subcommand {

    @Mixin
    ZooKeeperOptions zookeeper;
}
