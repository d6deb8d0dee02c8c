package dev.oncegate.cli;

import java.util.Map;
import java.util.concurrent.Callable;

import dev.oncegate.Gate;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code oncegate init}: writes the namespace's genesis record once; a second run changes nothing. */
@Command(name = "init", mixinStandardHelpOptions = true,
        description = "Write the namespace's genesis record (idempotent: an initialised namespace is left as it is).")
final class InitCommand implements Callable<Integer> {

    @Mixin
    CommonOptions common;

    @Mixin
    ConnectOptions connection;

    @Mixin
    StateOptions state;

    @Override
    public Integer call() throws InterruptedException {
        String namespace = common.namespace();
        String connect = connection.connect();
        try (ZooKeeperConnection zk = ZooKeeperConnection.connected(connect, connection.connectTimeout, connection.zkClientConfig())) {
            Gate.Initialization init = Gate.initialize(zk.client(), namespace, state.marks(connect));
            Map<String, Object> genesis = Json.object();
            genesis.put("id", init.genesis().id());
            genesis.put("created", Json.instant(init.genesis().created()));
            Map<String, Object> out = Json.object();
            out.put("namespace", namespace);
            out.put("genesis", genesis);
            out.put("created", init.created());
            System.out.println(Json.line(out));
            return ExitCode.OK;
        }
    }
}
