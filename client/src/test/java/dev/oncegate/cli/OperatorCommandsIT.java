package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

/**
 * The operator's commands on keys that {@code oncegate run} processes decided: inspect and list
 * never hide a key behind one bad record (and say so in their exit code), reconcile, retention,
 * access control turned on after the fact, and bad input or an unknown namespace refused with
 * the documented codes. The operator's commands run in this JVM ({@link Cli#inProcess}); the
 * workers are real processes.
 */
class OperatorCommandsIT extends CliFixture {

    Cli.Result ops(String... args) {
        String[] all = new String[args.length + 2];
        all[0] = args[0];
        all[1] = "--connect";
        System.arraycopy(args, 1, all, 3, args.length - 1);
        all[2] = zk.connectString();
        return ops.run(all);
    }

    static List<JsonNode> lines(Cli.Result r) {
        return r.stdout().lines().map(l -> {
            try {
                return Cli.JSON.readTree(l);
            } catch (Exception e) {
                throw new AssertionError(l, e);
            }
        }).toList();
    }

    @Test
    void inspect_corruptRecord_showsItWithTheRest_andExits13() throws Exception {
        assertThat(run(LEDGER_LINE).exit()).isZero();
        curator.setData().forPath(key.path(NAMESPACE) + "/0/armed/outcome", "{\"v\":2,\"outcome\":\"sent_verif".getBytes(StandardCharsets.UTF_8));

        Cli.Result inspect = ops("inspect", "--key", key.key());

        assertThat(inspect.exit()).as(inspect.toString()).isEqualTo(13);
        JsonNode story = inspect.stdoutJson();
        assertThat(story.get("readable").asBoolean()).isFalse();
        assertThat(story.get("record").get("destination").asText()).as("the rest is shown").isNotEmpty();
        JsonNode bad = story.get("unreadable").get(0);
        assertThat(bad.get("path").asText()).isEqualTo(key.path(NAMESPACE) + "/0/armed/outcome");
        assertThat(bad.get("raw").asText()).startsWith("{\"v\":2,\"outcome\"");
        assertThat(bad.get("problem").asText()).isNotBlank();
        assertThat(bad.get("repair").asText()).contains("do not delete it");
        assertThat(story.get("next_attempt").asText()).contains("exit 13");
        assertThat(run(LEDGER_LINE).exit()).as("workers fail closed on it").isEqualTo(13);
        assertThat(ledgerLines()).hasSize(1);
    }

    @Test
    void list_unknownIncludesArmed_walkShowsAnUnreadableKeyWhateverTheFilter_andExits13ForIt() throws Exception {
        assertThat(run(LEDGER_LINE + "; exit 9").exit()).isEqualTo(1);
        String unknownKey = key.key();
        Path other = Files.writeString(dir.resolve("other.txt"), "another " + System.nanoTime());
        Cli.Result second = cli.run("run", "--connect", zk.connectString(), "--dest", dest, "--file", other.toString(),
                "--", "sh", "-c", LEDGER_LINE);
        assertThat(second.exit()).isZero();
        String brokenKey = second.runJson().get("key").asText();
        String brokenPath = NAMESPACE + "/keys/" + brokenKey.substring(0, 2) + "/" + brokenKey.substring(2, 4) + "/" + brokenKey;
        curator.setData().forPath(brokenPath, "garbage".getBytes(StandardCharsets.UTF_8));

        Cli.Result unknown = ops("list", "--state", "send_status_unknown", "--walk");
        Cli.Result all = ops("list");
        Cli.Result fromIndex = ops("list", "--state", "send_status_unknown");

        // The backlog index answers at once, confirmed by the records; an unreadable record no reader has met
        // is not in it (the exporter's walk enters it: BacklogIndexTest), so --walk is the authoritative answer.
        assertThat(lines(fromIndex)).extracting(l -> l.get("key").asText()).contains(unknownKey).doesNotContain(brokenKey);
        assertThat(lines(fromIndex)).allSatisfy(l -> assertThat(l.get("source").asText()).isEqualTo("index"));
        assertThat(fromIndex.stderr()).contains("from the backlog index");
        assertThat(lines(unknown)).allSatisfy(l -> assertThat(l.get("source").asText()).isEqualTo("walk"));
        assertThat(lines(unknown)).extracting(l -> l.get("key").asText()).contains(unknownKey)
                .as("a filter never hides an unreadable key: it may be in any state").contains(brokenKey);
        assertThat(lines(unknown)).filteredOn(l -> l.get("key").asText().equals(brokenKey)).singleElement()
                .satisfies(l -> assertThat(l.get("state").isNull()).isTrue());
        assertThat(unknown.exit()).as(unknown.toString()).isEqualTo(13);
        assertThat(all.exit()).as(all.toString()).isEqualTo(13);
        assertThat(lines(all)).filteredOn(l -> l.get("key").asText().equals(brokenKey)).singleElement()
                .satisfies(l -> assertThat(l.get("problem").asText()).contains(brokenPath));
        assertThat(all.stderr()).contains("unreadable");
    }

    @Test
    void reconcile_unknownBecomesSentVerified_andRefusesAVerifiedKey() throws Exception {
        assertThat(run(LEDGER_LINE + "; exit 9").exit()).isEqualTo(1);

        Cli.Result reconciled = ops("reconcile", "--key", key.key(), "--by", "alice", "--evidence", "message 1234 arrived");
        Cli.Result again = ops("reconcile", "--key", key.key(), "--by", "bob", "--evidence", "seen it");

        assertThat(reconciled.exit()).as(reconciled.toString()).isZero();
        assertThat(reconciled.stdoutJson().get("created").asBoolean()).isTrue();
        assertThat(again.exit()).isZero();
        assertThat(again.stdoutJson().get("created").asBoolean()).isFalse();
        Cli.Result next = run(LEDGER_LINE);
        assertThat(next.exit()).as(next.toString()).isEqualTo(10);
        assertThat(ops("inspect", "--key", key.key()).stdoutJson().get("scopes").get(0).get("outcome").get("outcome")
                .asText()).as("the original record stays").isEqualTo("send_status_unknown");
        assertThat(ledgerLines()).hasSize(1);
    }

    @Test
    void gc_dryRunThenRemoval_theRemovedKeyIsOpenAgain() throws Exception {
        assertThat(run(LEDGER_LINE).exit()).isZero();

        Cli.Result dry = ops("gc", "--older-than", "1ms", "--dry-run");
        assertThat(dry.exit()).as(dry.toString()).isZero();
        assertThat(lines(dry)).filteredOn(l -> l.get("key").asText().equals(key.key())).singleElement()
                .satisfies(l -> assertThat(l.get("removed").asBoolean()).isFalse());
        assertThat(curator.checkExists().forPath(key.path(NAMESPACE))).isNotNull();

        Cli.Result gc = ops("gc", "--older-than", "1ms");
        assertThat(lines(gc)).filteredOn(l -> l.get("key").asText().equals(key.key())).singleElement()
                .satisfies(l -> assertThat(l.get("removed").asBoolean()).isTrue());
        assertThat(curator.checkExists().forPath(key.path(NAMESPACE))).isNull();
        assertThat(run(LEDGER_LINE).exit()).as("open again: delivered again").isZero();
        assertThat(ledgerLines()).hasSize(2);
    }

    @Test
    void unknownNamespace_isAnError_forInspectListAndAuthorize() {
        for (String[] args : new String[][] {{"inspect", "--namespace", "/nowhere", "--key", key.key()},
                {"list", "--namespace", "/nowhere"},
                {"authorize", "--namespace", "/nowhere", "--key", key.key(), "--after", "0", "--by", "a", "--reason", "b"}}) {
            Cli.Result r = ops(args);
            assertThat(r.exit()).as(r.toString()).isEqualTo(13);
            assertThat(r.stderr()).contains("oncegate init");
            assertThat(r.stdout()).isEmpty();
        }
    }

    @Test
    void malformedCredentials_areBadInput() throws Exception {
        Path file = Files.writeString(dir.resolve("auth"), "nocolon\n");
        Cli.Result noColon = ops("inspect", "--key", key.key(), "--auth", "nopassword");
        Cli.Result both = ops("inspect", "--key", key.key(), "--auth", "a:b", "--auth-file", file.toString());
        Cli.Result badFile = ops("inspect", "--key", key.key(), "--auth-file", file.toString());
        Cli.Result missingFile = ops("inspect", "--key", key.key(), "--auth-file", dir.resolve("absent").toString());

        assertThat(List.of(noColon, both, badFile, missingFile)).allSatisfy(r -> {
            assertThat(r.exit()).as(r.toString()).isEqualTo(2);
            assertThat(r.stderr()).containsAnyOf("--auth", "USER:PASSWORD");
        });
    }

    @Test
    void acl_turnsAccessControlOnAfterTheFact_andTheHistoryStays() throws Exception {
        String ns = "/turn-on";
        Cli.Result init = ops("init", "--namespace", ns);
        assertThat(init.exit()).isZero();
        assertThat(init.stdoutJson().get("acls").asBoolean()).isFalse();
        Cli.Result delivered = cli.run("run", "--connect", zk.connectString(), "--namespace", ns, "--dest", dest,
                "--file", content.toString(), "--", "sh", "-c", LEDGER_LINE);
        assertThat(delivered.exit()).isZero();

        Cli.Result acl = ops("acl", "--namespace", ns, "--quiet", "--worker", "w:1", "--operator", "o:2", "--admin", "a:3");

        assertThat(acl.exit()).as(acl.toString()).isZero();
        assertThat(acl.stdoutJson().get("znodes").asLong()).isGreaterThan(5);
        Cli.Result stranger = cli.run("run", "--connect", zk.connectString(), "--namespace", ns, "--dest", dest,
                "--file", content.toString(), "--", "sh", "-c", LEDGER_LINE);
        Cli.Result worker = cli.run("run", "--connect", zk.connectString(), "--namespace", ns, "--auth", "w:1",
                "--dest", dest, "--file", content.toString(), "--", "sh", "-c", LEDGER_LINE);
        assertThat(stranger.exit()).as(stranger.toString()).isEqualTo(13);
        assertThat(worker.exit()).as("the history stays: " + worker).isEqualTo(10);
        assertThat(ledgerLines()).hasSize(1);
    }
}
