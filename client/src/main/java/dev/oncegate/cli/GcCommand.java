package dev.oncegate.cli;

import java.time.Duration;
import java.util.Map;

import dev.oncegate.Operator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code oncegate gc}: retention. Removes the records of keys whose latest scope ended
 * {@code sent_verified} or {@code send_status_unknown} longer ago than {@code --older-than}, one
 * JSON line per key. A removed key is open again: the next contender for it delivers again.
 */
@Command(name = "gc", mixinStandardHelpOptions = true,
        description = "Remove the records of consumed keys (sent_verified, send_status_unknown) past retention, printing"
                + " one JSON line per key. A removed key is OPEN AGAIN: the next contender for that effect delivers it"
                + " again. Open, leased and armed scopes, unreadable keys and keys in an election are never touched. Ages"
                + " are the ZooKeeper server's (the time of the record that decided a key, against a probe znode's), never a"
                + " worker's or this host's clock; a key whose record's own time disagrees with the server's by more than"
                + " ten minutes is kept and reported (\"skipped\").",
        footer = {"", "Exit codes: 0 done; 2 bad input; 13 ZooKeeper unavailable or this identity may not delete"
                + " (the admin role)."})
final class GcCommand extends NamespaceCommand {

    @Option(names = "--older-than", paramLabel = "DURATION", required = true, converter = Durations.class,
            description = "Remove keys consumed at least this long ago by the server's clock (e.g. 90d).")
    Duration olderThan;

    @Option(names = "--dry-run", description = "Print what would be removed; remove nothing.")
    boolean dryRun;

    @Override
    public Integer call() throws Exception {
        if (olderThan.isZero() || olderThan.isNegative()) {
            throw usage("--older-than: must be more than zero");
        }
        Operator.GcReport report = zookeeper.withOperator(Access.Role.ADMIN, "gc", operator -> operator.gc(olderThan, dryRun, entry -> {
            Map<String, Object> out = Json.object();
            out.put("key", entry.key());
            out.put("path", entry.path());
            out.put("state", Render.state(entry.state()));
            out.put("since", Json.instant(entry.since()));
            out.put("removed", entry.removed());
            out.put("dry_run", dryRun);
            out.put("skipped", entry.skipped());
            System.out.println(Json.line(out));
        }));
        System.err.println("oncegate gc: " + (dryRun ? "would remove " : "removed ") + report.removed() + " of "
                + report.scanned() + " keys" + (report.skipped() > 0 ? ", skipped " + report.skipped() : ""));
        return ExitCode.OK;
    }
}
