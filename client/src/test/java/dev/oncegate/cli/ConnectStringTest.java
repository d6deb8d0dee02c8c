package dev.oncegate.cli;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code --connect} is refused when it cannot be a list of {@code HOST[:PORT]} (exit 2, before
 * anything connects), rather than taken for a host that fails only after --connect-timeout.
 */
class ConnectStringTest {

    @ParameterizedTest
    @ValueSource(strings = {"garbage::::", "zk1:2181,", "zk 1:2181", "zk1:0", "zk1:70000", "::1:2181", "zk1:2181:2181",
            "[zk1]:2181", "-zk1:2181"})
    void notAHostPortList_isRefusedNamingConnect(String connect) {
        ConnectOptions options = withConnect(connect);

        assertThatThrownBy(options::connect).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("--connect: '" + connect + "' is not a ZooKeeper connect string");
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1:2181", "zk1", "zk1.example.com:2181,zk2.example.com:2182/chroot/path",
            "[::1]:2181", "[fe80::1%eth0]:2181", "zk_1:2181", " zk1:2181 "})
    void hostPortList_isTaken(String connect) {
        assertThat(withConnect(connect).connect()).isEqualTo(connect.strip());
    }

    private static ConnectOptions withConnect(String connect) {
        ConnectOptions options = new ConnectOptions();
        options.connect = connect;
        return options;
    }
}
