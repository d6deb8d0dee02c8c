package dev.oncegate.cli;

import java.time.Duration;

import dev.oncegate.Operator;
import dev.oncegate.ScopeState;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code oncegate list}: keys with their current state, one JSON object a line, in key order.
 * Walks the hash buckets one by one (each a small child list) and keeps going past unreadable
 * keys, which it reports: an operator's tool, never a worker's hot path.
 */
@Command(name = "list", mixinStandardHelpOptions = true,
        description = "List keys by current state, one JSON object a line, in key order. A key with an unreadable"
                + " record is listed whatever the filters (its state and age are unknown), with \"state\":null and"
                + " its \"problem\".",
        footer = {"", "Exit codes: 0 done; 2 bad input; 13 ZooKeeper unavailable, no permission, the namespace has no"
                + " genesis, or an unreadable key was met (every line is printed all the same)."})
final class ListCommand extends NamespaceCommand {

    @Option(names = "--state", paramLabel = "STATE",
            description = "Only keys in this state: open, leased, armed, sent_verified, send_status_unknown (which"
                    + " includes armed keys: they read as unknown to every worker), not_sent.")
    String state;

    @Option(names = "--older-than", paramLabel = "DURATION", converter = Durations.class,
            description = "Only keys that have been in their state at least this long.")
    Duration olderThan;

    @Option(names = "--limit", paramLabel = "N", description = "Print at most N keys.")
    Integer limit;

    @Override
    public Integer call() throws Exception {
        ScopeState wanted;
        try {
            wanted = state == null ? null : ScopeState.fromWireName(state);
        } catch (IllegalArgumentException e) {
            throw usage("--" + e.getMessage());
        }
        if (limit != null && limit < 1) {
            throw usage("--limit: must be at least 1, got " + limit);
        }
        Operator.ListQuery query = new Operator.ListQuery(wanted, olderThan, limit == null ? 0 : limit);
        Operator.ListReport report = zookeeper.withOperator(operator ->
                operator.list(query, summary -> System.out.println(Json.line(Render.summary(summary)))));
        if (report.unreadable() > 0) {
            System.err.println("oncegate list: " + report.unreadable() + " of " + report.scanned()
                    + " keys have an unreadable record (see their \"problem\"; `oncegate inspect` shows each)");
            return ExitCode.STOP_UNAVAILABLE;
        }
        return ExitCode.OK;
    }
}
