package dev.oncegate.cli;

import java.util.Locale;

import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.IdentityKind;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code --key} (inspect, authorize, reconcile) is forgiving where no other key can be meant:
 * upper-case hex, and the znode path that {@code key} and {@code inspect} print; anything else
 * is refused naming --key (exit 2).
 */
class KeyOptionTest {

    private static final EffectKey KEY = EffectKey.of(Destination.parse(IdentityKind.STABLE, "slack:C1"), new byte[] {1});

    @Test
    void upperCaseHex_isTheLowerCaseKey() {
        assertThat(EffectKeyOptions.keyOption(KEY.key().toUpperCase(Locale.ROOT), "/oncegate")).isEqualTo(KEY.key());
    }

    @Test
    void printedPath_isItsKey() {
        assertThat(EffectKeyOptions.keyOption(KEY.path("/oncegate"), "/oncegate")).isEqualTo(KEY.key());
        assertThat(EffectKeyOptions.keyOption(KEY.path("/team/a"), "/team/a")).isEqualTo(KEY.key());
    }

    @Test
    void pathOfAnotherNamespace_isRefusedNamingBoth() {
        assertThatThrownBy(() -> EffectKeyOptions.keyOption(KEY.path("/other"), "/oncegate"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("--key: ").hasMessageContaining("namespace /other, not /oncegate");
    }

    @Test
    void pathThatIsNoKeysZnode_isRefused() {
        String scope = KEY.path("/oncegate") + "/0";
        String misplaced = "/oncegate/keys/00/00/" + KEY.key();

        assertThatThrownBy(() -> EffectKeyOptions.keyOption(scope, "/oncegate")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("--key: ").hasMessageContaining("does not end in a key");
        assertThatThrownBy(() -> EffectKeyOptions.keyOption(misplaced, "/oncegate")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("/oncegate/keys/");
    }

    @Test
    void truncatedOrNonHex_isRefused() {
        assertThatThrownBy(() -> EffectKeyOptions.keyOption(KEY.key().substring(1), "/oncegate"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("--key");
        assertThatThrownBy(() -> EffectKeyOptions.keyOption("g" + KEY.key().substring(1), "/oncegate"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("--key");
    }
}
