package dev.oncegate.cli;

import java.util.Map;

import dev.oncegate.KeyHistory;
import dev.oncegate.Operator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code oncegate authorize}: an operator's redelivery authorization for the key's consumed
 * latest scope n, {@code KEY/authorizations/after-<n>} — the same record as the zkCli recipe
 * {@code create KEY/authorizations/after-<n> '{"by":…,"reason":…}'}. One authorization per
 * consumed scope: a retried create recognises itself, and a second operator (or a pasted recipe)
 * meets the existing record and writes nothing.
 */
@Command(name = "authorize", mixinStandardHelpOptions = true,
        description = "Authorize one redelivery of a consumed key: writes KEY/authorizations/after-<n> for its"
                + " consumed latest scope n, which opens scope n+1 once, for one executor.",
        footer = {"", "Exit codes: 0 written, or a usable authorization for that scope exists already (\"created\":false,"
                + " nothing written); 2 the key does not exist or is not consumed, or the existing after-<n> will never"
                + " be honoured (premature or unreadable: an admin must remove it first); 13 ZooKeeper unavailable or"
                + " this identity may not authorize (the operator role)."})
final class AuthorizeCommand extends NamespaceCommand {

    @Option(names = "--key", paramLabel = "KEY", required = true, description = "The key, 64 lower-case hex characters.")
    String key;

    @Option(names = "--by", paramLabel = "WHO", required = true, description = "Who authorizes the redelivery.")
    String by;

    @Option(names = "--reason", paramLabel = "TEXT", required = true, description = "Why a new intent is justified.")
    String reason;

    @Override
    public Integer call() throws Exception {
        EffectKeyOptions.keyOption(key);
        if (by.isBlank()) {
            throw usage("--by: must name who authorizes");
        }
        if (reason.isBlank()) {
            throw usage("--reason: must say why");
        }
        Operator.Authorized done = zookeeper.withOperator(operator -> operator.authorize(key, by, reason));
        Map<String, Object> out = Json.object();
        out.put("key", key);
        out.put("path", done.path());
        out.put("after", done.after());
        out.put("created", done.created());
        out.put("status", done.status().wireName());
        out.put("by", done.by());
        out.put("reason", done.reason());
        System.out.println(Json.line(out));
        if (!done.created() && done.status() != KeyHistory.AuthorizationStatus.UNUSED
                && done.status() != KeyHistory.AuthorizationStatus.USED) {
            System.err.println("oncegate authorize: " + done.path() + " exists already and will never be honoured ("
                    + done.status().wireName() + "): an admin must remove it (zkCli: delete " + done.path()
                    + ") before scope " + done.after() + " can be authorized");
            return ExitCode.USAGE;
        }
        return ExitCode.OK;
    }
}
