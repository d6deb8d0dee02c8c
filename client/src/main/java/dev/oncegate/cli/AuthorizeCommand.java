package dev.oncegate.cli;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.Callable;

import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.KeyHistory;
import org.apache.zookeeper.CreateMode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code oncegate authorize}: an operator's redelivery authorization, the same record as the
 * zkCli recipe {@code create -s <keyPath>/authorizations/auth- '{"by":…,"reason":…}'}. Refused
 * (exit 2) unless the key is consumed and has no unused authorization.
 *
 * <p>The checks are a read, then a create: two operators authorizing the same key at the same
 * moment can leave two authorizations; the gate uses one per new scope, oldest first.
 */
@Command(name = "authorize", mixinStandardHelpOptions = true,
        description = "Authorize one redelivery of a consumed key (opens one new scope, used once).")
final class AuthorizeCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    CommonOptions common;

    @Mixin
    ConnectOptions connection;

    private static final java.util.Set<String> CONSUMED = java.util.Set.of("sent_verified", "send_status_unknown", "armed");

    @Option(names = "--key", paramLabel = "KEY", required = true, description = "The key, 64 lower-case hex characters.")
    String key;

    @Option(names = "--by", paramLabel = "WHO", required = true, description = "Who authorizes the redelivery.")
    String by;

    @Option(names = "--reason", paramLabel = "TEXT", required = true, description = "Why a new intent is justified.")
    String reason;

    @Override
    public Integer call() throws Exception {
        String namespace = common.namespace();
        String connect = connection.connect();
        try {
            EffectKey.requireKeyText(key);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--" + e.getMessage(), e);
        }
        if (by.isBlank()) {
            throw new ParameterException(spec.commandLine(), "--by: must name who authorizes");
        }
        if (reason.isBlank()) {
            throw new ParameterException(spec.commandLine(), "--reason: must say why");
        }
        try (ZooKeeperConnection zk = ZooKeeperConnection.connected(connect, connection.connectTimeout);
             Gate gate = Gate.builder(zk.client()).namespace(namespace).connectTimeout(connection.connectTimeout).build()) {
            KeyHistory history = gate.inspect(key);
            if (!history.exists()) {
                throw new IllegalArgumentException("refused: key " + key + " does not exist in " + namespace);
            }
            // Armed without an outcome is consumed too (it reads as send_status_unknown): after a crash
            // mid-crossing it stays that way for good, and only an authorization can open a new scope.
            if (!CONSUMED.contains(history.state())) {
                throw new IllegalArgumentException("refused: key " + key + " is " + history.state()
                        + ", not consumed (sent_verified, send_status_unknown, or armed without outcome)");
            }
            for (KeyHistory.AuthorizationRecord a : history.authorizations()) {
                if (a.usedBy() < 0) {
                    throw new IllegalArgumentException("refused: key " + key + " already has an unused authorization "
                            + a.name() + " by " + a.record().get("by"));
                }
            }
            Map<String, Object> record = Json.object();
            record.put("by", by);
            record.put("reason", reason);
            String created = zk.client().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL)
                    .forPath(history.path() + "/authorizations/auth-", Json.line(record).getBytes(StandardCharsets.UTF_8));
            Map<String, Object> out = Json.object();
            out.put("key", key);
            out.put("path", created);
            out.put("by", by);
            out.put("reason", reason);
            System.out.println(Json.line(out));
            return ExitCode.OK;
        }
    }
}
