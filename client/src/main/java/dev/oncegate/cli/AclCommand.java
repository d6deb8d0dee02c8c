package dev.oncegate.cli;

import java.util.Map;

import dev.oncegate.Genesis;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code oncegate acl}: access control for an existing namespace — turn it on, or rotate the
 * three identities. Names the roles in the genesis (a new roles epoch) and re-applies every
 * znode's role ACL ({@link dev.oncegate.Operator#applyRoles}).
 */
@Command(name = "acl", mixinStandardHelpOptions = true,
        description = "Turn access control on for an initialised namespace, or rotate its identities: names the worker,"
                + " operator and admin digests in the genesis first (a new roles epoch: running gates create their next"
                + " keys with the new ACLs), then gives every znode of the namespace its role's ACL, in passes until one"
                + " finds nothing left to change (at most five), and the genesis' own ACL last. Run it as the current"
                + " admin (--auth; nobody when access control is off); it also authenticates as the new admin. After a"
                + " rotation, restart the workers with their new identities: meanwhile they fail closed. Then check with"
                + " `oncegate doctor` (its acls line); running acl again changes only what differs.",
        footer = {"", "Exit codes: 0 applied; 2 bad input; 13 ZooKeeper unavailable, no permission, no genesis, or znodes"
                + " still appearing with other ACLs after five passes (something writes without following the roles epoch)."})
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
