package dev.oncegate.cli;

import java.util.Map;

import dev.oncegate.Operator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code oncegate reconcile}: after a person checked the destination, a key whose latest scope
 * is {@code send_status_unknown} (or armed without outcome) is read as {@code sent_verified}.
 * Never produces {@code not_sent}, never reopens the key; the original records stay beside it.
 */
@Command(name = "reconcile", mixinStandardHelpOptions = true,
        description = "Record that the destination shows the effect delivered: the key's send_status_unknown (or armed"
                + " without outcome) latest scope reads as sent_verified from now on. Never reopens the key; the original"
                + " records stay. It races nothing: an executor still in its action can no longer record an outcome, and an"
                + " executor's not_sent, or an authorization's new scope, that came first makes it refuse (exit 2).",
        footer = {"", "Exit codes: 0 reconciled (or already reconciled: \"created\":false); 2 the key does not exist or its"
                + " latest scope is not send_status_unknown or armed; 13 ZooKeeper unavailable or this identity may not"
                + " reconcile (the operator role)."})
final class ReconcileCommand extends NamespaceCommand {

    @Option(names = "--key", paramLabel = "KEY", required = true, description = EffectKeyOptions.KEY_DESCRIPTION)
    String key;

    @Option(names = "--by", paramLabel = "WHO", required = true, description = "Who checked the destination.")
    String by;

    @Option(names = "--evidence", paramLabel = "TEXT", required = true,
            description = "What the destination showed (a message id, a screenshot's location, …).")
    String evidence;

    @Override
    public Integer call() throws Exception {
        String key = EffectKeyOptions.keyOption(this.key, zookeeper.namespace());
        if (by.isBlank()) {
            throw usage("--by: must name who checked the destination");
        }
        if (evidence.isBlank()) {
            throw usage("--evidence: must say what the destination showed");
        }
        Operator.Reconciled done = zookeeper.withOperator(Access.Role.OPERATOR, "reconcile", operator -> operator.reconcile(key, by, evidence));
        Map<String, Object> out = Json.object();
        out.put("key", key);
        out.put("path", done.path());
        out.put("scope", done.scope());
        out.put("created", done.created());
        out.put("state", "sent_verified");
        out.put("reconciliation", Render.reconciliation(done.reconciliation()));
        System.out.println(Json.line(out));
        return ExitCode.OK;
    }
}
