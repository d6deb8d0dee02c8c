package dev.oncegate.cli;

import java.time.Duration;

import dev.oncegate.Operator;
import dev.oncegate.ScopeState;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code oncegate list}: keys with their current state, one JSON object a line, in key order. The
 * backlog questions ({@code --state armed}, {@code --state send_status_unknown}) are answered from the
 * backlog index, each key it names confirmed by decoding its own records, so they cost what the backlog
 * costs; everything else (and {@code --walk}) walks the hash buckets one by one (each a small child
 * list) and keeps going past unreadable keys, which it reports: an operator's tool, never a worker's
 * hot path. Each line says which it came from ({@code "source":"index"|"walk"}), and so does stderr.
 */
@Command(name = "list", mixinStandardHelpOptions = true,
        description = "List keys by current state, one JSON object a line, in key order. A key with an unreadable"
                + " record is listed whatever the filters (its state and age are unknown), with \"state\":null and"
                + " its \"problem\". --state armed and --state send_status_unknown read the backlog index (each key"
                + " it names is confirmed by its own records; the cost follows the backlog, not the number of keys);"
                + " other queries, --walk, and namespaces without an index walk every key. Each line's \"source\""
                + " says which.",
        footer = {"", "The index is a hint kept by the protocol's own writes: a key it lacks (a zkCli authorization, an"
                + " older release's write, an unreadable record no reader has met, an entry removed with the worker"
                + " credential) is missing from an index answer until the exporter's walk puts it back; --walk reads"
                + " every key.",
                "Exit codes: 0 done; 2 bad input; 13 ZooKeeper unavailable, no permission, the namespace has no"
                + " genesis, or an unreadable key was met (every line is printed all the same)."})
final class ListCommand extends NamespaceCommand {

    @Option(names = "--state", paramLabel = "STATE",
            description = "Only keys in this state: open, leased, armed, sent_verified, send_status_unknown (which"
                    + " includes armed keys: they read as unknown to every worker), not_sent.")
    String state;

    @Option(names = "--older-than", paramLabel = "DURATION", converter = Durations.class,
            description = "Only keys that have been in their state at least this long: the server's time of the"
                    + " record the state rests on, against this host's clock (which only filters what is shown).")
    Duration olderThan;

    @Option(names = "--limit", paramLabel = "N", description = "Print at most N keys.")
    Integer limit;

    @Option(names = "--walk", description = "Walk every key even for --state armed or send_status_unknown (the"
            + " authoritative answer; its cost follows the number of keys).")
    boolean walk;

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
        boolean backlogQuestion = !walk && (wanted == ScopeState.ARMED || wanted == ScopeState.SEND_STATUS_UNKNOWN);
        if (backlogQuestion) {
            Operator.BacklogReport report = zookeeper.withOperator(operator -> operator.backlog(query, print("index")));
            if (report.indexed()) {
                System.err.println("oncegate list: from the backlog index: " + report.entries() + " entries named "
                        + report.read() + " keys, " + report.listed() + " listed after reading their records"
                        + (report.stale() > 0 ? ", " + report.stale() + " stale entries ignored" : "")
                        + " (--walk reads every key)");
                if (report.unreadable() > 0) {
                    System.err.println("oncegate list: " + report.unreadable() + " listed keys have an unreadable record"
                            + " (see their \"problem\"; `oncegate inspect` shows each)");
                    return ExitCode.STOP_UNAVAILABLE;
                }
                return ExitCode.OK;
            }
            System.err.println("oncegate list: this namespace has no backlog index (initialised by an older release;"
                    + " `oncegate init` adds it): walking every key");
        }
        Operator.ListReport report = zookeeper.withOperator(operator -> operator.list(query, print("walk")));
        if (report.unreadable() > 0) {
            System.err.println("oncegate list: " + report.unreadable() + " of " + report.scanned()
                    + " keys have an unreadable record (see their \"problem\"; `oncegate inspect` shows each)");
            return ExitCode.STOP_UNAVAILABLE;
        }
        return ExitCode.OK;
    }

    /** Prints a key as one JSON line, with where the answer came from. */
    private static java.util.function.Consumer<Operator.KeySummary> print(String source) {
        return summary -> {
            java.util.Map<String, Object> line = Render.summary(summary);
            line.put("source", source);
            System.out.println(Json.line(line));
        };
    }
}
