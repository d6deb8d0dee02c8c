package dev.oncegate.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import dev.oncegate.Genesis;
import picocli.CommandLine.Option;

/**
 * The three role identities of access control (the README's "Access control"), for {@code init} and {@code acl}: from
 * options, or from a file that keeps the passwords out of {@code ps}. Only their digests are ever
 * stored.
 *
 * <p>Not thread-safe; filled in by picocli on the main thread.
 */
final class RoleOptions {

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

    /** The three identities by role, or null when none is given; all three or none (exit 2 otherwise). */
    Map<String, Credentials> identities() {
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

    /** The digest ids of {@code identities}. */
    static Genesis.Roles roles(Map<String, Credentials> identities) {
        return new Genesis.Roles(identities.get("worker").digest(), identities.get("operator").digest(),
                identities.get("admin").digest());
    }

    /** Them as JSON: digests only. */
    static Map<String, Object> render(Genesis.Roles roles) {
        if (roles == null) {
            return null;
        }
        Map<String, Object> ids = Json.object();
        ids.put("worker", roles.worker());
        ids.put("operator", roles.operator());
        ids.put("admin", roles.admin());
        return ids;
    }
}
