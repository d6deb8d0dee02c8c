package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.apache.zookeeper.client.ZKClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --zk-client-config}: a ZooKeeper client properties file, read whole before any connection. */
class ZkClientConfigFileTest {

    @TempDir
    Path dir;

    @Test
    void noFileNamed_meansZooKeepersDefaults() {
        assertThat(ZkClientConfigFile.load(null)).isNull();
    }

    @Test
    void propertiesFile_isTheClientConfiguration_trimmedAsZooKeeperReadsIt() throws Exception {
        Path file = Files.writeString(dir.resolve("client.properties"), String.join("\n",
                "# TLS",
                "zookeeper.client.secure = true ",
                "zookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty",
                "zookeeper.ssl.trustStore.location=/etc/oncegate/tls/truststore.p12"), StandardCharsets.ISO_8859_1);

        ZKClientConfig config = ZkClientConfigFile.load(file.toString());

        assertThat(config.getBoolean(ZKClientConfig.SECURE_CLIENT)).isTrue();
        assertThat(config.getProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET))
                .isEqualTo("org.apache.zookeeper.ClientCnxnSocketNetty");
        assertThat(config.getProperty("zookeeper.ssl.trustStore.location")).isEqualTo("/etc/oncegate/tls/truststore.p12");
    }

    @Test
    void missingFile_isBadInputNamingTheOption() {
        Path missing = dir.resolve("missing.properties");

        assertThatThrownBy(() -> ZkClientConfigFile.load(missing.toString()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--zk-client-config").hasMessageContaining(missing + " does not exist")
                .hasMessageContaining("ONCEGATE_ZK_CLIENT_CONFIG");
    }

    @Test
    void directoryOrEmptyName_isBadInputNamingTheOption() {
        assertThatThrownBy(() -> ZkClientConfigFile.load(dir.toString()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--zk-client-config")
                .hasMessageContaining("is not a regular file");
        assertThatThrownBy(() -> ZkClientConfigFile.load(" "))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--zk-client-config: the file name is empty");
    }

    @Test
    void malformedEscape_isBadInputNamingTheOption() throws Exception {
        Path file = Files.writeString(dir.resolve("broken.properties"), "zookeeper.client.secure=\\uZZZZ\n",
                StandardCharsets.ISO_8859_1);

        assertThatThrownBy(() -> ZkClientConfigFile.load(file.toString()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--zk-client-config: " + file + " is not a properties file");
    }
}
