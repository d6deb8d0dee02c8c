package dev.oncegate.cli;

import java.util.Map;

import dev.oncegate.Genesis;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code oncegate acl}: access control for an existing namespace — turn it on, or rotate the
 * three identities. Names the roles in the genesis and re-applies every znode's role ACL.
 */
@Command(name = "acl", mixinStandardHelpOptions = true,
        description = "Turn access control on for an initialised namespace, or rotate its identities: names the worker,"
                + " operator and admin digests in the genesis and gives every znode of the namespace its role's ACL."
                + " Run it as the current admin (--auth; nobody when access control is off); it also authenticates as"
                + " the new admin. Restart the workers with their new identities afterwards: meanwhile they fail closed.",
        footer = {"", "Exit codes: 0 applied; 2 bad input; 13 ZooKeeper unavailable, no permission, or no genesis."})
final class AclCommand extends NamespaceCommand {

    @Mixin
    RoleOptions roleOptions;

    @Option(names = "--quiet", description = "Do not print one line per znode.")
    boolean quiet;

    @Override
    public Integer call() throws InterruptedException {
        String namespace = zookeeper.namespace();
        Map<String, Credentials> identities = roleOptions.identities();
        if (identities == null) {
            throw new IllegalArgumentException("acl: give the new identities: --worker, --operator and --admin (or --roles-file)");
        }
        Genesis.Roles roles = RoleOptions.roles(identities);
        try (ZooKeeperConnection zk = zookeeper.connect(zookeeper.settings().alsoAs(identities.get("admin")))) {
            long count = zk.operator().applyRoles(roles, path -> {
                if (!quiet) {
                    System.err.println("oncegate acl: " + path);
                }
            });
            Map<String, Object> out = Json.object();
            out.put("namespace", namespace);
            out.put("roles", RoleOptions.render(roles));
            out.put("znodes", count);
            System.out.println(Json.line(out));
            return ExitCode.OK;
        }
    }
}
