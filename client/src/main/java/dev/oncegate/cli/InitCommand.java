package dev.oncegate.cli;

import java.util.Map;

import dev.oncegate.Gate;
import dev.oncegate.Genesis;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code oncegate init}: writes the namespace's genesis record once (a second run changes
 * nothing); with role identities, the genesis names their digest ids and every znode of the
 * namespace gets its role ACL (the README's "Access control").
 */
@Command(name = "init", mixinStandardHelpOptions = true,
        description = "Write the namespace's genesis record (idempotent: an initialised namespace is left as it is)."
                + " With --worker, --operator and --admin (or --roles-file), access control is on: the genesis names the"
                + " three identities' digests (never their passwords) and every record gets its role's ACL, those"
                + " found under the namespace before its genesis included.",
        footer = {"", "Without --auth, init authenticates as the --admin identity.",
                "--accept-restore: after the ensemble was restored from an older snapshot and the restore was dealt"
                        + " with (deploy/RUNBOOK.md), counts one more accepted restore in the genesis: every host whose"
                        + " rollback witness caught it stops its workers until then, and starts its witness afresh"
                        + " after. Admin only (--auth) where access control is on (a genesis written automatically"
                        + " names no roles: turn it on with `oncegate acl` first); each run counts one.",
                "Exit codes: 0 written, or already initialised (\"created\":false; nothing changed), or the restore"
                        + " accepted; 2 bad input;"
                        + " 13 ZooKeeper unavailable or no permission (a znode found there before that the admin may"
                        + " not read or change is named; every other one has its role ACL)."})
final class InitCommand extends NamespaceCommand {

    @Mixin
    RoleOptions roleOptions;

    @Option(names = "--accept-restore", description = "Accept that the ensemble was restored from an older snapshot,"
            + " once that was dealt with: the hosts that caught it let their workers run again (see the footer).")
    boolean acceptRestore;

    @Override
    public Integer call() throws InterruptedException {
        String namespace = zookeeper.namespace();
        Map<String, Credentials> roles = roleOptions.identities();
        if (acceptRestore) {
            if (roles != null) {
                throw usage("--accept-restore takes no role identities: it changes nothing but the count of accepted"
                        + " restores (authenticate as the admin with --auth or --auth-file)");
            }
            return acceptRestore(namespace);
        }
        ZooKeeperConnection.Settings settings = zookeeper.settings();
        if (settings.credentials() == null && roles != null) {
            settings = new ZooKeeperConnection.Settings(settings.connect(), settings.connectTimeout(), settings.clientConfig(),
                    roles.get("admin"));
        }
        Genesis.Roles wanted = roles == null ? null : RoleOptions.roles(roles);
        try (ZooKeeperConnection zk = zookeeper.connect(settings)) {
            Gate.Initialization init;
            try {
                init = Gate.initialize(zk.client(), namespace, wanted, zk.marks());
            } catch (RuntimeException e) {
                throw Access.explained(e, zk, Access.Role.ADMIN);
            }
            Genesis g = init.genesis();
            if (!init.created() && wanted != null && !wanted.equals(g.roles())) {
                System.err.println("oncegate init: " + namespace + " was initialised already with "
                        + (g.roles() == null ? "no access control" : "other role identities")
                        + "; nothing changed (to change identities, see deploy/RUNBOOK.md, 'Rotate credentials')");
            }
            Map<String, Object> out = Json.object();
            out.put("namespace", namespace);
            out.put("genesis", render(g));
            out.put("created", init.created());
            out.put("acls", g.roles() != null);
            System.out.println(Json.line(out));
            return ExitCode.OK;
        }
    }

    private Integer acceptRestore(String namespace) throws InterruptedException {
        try (ZooKeeperConnection zk = zookeeper.connect(zookeeper.settings())) {
            Genesis g;
            try {
                g = Gate.acceptRestore(zk.client(), namespace, zk.marks());
            } catch (RuntimeException e) {
                throw Access.explained(e, zk, Access.Role.ADMIN);
            }
            Map<String, Object> out = Json.object();
            out.put("namespace", namespace);
            out.put("genesis", render(g));
            out.put("created", false);
            out.put("acls", g.roles() != null);
            out.put("restore_accepted", true);
            System.out.println(Json.line(out));
            return ExitCode.OK;
        }
    }

    private static Map<String, Object> render(Genesis g) {
        Map<String, Object> genesis = Json.object();
        genesis.put("id", g.id());
        genesis.put("created", Json.instant(g.created()));
        genesis.put("roles", RoleOptions.render(g.roles()));
        genesis.put("restores_accepted", g.restoresAccepted());
        genesis.put("acceptance", g.acceptance());
        genesis.put("automatic", g.automatic());
        return genesis;
    }
}
