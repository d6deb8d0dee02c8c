package dev.oncegate.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;

import dev.oncegate.Gate;
import dev.oncegate.Genesis;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code oncegate init}: writes the namespace's genesis record once (a second run changes
 * nothing); with role identities, the genesis names their digest ids and every znode of the
 * namespace gets its role ACL (SPEC §6).
 */
@Command(name = "init", mixinStandardHelpOptions = true,
        description = "Write the namespace's genesis record (idempotent: an initialised namespace is left as it is)."
                + " With --worker, --operator and --admin (or --roles-file), access control is on: the genesis names the"
                + " three identities' digests (never their passwords) and every record gets its role's ACL.",
        footer = {"", "Without --auth, init authenticates as the --admin identity.",
                "Exit codes: 0 written, or already initialised (\"created\":false; nothing changed); 2 bad input;"
                        + " 13 ZooKeeper unavailable or no permission."})
final class InitCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    CommonOptions common;

    @Mixin
    ConnectOptions connection;

    @Mixin
    StateOptions state;

    @Option(names = "--worker", paramLabel = "USER:PASSWORD", description = "The worker role's identity.")
    String worker;

    @Option(names = "--operator", paramLabel = "USER:PASSWORD", description = "The operator role's identity.")
    String operator;

    @Option(names = "--admin", paramLabel = "USER:PASSWORD", description = "The admin role's identity.")
    String admin;

    @Option(names = "--roles-file", paramLabel = "FILE",
            description = "The three identities from a file (keeps the passwords out of ps): lines worker=USER:PASSWORD,"
                    + " operator=USER:PASSWORD, admin=USER:PASSWORD.")
    Path rolesFile;

    @Override
    public Integer call() throws InterruptedException {
        String namespace = common.namespace();
        Map<String, Credentials> roles = roles();
        ZooKeeperConnection.Settings settings = connection.settings();
        if (settings.credentials() == null && roles != null) {
            settings = new ZooKeeperConnection.Settings(settings.connect(), settings.connectTimeout(), settings.clientConfig(),
                    roles.get("admin"));
        }
        Genesis.Roles wanted = roles == null ? null
                : new Genesis.Roles(roles.get("worker").digest(), roles.get("operator").digest(), roles.get("admin").digest());
        try (ZooKeeperConnection zk = ZooKeeperConnection.connected(settings, namespace)) {
            Gate.Initialization init = Gate.initialize(zk.client(), namespace, wanted, state.marks(settings.connect()));
            Genesis g = init.genesis();
            if (!init.created() && wanted != null && !wanted.equals(g.roles())) {
                System.err.println("oncegate init: " + namespace + " was initialised already with "
                        + (g.roles() == null ? "no access control" : "other role identities")
                        + "; nothing changed (to change identities, see deploy/RUNBOOK.md, 'Rotate credentials')");
            }
            Map<String, Object> genesis = Json.object();
            genesis.put("id", g.id());
            genesis.put("created", Json.instant(g.created()));
            Map<String, Object> ids = null;
            if (g.roles() != null) {
                ids = Json.object();
                ids.put("worker", g.roles().worker());
                ids.put("operator", g.roles().operator());
                ids.put("admin", g.roles().admin());
            }
            genesis.put("roles", ids);
            Map<String, Object> out = Json.object();
            out.put("namespace", namespace);
            out.put("genesis", genesis);
            out.put("created", init.created());
            out.put("acls", g.roles() != null);
            System.out.println(Json.line(out));
            return ExitCode.OK;
        }
    }

    /** The three identities, or null for none; all three or none (exit 2 otherwise). */
    private Map<String, Credentials> roles() {
        boolean anyOption = worker != null || operator != null || admin != null;
        if (anyOption && rolesFile != null) {
            throw new IllegalArgumentException("--roles-file and --worker/--operator/--admin are mutually exclusive");
        }
        Map<String, Credentials> out = new HashMap<>();
        if (rolesFile != null) {
            try {
                for (String line : Files.readAllLines(rolesFile, StandardCharsets.UTF_8)) {
                    String t = line.strip();
                    if (t.isEmpty() || t.startsWith("#")) {
                        continue;
                    }
                    int eq = t.indexOf('=');
                    String role = eq < 0 ? "" : t.substring(0, eq).strip();
                    if (!role.equals("worker") && !role.equals("operator") && !role.equals("admin")) {
                        throw new IllegalArgumentException("--roles-file: " + rolesFile + ": expected lines"
                                + " worker=USER:PASSWORD, operator=USER:PASSWORD, admin=USER:PASSWORD");
                    }
                    out.put(role, Credentials.parse(t.substring(eq + 1), "--roles-file " + role));
                }
            } catch (IOException e) {
                throw new IllegalArgumentException("--roles-file: cannot read " + rolesFile + " (" + e.getMessage() + ")", e);
            }
        } else if (anyOption) {
            if (worker != null) {
                out.put("worker", Credentials.parse(worker, "--worker"));
            }
            if (operator != null) {
                out.put("operator", Credentials.parse(operator, "--operator"));
            }
            if (admin != null) {
                out.put("admin", Credentials.parse(admin, "--admin"));
            }
        } else {
            return null;
        }
        if (out.size() != 3) {
            throw new IllegalArgumentException("access control needs all three identities: --worker, --operator and"
                    + " --admin (or all three lines of --roles-file)");
        }
        if (out.values().stream().map(Credentials::user).distinct().count() != 3) {
            throw new IllegalArgumentException("the worker, operator and admin identities must be three different users");
        }
        return out;
    }
}
