package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * {@code oncegate authorize} run twice authorizes once (issue 15, item 3): the command names the
 * consumed scope it follows ({@code --after N}), so a repeat after a worker used the authorization
 * — pasted twice, a wrapper retrying after exit 13 whose create had been applied, a second operator
 * on the same ticket — is refused instead of authorizing the scope that redelivery consumed.
 */
class AuthorizeTwiceIT extends CliFixture {

    Cli.Result authorize(String... after) {
        List<String> args = new ArrayList<>(List.of("authorize", "--connect", zk.connectString(), "--key", key.key(),
                "--by", "ops@example", "--reason", "ticket 4711: the customer saw nothing"));
        args.addAll(List.of(after));
        return ops.run(args.toArray(String[]::new));
    }

    List<String> authorizations() throws Exception {
        return curator.getChildren().forPath(key.path(NAMESPACE) + "/authorizations");
    }

    @Test
    void sameAuthorizeAgain_afterAWorkerUsedIt_isRefusedNamingTheScopeDeliveredSince_andNothingIsDeliveredAgain()
            throws Exception {
        // Given a key consumed in scope 0, authorized once, and redelivered in scope 1 with that authorization
        assertThat(run(LEDGER_LINE).exit()).isEqualTo(0);
        Cli.Result first = authorize("--after", "0");
        assertThat(first.exit()).as(first.toString()).isEqualTo(0);
        assertThat(first.stdoutJson().get("path").asText()).endsWith("/authorizations/after-0");
        Cli.Result redelivered = run(LEDGER_LINE);
        assertThat(redelivered.exit()).as(redelivered.toString()).isEqualTo(0);
        assertThat(redelivered.runJson().get("scope").asInt()).isEqualTo(1);

        // When the same command runs again, and another worker comes
        Cli.Result repeat = authorize("--after", "0");
        List<String> written = authorizations();
        Cli.Result third = run(LEDGER_LINE);

        // Then the repeat is refused, names the scope delivered since, and writes nothing; the worker stops sent
        assertThat(written).as("authorizations after the repeat (" + repeat + "); then the third worker: " + third
                + "; ledger " + ledgerLines()).containsExactly("after-0");
        assertThat(repeat.exit()).as(repeat.toString()).isEqualTo(2);
        assertThat(repeat.stderr()).contains("scope 0 of key " + key.key() + " is not its latest scope")
                .contains("scope 1 (opened by after-0) is sent_verified").contains("nothing was written");
        assertThat(third.exit()).as(third.toString()).isEqualTo(10);
        assertThat(ledgerLines()).hasSize(2);
    }

    @Test
    void authorizeWithoutAfter_isAUsageError_pointingAtInspect_andWritesNothing() throws Exception {
        // Given a consumed key
        assertThat(run(LEDGER_LINE).exit()).isEqualTo(0);

        // When an operator leaves out --after
        Cli.Result bare = authorize();

        // Then exit 2 names --after and where N comes from; nothing is written
        assertThat(bare.exit()).as(bare.toString()).isEqualTo(2);
        assertThat(bare.stderr()).contains("--after=N").contains("oncegate inspect");
        assertThat(authorizations()).isEmpty();
    }

    @Test
    void authorizeAfterAScopeThatDoesNotExist_isRefused_andWritesNothing() throws Exception {
        // Given a key consumed in scope 0
        assertThat(run(LEDGER_LINE).exit()).isEqualTo(0);

        // When an operator names scope 1, which nobody opened
        Cli.Result early = authorize("--after", "1");

        // Then exit 2 says there is no scope 1; nothing is written and the next worker stops
        assertThat(early.exit()).as(early.toString()).isEqualTo(2);
        assertThat(early.stderr()).contains("has no scope 1").contains("its latest scope is 0 (sent_verified)");
        assertThat(authorizations()).isEmpty();
        assertThat(run(LEDGER_LINE).exit()).isEqualTo(10);
        assertThat(ledgerLines()).hasSize(1);
    }
}
