package dev.oncegate.cli;

import java.util.ArrayList;
import java.util.List;

import org.apache.zookeeper.client.ZKClientConfig;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link PlainClientConfig} reads every property as ZooKeeper's own {@link ZKClientConfig} does,
 * with ZooKeeper's system properties set or not: it only leaves out the TLS set-up, and only when
 * no {@code zookeeper.ssl.*} property is there to copy.
 */
class PlainClientConfigTest {

    private static final String[] TLS = {"zookeeper.ssl.trustStore.location", "zookeeper.ssl.protocol",
        "zookeeper.ssl.authProvider", "zookeeper.ssl.sslProvider", "zookeeper.ssl.quorum.protocol"};

    @Test
    void withoutSystemProperties_readsAsZooKeepersOwn() {
        PlainClientConfig plain = new PlainClientConfig();

        assertSameProperties(plain, new ZKClientConfig());
    }

    @Test
    void withZooKeepersSystemProperties_copiesTheSame() {
        List<String> set = new ArrayList<>(List.of(PlainClientConfig.COPIED));
        set.add(ZKClientConfig.ZOOKEEPER_REQUEST_TIMEOUT);
        set.add(ZKClientConfig.ZOOKEEPER_SERVER_PRINCIPAL);
        try {
            for (String name : set) {
                System.setProperty(name, "value-of-" + name);
            }

            PlainClientConfig plain = new PlainClientConfig();

            assertSameProperties(plain, new ZKClientConfig());
            assertThat(plain.getProperty(ZKClientConfig.ENABLE_CLIENT_SASL_KEY)).isEqualTo("value-of-zookeeper.sasl.client");
        } finally {
            set.forEach(System::clearProperty);
        }
    }

    @Test
    void withATlsSystemProperty_copiesEveryTlsPropertyAsZooKeeperDoes() {
        try {
            System.setProperty("zookeeper.ssl.trustStore.location", "/etc/zk/trust.jks");
            System.setProperty("zookeeper.ssl.quorum.protocol", "TLSv1.3");

            PlainClientConfig plain = new PlainClientConfig();

            assertSameProperties(plain, new ZKClientConfig());
            assertThat(plain.getProperty("zookeeper.ssl.trustStore.location")).isEqualTo("/etc/zk/trust.jks");
        } finally {
            System.clearProperty("zookeeper.ssl.trustStore.location");
            System.clearProperty("zookeeper.ssl.quorum.protocol");
        }
    }

    private static void assertSameProperties(ZKClientConfig actual, ZKClientConfig expected) {
        List<String> names = new ArrayList<>(List.of(PlainClientConfig.COPIED));
        names.addAll(List.of(TLS));
        names.addAll(List.of(ZKClientConfig.ZOOKEEPER_REQUEST_TIMEOUT, ZKClientConfig.ZOOKEEPER_SERVER_PRINCIPAL,
                "zookeeper.request.timeout", "zookeeper.client.config"));
        for (String name : names) {
            assertThat(actual.getProperty(name)).as(name).isEqualTo(expected.getProperty(name));
        }
        assertThat(actual.isSaslClientEnabled()).isEqualTo(expected.isSaslClientEnabled());
    }
}
