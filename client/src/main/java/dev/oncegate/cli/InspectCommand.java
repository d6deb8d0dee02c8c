package dev.oncegate.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.KeyHistory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code oncegate inspect}: everything recorded about one key, read without a lock. */
@Command(name = "inspect", mixinStandardHelpOptions = true,
        description = "Print every scope of a key (state, lease, armed and outcome records), its authorizations"
                + " (used, unused, stale, premature, unreadable, ignored), and for a consumed key the zkCli line that"
                + " authorizes one redelivery.")
final class InspectCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    CommonOptions common;

    @Mixin
    ConnectOptions connection;

    @Mixin
    StateOptions state;

    @Option(names = "--key", paramLabel = "KEY", description = "The key, 64 lower-case hex characters.")
    String key;

    @Mixin
    EffectKeyOptions effect;

    @Override
    public Integer call() throws InterruptedException {
        String namespace = common.namespace();
        String connect = connection.connect();
        String keyText = resolveKey();
        try (ZooKeeperConnection zk = ZooKeeperConnection.connected(connect, connection.connectTimeout, connection.zkClientConfig());
             Gate gate = zk.gate(namespace, state)) {
            System.out.println(Json.line(render(gate.inspect(keyText))));
            return ExitCode.OK;
        }
    }

    private String resolveKey() {
        if (key != null && effect.anyGiven()) {
            throw new ParameterException(spec.commandLine(),
                    "--key and --dest/--dest-name/--file are mutually exclusive: name the key one way");
        }
        if (key != null) {
            try {
                return EffectKey.requireKeyText(key);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--" + e.getMessage(), e);
            }
        }
        if (!effect.anyGiven()) {
            throw new ParameterException(spec.commandLine(),
                    "missing the key: give --key KEY, or --dest/--dest-name with --file");
        }
        return effect.resolve(spec).key();
    }

    /** The {@link KeyHistory} as JSON, field names in snake case. */
    static Map<String, Object> render(KeyHistory history) {
        Map<String, Object> out = Json.object();
        out.put("key", history.key());
        out.put("path", history.path());
        out.put("exists", history.exists());
        out.put("record", history.record());
        out.put("state", history.state());
        out.put("authorize_command", history.authorizeCommand());
        List<Object> scopes = new ArrayList<>();
        for (KeyHistory.ScopeHistory s : history.scopes()) {
            Map<String, Object> m = Json.object();
            m.put("scope", s.scope());
            m.put("state", s.state());
            m.put("version", s.version());
            m.put("mzxid", s.mzxid());
            m.put("data", s.data());
            m.put("armed", s.armed());
            m.put("outcome", s.outcome());
            scopes.add(m);
        }
        out.put("scopes", scopes);
        List<Object> auths = new ArrayList<>();
        for (KeyHistory.AuthorizationRecord a : history.authorizations()) {
            Map<String, Object> m = Json.object();
            m.put("name", a.name());
            m.put("after", a.after() < 0 ? null : a.after());
            m.put("status", a.status());
            m.put("record", a.record());
            m.put("used_by", a.usedBy() < 0 ? null : a.usedBy());
            auths.add(m);
        }
        out.put("authorizations", auths);
        return out;
    }
}
