package dev.oncegate.cli;

import java.util.Map;

import dev.oncegate.KeyHistory;
import dev.oncegate.Operator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code oncegate authorize}: an operator's redelivery authorization for the key's consumed
 * latest scope N, named on the command line ({@code --after N}), written as
 * {@code KEY/authorizations/after-<N>} — the same record as the zkCli recipe
 * {@code create KEY/authorizations/after-<N> '{"by":…,"reason":…}'}. Running it twice authorizes
 * once: a repeat after a worker used the authorization finds scope N+1 latest and is refused
 * (exit 2) naming it; a retried create recognises itself, and a second operator (or a pasted
 * recipe) meets the existing record and writes nothing.
 */
@Command(name = "authorize", mixinStandardHelpOptions = true,
        description = "Authorize one redelivery of a consumed key after its latest scope N (`oncegate inspect` prints"
                + " N): writes KEY/authorizations/after-<N>, which opens scope N+1 once, for one executor. Running it"
                + " twice authorizes once: after a worker used the authorization, scope N is no longer the latest and"
                + " the same command is refused.",
        footer = {"", "Exit codes: 0 written, or after-<N> exists already and will be (or was) honoured (\"created\":false,"
                + " nothing written); 2 --after is missing, N is not the key's latest scope (the message names the scopes"
                + " opened since: the redelivery happened or is under way), the key does not exist or is not consumed,"
                + " or the existing after-<N> will never be honoured (premature or unreadable: an admin must remove it"
                + " first), nothing written; 13 ZooKeeper unavailable or this identity may not authorize (the operator"
                + " role)."})
final class AuthorizeCommand extends NamespaceCommand {

    @Option(names = "--key", paramLabel = "KEY", required = true, description = EffectKeyOptions.KEY_DESCRIPTION)
    String key;

    @Option(names = "--after", paramLabel = "N", required = true,
            description = "The consumed scope this redelivery follows: the key's latest scope, as `oncegate inspect --key"
                    + " KEY` shows it (the after-<N> of its authorize_command). Refused unless it is still the latest.")
    int after;

    @Option(names = "--by", paramLabel = "WHO", required = true, description = "Who authorizes the redelivery.")
    String by;

    @Option(names = "--reason", paramLabel = "TEXT", required = true, description = "Why a new intent is justified.")
    String reason;

    @Override
    public Integer call() throws Exception {
        String key = EffectKeyOptions.keyOption(this.key, zookeeper.namespace());
        if (by.isBlank()) {
            throw usage("--by: must name who authorizes");
        }
        if (reason.isBlank()) {
            throw usage("--reason: must say why");
        }
        Operator.Authorized done = zookeeper.withOperator(Access.Role.OPERATOR, "authorize", operator -> operator.authorize(key, after, by, reason));
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
