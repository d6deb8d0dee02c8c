package dev.oncegate.cli;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.oncegate.Checkup;
import org.apache.zookeeper.server.quorum.QuorumPeerConfig;

/**
 * The judgements of {@code oncegate doctor}: from what was observed (a reply, a checkup, a
 * negotiated timeout) to ok, warn or fail, each with what it means and, unless ok, how to fix it.
 * Pure: no ZooKeeper, no clock, so every threshold is unit-tested ({@code DoctorChecksTest}).
 *
 * <p>Stateless; thread-safe.
 */
final class DoctorChecks {

    /** A clock further off than this from the server's is worth a look; NTP keeps hosts within milliseconds. */
    static final Duration SKEW_WARN = Duration.ofSeconds(1);
    /** Below this, ordinary pauses (GC, a busy disk) expire sessions. */
    static final Duration SHORT_SESSION = Duration.ofSeconds(10);

    private static final Pattern VERSION = Pattern.compile("(?m)^Zookeeper version: (\\d+)\\.(\\d+)\\.(\\d+)[^,\\n]*");
    private static final Pattern MODE = Pattern.compile("(?m)^Mode: (\\S+)");

    private DoctorChecks() {
    }

    /** How a check came out. */
    enum Status {
        OK, WARN, FAIL, SKIP;

        String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * One check's result.
     *
     * @param name   the check: connection, server, genesis, access, acls, session, clock, autopurge
     * @param status how it came out
     * @param detail what was found
     * @param fix    what to do (null when ok)
     * @param data   what was measured, for {@code --json}
     */
    record Check(String name, Status status, String detail, String fix, Map<String, Object> data) {

        static Check skip(String name, String why) {
            return new Check(name, Status.SKIP, "not checked: " + why, null, Map.of());
        }
    }

    /**
     * What one server said to {@code srvr}.
     *
     * @param address HOST:PORT
     * @param reply   its answer; null when it could not be reached
     * @param error   why it could not be reached; null when it answered
     */
    record ServerAnswer(String address, String reply, String error) {

        boolean whitelisted() {
            return reply != null && !reply.contains("not in the whitelist");
        }

        /** The version as {major, minor, patch}, or null when not told. */
        int[] version() {
            Matcher m = reply == null ? null : VERSION.matcher(reply);
            return m == null || !m.find() ? null
                    : new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3))};
        }

        String describe() {
            if (reply == null) {
                return address + " down (" + error + ")";
            }
            int[] v = version();
            if (v == null) {
                return address + " " + (whitelisted() ? "answered no version" : "version unknown (srvr not whitelisted)");
            }
            Matcher mode = MODE.matcher(reply);
            return address + " " + v[0] + "." + v[1] + "." + v[2] + (mode.find() ? " " + mode.group(1) : "");
        }
    }

    static Check connection(String connect, boolean connected, long millis, String session, Duration timeout) {
        if (!connected) {
            return new Check("connection", Status.FAIL, "could not connect to " + connect + " within "
                    + Durations.format(timeout), "check --connect / ONCEGATE_CONNECT, that the servers run (`echo ruok | nc"
                    + " HOST PORT` answers imok), and --zk-client-config for a TLS port", Map.of("connected", false));
        }
        return new Check("connection", Status.OK, "connected to " + connect + " in " + millis + " ms (session " + session
                + ")", null, Map.of("connected", true, "connect_ms", millis, "session", session));
    }

    /**
     * The servers' versions and modes: fail below 3.5 (Curator 5 needs containers and multi-op
     * results), warn for 3.5 to 3.7 (out of support, untested here), for a version not told (srvr not
     * whitelisted) and for a server that did not answer; fail when none answered.
     */
    static Check servers(List<ServerAnswer> answers) {
        List<String> each = answers.stream().map(ServerAnswer::describe).toList();
        Map<String, Object> data = Map.of("servers", each);
        String detail = String.join("; ", each);
        long down = answers.stream().filter(a -> a.reply() == null).count();
        if (down == answers.size()) {
            return new Check("server", Status.FAIL, "no server answered: " + detail, "start the servers, or fix the"
                    + " addresses in --connect", data);
        }
        for (ServerAnswer a : answers) {
            int[] v = a.version();
            if (v != null && (v[0] < 3 || v[0] == 3 && v[1] < 5)) {
                return new Check("server", Status.FAIL, detail + ": ZooKeeper before 3.5 has no container nodes and"
                        + " no multi-op results, which Curator 5 and oncegate need", "upgrade the ensemble to 3.8 or 3.9", data);
            }
        }
        if (down > 0) {
            return new Check("server", Status.WARN, detail + ": " + down + " of " + answers.size() + " did not answer",
                    "restart the servers that are down; the ensemble keeps serving while a majority is up", data);
        }
        if (answers.stream().anyMatch(a -> a.version() == null)) {
            return new Check("server", Status.WARN, detail, "add srvr to 4lw.commands.whitelist in each server's zoo.cfg"
                    + " (deploy/zookeeper/zoo1.cfg whitelists mntr,ruok,srvr), or read the version in the server's log", data);
        }
        if (answers.stream().anyMatch(a -> a.version()[0] == 3 && a.version()[1] < 8)) {
            return new Check("server", Status.WARN, detail + ": ZooKeeper before 3.8 is out of upstream support and"
                    + " untested with oncegate", "upgrade the ensemble to 3.8 or 3.9 (oncegate is tested on 3.9.5)", data);
        }
        return new Check("server", Status.OK, detail, null, data);
    }

    static Check genesis(Checkup c, String namespace) {
        if (c.problem() != null) {
            String fix = switch (c.problem()) {
                case NAMESPACE_NOT_INITIALISED -> "a new namespace: `oncegate init --namespace " + namespace + "`; one that"
                        + " held keys: do not init before reading deploy/RUNBOOK.md, 'ZooKeeper data lost, or restored from a backup'";
                case PERMISSION_DENIED -> "authenticate as one of the namespace's roles (--auth, --auth-file, ONCEGATE_AUTH)";
                case UNREADABLE_RECORD -> "read it with zkCli `get " + namespace + "/genesis`; never delete it"
                        + " (deploy/RUNBOOK.md, 'A corrupt record')";
                case MARKS_UNREADABLE -> "repair this host's marks file or move it aside (deploy/RUNBOOK.md, 'The zxid"
                        + " marks file cannot be read')";
                default -> "deploy/RUNBOOK.md, 'ZooKeeper data lost, or restored from a backup'";
            };
            return new Check("genesis", Status.FAIL, c.problem().wireName() + ": " + c.problemDetail(), fix,
                    Map.of("reason", c.problem().wireName()));
        }
        return new Check("genesis", Status.OK, "namespace " + namespace + " has genesis " + c.genesis().id() + " (created "
                + c.genesis().created() + ")", null, Map.of("genesis", c.genesis().id(), "acls", c.aclsOn()));
    }

    static Check access(Checkup c) {
        String role = c.role() == null ? null : c.role().name().toLowerCase(Locale.ROOT);
        Map<String, Object> data = Json.object();
        data.put("acls", c.aclsOn());
        data.put("role", role);
        data.put("findings", c.access().stream().map(f -> f.path() + ": " + f.problem()).toList());
        List<Checkup.Finding> failures = c.access().stream().filter(Checkup.Finding::failure).toList();
        List<Checkup.Finding> shown = failures.isEmpty() ? c.access() : failures;
        if (!shown.isEmpty()) {
            String more = shown.size() > 1 ? " (and " + (shown.size() - 1) + " more: see --json)" : "";
            return new Check("access", failures.isEmpty() ? Status.WARN : Status.FAIL, shown.get(0).problem() + more,
                    shown.get(0).fix(), data);
        }
        if (!c.aclsOn()) {
            return new Check("access", Status.WARN, "access control is off: any client that reaches the ensemble may"
                    + " rewrite or delete the records (fine for single-team development only)",
                    "turn it on: `oncegate acl --worker U:P --operator U:P --admin U:P` as anyone, then give each"
                            + " process its role's identity (README, 'Access control')", data);
        }
        return new Check("access", Status.OK, "access control on; this identity is the " + role + " and may do what"
                + " its role needs", null, data);
    }

    /**
     * Every znode of the namespace against its role ACL: fail when any carries another ACL (or this
     * identity may not read it), with how many, how many of them are world-writable, and the first
     * few; warn without access control, where every znode is world-writable by design.
     */
    static Check acls(Checkup c, String namespace) {
        Checkup.AclSweep sweep = c.acls();
        if (!c.aclsOn() || sweep == null) {
            return new Check("acls", Status.WARN, "not walked: access control is off, so every znode under " + namespace
                    + " is world-writable by design (world:anyone:cdrwa)", "turn it on: `oncegate acl --worker U:P"
                    + " --operator U:P --admin U:P` (README, 'Access control')", Map.of("acls", false));
        }
        Map<String, Object> data = Json.object();
        data.put("acls", true);
        data.put("roles_epoch", sweep.rolesEpoch());
        data.put("znodes", sweep.znodes());
        data.put("differing", sweep.differing());
        data.put("world_writable", sweep.worldWritable());
        data.put("examples", sweep.examples());
        if (sweep.differing() == 0) {
            return new Check("acls", Status.OK, "all " + sweep.znodes() + " znodes under " + namespace + " carry their"
                    + " role ACL (roles epoch " + sweep.rolesEpoch() + ")", null, data);
        }
        long more = sweep.differing() - sweep.examples().size();
        return new Check("acls", Status.FAIL, sweep.differing() + " of " + sweep.znodes() + " znodes under " + namespace
                + " do not carry their role ACL, " + sweep.worldWritable() + " of them world-writable: "
                + String.join("; ", sweep.examples()) + (more > 0 ? " (and " + more + " more)" : ""),
                "as the admin, run `oncegate acl` with the namespace's identities again: it sets every znode's role ACL"
                        + " (deploy/RUNBOOK.md, 'Rotate credentials'); an ephemeral election node goes with its session:"
                        + " restart the worker whose client made it without the roles (OncegateAcl.provider)", data);
    }

    /**
     * The negotiated session timeout against the lease TTL: warn when the TTL is shorter (an executor
     * paused longer than the TTL keeps its session and is still taken over and fenced, while a dead
     * one is noticed after the session timeout anyway), and when sessions are short enough to expire on
     * ordinary pauses.
     */
    static Check session(Duration requested, Duration negotiated, Duration leaseTtl) {
        String asked = negotiated.equals(requested) ? "" : " (asked for " + Durations.format(requested) + "; the server's"
                + " min/maxSessionTimeout, 2 and 20 ticks by default, bound it)";
        String detail = "session timeout " + Durations.format(negotiated) + asked + ", lease TTL " + Durations.format(leaseTtl);
        Map<String, Object> data = Map.of("requested_ms", requested.toMillis(), "negotiated_ms", negotiated.toMillis(),
                "lease_ttl_ms", leaseTtl.toMillis());
        if (leaseTtl.compareTo(negotiated) < 0) {
            return new Check("session", Status.WARN, detail + ": the lease TTL is shorter than the session timeout, so an"
                    + " executor paused (GC, a stalled disk) for longer than the TTL keeps its session but loses its lease"
                    + " and is fenced, its work repeated by another", "use a lease TTL of at least the session timeout"
                    + " (Gate.Builder.leaseTtl; `oncegate run` uses 30s), or ask for a shorter session", data);
        }
        if (negotiated.compareTo(SHORT_SESSION) < 0) {
            return new Check("session", Status.WARN, detail + ": sessions this short expire on ordinary pauses, and"
                    + " workers then stop with connection_lost", "ask for a longer session (sessionTimeoutMs), or raise"
                    + " the server's tickTime (sessions may last 2 to 20 ticks)", data);
        }
        return new Check("session", Status.OK, detail, null, data);
    }

    /**
     * This host's clock against the server's: fail when off by half the lease TTL or more (with
     * another host off the other way, live leases look lapsed on arrival and executors are taken over
     * while working), warn beyond {@link #SKEW_WARN}. Clocks never affect safety, only liveness.
     */
    static Check clock(Checkup.ServerClock clock, Duration leaseTtl) {
        Duration skew = clock.skew();
        Duration beyond = skew.abs().minus(clock.uncertainty());
        String detail = "this host's clock is " + millis(skew) + " "
                + (skew.isNegative() ? "behind" : "ahead of") + " the server's (± " + millis(clock.uncertainty()) + ")";
        Map<String, Object> data = Map.of("skew_ms", skew.toMillis(), "uncertainty_ms", clock.uncertainty().toMillis());
        String fix = "synchronise this host's clock (chrony/NTP: `chronyc tracking`, `timedatectl`) and the servers'";
        if (beyond.compareTo(leaseTtl.dividedBy(2)) >= 0) {
            return new Check("clock", Status.FAIL, detail + ": half the lease TTL (" + Durations.format(leaseTtl) + ") or"
                    + " more, so leases can look lapsed as soon as they are written and executors are taken over while"
                    + " they work (never a second delivery: fencing stops them)", fix, data);
        }
        if (beyond.compareTo(SKEW_WARN) > 0) {
            return new Check("clock", Status.WARN, detail + ": lease takeovers come early or late by as much", fix, data);
        }
        return new Check("clock", Status.OK, detail, null, data);
    }

    /** Autopurge from the server's own zoo.cfg; unknown without it, since ZooKeeper tells no client (not even {@code conf}). */
    static Check autopurge(QuorumPeerConfig config, Path file) {
        if (config == null) {
            return new Check("autopurge", Status.WARN, "unknown: ZooKeeper reports its autopurge settings to no client"
                    + " (not even the conf four-letter word)", "run doctor on a server's host with --server-config"
                    + " /path/to/zoo.cfg, or check autopurge.purgeInterval there (oncegate server turns it on by"
                    + " default; its start line says so)", Map.of("known", false));
        }
        Map<String, Object> data = Map.of("known", true, "snap_retain_count", config.getSnapRetainCount(),
                "purge_interval_hours", config.getPurgeInterval());
        if (config.getPurgeInterval() <= 0) {
            return new Check("autopurge", Status.WARN, "off in " + file + " (autopurge.purgeInterval="
                    + config.getPurgeInterval() + "): snapshots and transaction logs pile up until the disk is full, and"
                    + " then ZooKeeper stops", "set autopurge.purgeInterval=1 and autopurge.snapRetainCount=5 in " + file
                    + " and restart the servers one at a time", data);
        }
        return new Check("autopurge", Status.OK, "on in " + file + ": keeps " + config.getSnapRetainCount()
                + " snapshots, purging every " + config.getPurgeInterval() + " h", null, data);
    }

    private static String millis(Duration d) {
        return d.abs().toMillis() + " ms";
    }
}
