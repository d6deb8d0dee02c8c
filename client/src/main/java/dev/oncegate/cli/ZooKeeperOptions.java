package dev.oncegate.cli;

import dev.oncegate.Operator;
import picocli.CommandLine.Mixin;

/**
 * The options of every subcommand that works in a namespace on ZooKeeper ({@code init},
 * {@code run}, {@code inspect}, {@code list}, {@code authorize}, {@code reconcile}, {@code gc},
 * {@code acl}): the namespace and log level, the connection, and this host's state directory;
 * and the one way such a command connects, so that each gets the same client, the same
 * timeouts, the same identity and the same rollback witness.
 *
 * <p>Not thread-safe; filled in by picocli on the main thread.
 */
final class ZooKeeperOptions {

    @Mixin
    CommonOptions common;

    @Mixin
    ConnectOptions connection;

    @Mixin
    StateOptions state;

    /** The namespace (exit 2 when it is not an absolute ZooKeeper path). */
    String namespace() {
        return common.namespace();
    }

    /** The connection settings, each checked (exit 2) before anything connects; the namespace too. */
    ZooKeeperConnection.Settings settings() {
        namespace();
        return connection.settings();
    }

    /** A started client with these options, not yet waited for (see {@link ZooKeeperConnection#awaitConnected}). */
    ZooKeeperConnection open(ZooKeeperConnection.Settings settings) {
        return ZooKeeperConnection.open(settings, namespace(), state.marks(settings.connect()));
    }

    /** {@link #open(ZooKeeperConnection.Settings)} asking for a session of {@code sessionTimeout}. */
    ZooKeeperConnection open(ZooKeeperConnection.Settings settings, java.time.Duration sessionTimeout) {
        return ZooKeeperConnection.open(settings, namespace(), state.marks(settings.connect()), sessionTimeout);
    }

    /** {@link #connect(ZooKeeperConnection.Settings)} with these options' own settings. */
    ZooKeeperConnection connect() throws InterruptedException {
        return connect(settings());
    }

    /** One operator call, on a connection of its own. */
    @FunctionalInterface
    interface OperatorCall<T> {
        T call(Operator operator) throws InterruptedException;
    }

    /**
     * Connects, makes one call on the namespace's {@link Operator}, and closes the connection. An
     * {@link IllegalArgumentException} from the operator is its refusal of this request (a key
     * that is not consumed, say): bad input, exit 2, said as "refused: …".
     *
     * @throws UnavailableException when ZooKeeper cannot be reached within --connect-timeout (exit 13)
     */
    <T> T withOperator(OperatorCall<T> call) throws InterruptedException {
        return withOperator(Access.Role.WORKER, null, call);
    }

    /**
     * {@link #withOperator(OperatorCall)} for {@code what}, a call that needs the role
     * {@code needed}: under access control the role is checked first, before anything is read
     * or written (see {@link Access#require}), and a refusal by ZooKeeper says which role this
     * identity has, or why none (exit 13).
     */
    <T> T withOperator(Access.Role needed, String what, OperatorCall<T> call) throws InterruptedException {
        try (ZooKeeperConnection zk = connect()) {
            if (what != null) {
                Access.require(zk, needed, what);
            }
            Operator operator = zk.operator();
            try {
                return call.call(operator);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("refused: " + e.getMessage(), e);
            } catch (RuntimeException e) {
                throw Access.explained(e, zk, needed);
            }
        }
    }

    /**
     * A client with {@code settings} (this command's own variant of {@link #settings()}: init's
     * admin identity, acl's second identity), connected.
     *
     * @throws UnavailableException when ZooKeeper cannot be reached within --connect-timeout (exit 13)
     */
    ZooKeeperConnection connect(ZooKeeperConnection.Settings settings) throws InterruptedException {
        return ZooKeeperConnection.connected(settings, namespace(), state.marks(settings.connect()));
    }
}
