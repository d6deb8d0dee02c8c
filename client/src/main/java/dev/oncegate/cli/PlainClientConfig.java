package dev.oncegate.cli;

import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.ZKConfig;

/**
 * ZooKeeper's client configuration, made without setting up TLS for nothing.
 *
 * <p>{@link ZKClientConfig}'s constructor copies ZooKeeper's system properties into the
 * configuration ({@code handleBackwardCompatibility}); for the {@code zookeeper.ssl.*} ones it
 * creates a {@code ClientX509Util}, whose class's static initialiser asks the JVM for its default
 * TLS context, which loads every security provider and parses the whole CA trust store: most of
 * what {@code oncegate run -- true} spends before it connects, on every run, TLS or not. When no
 * {@code zookeeper.ssl.*} system property is set, those copies would all be null (absent), so this
 * configuration copies the same properties less them and leaves X509Util alone; with any of them
 * set, it does exactly what ZooKeeper does. A TLS connection ({@code zookeeper.client.secure} in
 * {@code --zk-client-config}) still sets up its context, from this configuration, when it connects.
 * {@code PlainClientConfigTest} checks that every property reads the same as in ZooKeeper's own.
 *
 * <p>Not thread-safe while being filled in (as ZKClientConfig); read-only once handed to a client.
 */
final class PlainClientConfig extends ZKClientConfig {

    /** The system properties ZKConfig and ZKClientConfig copy besides ClientX509Util's and QuorumX509Util's. */
    static final String[] COPIED = {
        ZKConfig.JUTE_MAXBUFFER, ZKConfig.KINIT_COMMAND, ZKConfig.JGSS_NATIVE,
        ZK_SASL_CLIENT_USERNAME, ZK_SASL_CLIENT_CANONICALIZE_HOSTNAME, LOGIN_CONTEXT_NAME_KEY, ENABLE_CLIENT_SASL_KEY,
        ZOOKEEPER_SERVER_REALM, DISABLE_AUTO_WATCH_RESET, ZOOKEEPER_CLIENT_CNXN_SOCKET, SECURE_CLIENT,
    };

    /** The prefix of every property ClientX509Util ({@code zookeeper.ssl.}) and QuorumX509Util ({@code zookeeper.ssl.quorum.}) copy. */
    static final String TLS_PREFIX = "zookeeper.ssl.";

    @Override
    protected void handleBackwardCompatibility() {
        for (String name : System.getProperties().stringPropertyNames()) {
            if (name.startsWith(TLS_PREFIX)) {
                super.handleBackwardCompatibility();
                return;
            }
        }
        for (String name : COPIED) {
            setProperty(name, System.getProperty(name));
        }
    }
}
