package dev.oncegate.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;

import dev.oncegate.Gate;
import dev.oncegate.KeyHistory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code oncegate list}: keys with their current state, one JSON object a line, in key order.
 * Walks the hash buckets (each a small child list), reading every key like {@code inspect}:
 * an operator's tool, never a worker's hot path.
 */
@Command(name = "list", mixinStandardHelpOptions = true,
        description = "List keys by current state, one JSON object a line.")
final class ListCommand implements Callable<Integer> {

    static final Set<String> STATES = Set.of("open", "leased", "armed", "sent_verified", "send_status_unknown");

    @Spec
    CommandSpec spec;

    @Mixin
    CommonOptions common;

    @Mixin
    ConnectOptions connection;

    @Mixin
    StateOptions stateOptions;

    @Option(names = "--state", paramLabel = "STATE",
            description = "Only keys in this state: open, leased, armed (no outcome: reads as unknown), sent_verified,"
                    + " send_status_unknown.")
    String state;

    @Option(names = "--limit", paramLabel = "N", description = "Print at most N keys.")
    Integer limit;

    @Override
    public Integer call() throws Exception {
        String namespace = common.namespace();
        String connect = connection.connect();
        if (state != null && !STATES.contains(state)) {
            throw new ParameterException(spec.commandLine(), "--state: unknown state '" + state + "'; one of " + STATES);
        }
        if (limit != null && limit < 1) {
            throw new ParameterException(spec.commandLine(), "--limit: must be at least 1, got " + limit);
        }
        try (ZooKeeperConnection zk = ZooKeeperConnection.connected(connect, connection.connectTimeout, connection.zkClientConfig());
             Gate gate = zk.gate(namespace, stateOptions)) {
            CuratorFramework client = zk.client();
            String keys = namespace + "/keys";
            int printed = 0;
            for (String b1 : children(client, keys)) {
                for (String b2 : children(client, keys + "/" + b1)) {
                    for (String key : children(client, keys + "/" + b1 + "/" + b2)) {
                        if (limit != null && printed >= limit) {
                            return ExitCode.OK;
                        }
                        KeyHistory history = gate.inspect(key);
                        if (state != null && !state.equals(history.state())) {
                            continue;
                        }
                        System.out.println(Json.line(summary(history)));
                        printed++;
                    }
                }
            }
            return ExitCode.OK;
        }
    }

    private static Map<String, Object> summary(KeyHistory history) {
        Map<String, Object> out = Json.object();
        out.put("key", history.key());
        out.put("path", history.path());
        out.put("state", history.state());
        out.put("scopes", history.scopes().size());
        Map<String, Object> record = history.record() == null ? Map.of() : history.record();
        out.put("provider", record.get("provider"));
        out.put("identity", record.get("identity"));
        out.put("destination", record.get("destination"));
        out.put("sha256", record.get("sha256"));
        out.put("created", record.get("created"));
        return out;
    }

    private static List<String> children(CuratorFramework client, String path) throws Exception {
        try {
            List<String> names = new ArrayList<>(client.getChildren().forPath(path));
            names.sort(null);
            return names;
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }
}
