package dev.oncegate;

import java.security.SecureRandom;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The protocol's znode records and their JSON form (schema version 2): an encoder and a strict
 * decoder side by side for each znode kind. Every record is compact (ZooKeeper keeps each znode
 * in every server's heap); every record an executor or operator command writes carries its
 * {@link Actor} (task, host, pid, session, attempt), so a retried write recognises itself; every
 * time is an ISO-8601 instant.
 *
 * <p>Decoding is strict: a missing field, a wrong type or an unknown schema version throws
 * {@link UnreadableRecordException}, which stops a worker with {@code unavailable} and which
 * {@link Operator#inspect} reports instead of hiding the rest. Stateless and thread-safe.
 *
 * <pre>
 * genesis         {"v":2,"id","created",["roles":{"worker","operator","admin"}]}
 * key             {"v":2,"provider","identity","destination","sha256","created"}
 * scope           {"v":2,"opened","at","holder":null|{task,host,pid,session,attempt,"node","expires",["over":{"cause",[task,…]}]},
 *                  ["armed":true],["reconciled":true]}
 * armed-ATTEMPT   {"v":2,"checkpoints":[…],"by":{actor},"token","zxid","at"}
 * outcome         {"v":2,"outcome","detail","by":{actor},"token","zxid","at"}
 * reconciliation  {"v":2,"outcome":"sent_verified","by","evidence","actor":{actor},"at"}
 * after-N         {"by","reason"} (zkCli), or {"v":2,"by","reason","actor":{actor},"at"} (oncegate authorize)
 * </pre>
 */
final class Records {

    static final int SCHEMA = 2;

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private Records() {
    }

    /** {@code text} with every unpaired surrogate replaced by U+FFFD (null stays null). */
    static String wellFormed(String text) {
        if (text == null) {
            return null;
        }
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean paired = Character.isHighSurrogate(c) ? i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))
                    : !Character.isLowSurrogate(c) || i > 0 && Character.isHighSurrogate(text.charAt(i - 1));
            if (!paired && out == null) {
                out = new StringBuilder(text.length()).append(text, 0, i);
            }
            if (out != null) {
                out.append(paired ? c : '\uFFFD');
            }
        }
        return out == null ? text : out.toString();
    }

    /** Refuses text with an unpaired surrogate (no UTF-8 form): {@code IllegalArgumentException} naming {@code field}. */
    static String requireWellFormed(String field, String text) {
        if (!wellFormed(text).equals(text)) {
            throw new IllegalArgumentException(field + ": contains an unpaired surrogate, which has no UTF-8 form");
        }
        return text;
    }

    /**
     * A new attempt id: 64 random bits as 16 hex characters. It names the attempt's armed record
     * ({@code armed-<attempt>}), so it must never repeat within a scope; it is also how a retried
     * write recognises itself.
     */
    static String newAttemptId() {
        long bits = RANDOM.nextLong();
        char[] out = new char[16];
        for (int i = 15; i >= 0; i--) {
            out[i] = HEX[(int) (bits & 0xf)];
            bits >>>= 4;
        }
        return new String(out);
    }

    /**
     * The scope znode's data: why it opened, when, and the current lease (null when open).
     * {@code armed} is set by the arming multi so that a takeover can never slip in between
     * arming and the outcome; {@code reconciled} by an operator's reconciliation, whose multi
     * also moves the version, so that a late outcome of the executor can no longer be written.
     */
    record Scope(String opened, Instant at, KeyHistory.Lease lease, boolean armed, boolean reconciled) {

        Scope withLease(KeyHistory.Lease newLease) {
            return new Scope(opened, at, newLease, armed, reconciled);
        }

        Scope armedNow() {
            return new Scope(opened, at, lease, true, reconciled);
        }

        Scope reconciledNow() {
            return new Scope(opened, at, lease, armed, true);
        }
    }

    /** The outcome record; free text from the action cannot keep it from being written (see {@link #wellFormed}). */
    static KeyHistory.OutcomeRecord outcomeRecord(Outcome outcome, String detail, Actor by, FencingToken token, Instant at) {
        return new KeyHistory.OutcomeRecord(outcome, wellFormed(detail), by, token, at);
    }

    /**
     * An operator's redelivery authorization. The zkCli recipe writes only {@code by} and
     * {@code reason}; {@code oncegate authorize} also writes its actor and time. Absent: null.
     */
    record Authorization(String by, String reason, Instant at, Actor actor) {
    }

    // ---- encoding ----------------------------------------------------------------------

    static byte[] genesis(Genesis g) {
        Map<String, Object> m = base();
        m.put("id", g.id());
        m.put("created", g.created().toString());
        if (g.roles() != null) {
            Map<String, Object> roles = new LinkedHashMap<>();
            roles.put("worker", g.roles().worker());
            roles.put("operator", g.roles().operator());
            roles.put("admin", g.roles().admin());
            m.put("roles", roles);
        }
        return Json.encode(m);
    }

    static byte[] key(EffectKey key, Instant created) {
        Map<String, Object> m = base();
        m.put("provider", key.destination().provider());
        m.put("identity", key.destination().identity().wireName());
        m.put("destination", key.destination().id());
        m.put("sha256", key.sha256());
        m.put("created", created.toString());
        return Json.encode(m);
    }

    static byte[] scope(Scope s) {
        Map<String, Object> m = base();
        m.put("opened", s.opened());
        m.put("at", s.at().toString());
        if (s.lease() != null) {
            KeyHistory.Lease l = s.lease();
            Map<String, Object> h = actor(l.holder());
            h.put("node", l.electionNode().substring(l.electionNode().lastIndexOf('/') + 1));
            h.put("expires", l.expires().toString());
            if (l.takeover() != null) {
                Map<String, Object> over = new LinkedHashMap<>();
                over.put("cause", l.takeover().cause());
                if (l.takeover().from() != null) {
                    over.putAll(actor(l.takeover().from()));
                }
                h.put("over", over);
            }
            m.put("holder", h);
        } else {
            m.put("holder", null);
        }
        if (s.armed()) {
            m.put("armed", true);
        }
        if (s.reconciled()) {
            m.put("reconciled", true);
        }
        return Json.encode(m);
    }

    static byte[] armed(KeyHistory.Armed a) {
        Map<String, Object> m = base();
        m.put("checkpoints", a.checkpoints());
        return executorWrote(m, a.by(), a.token(), a.at());
    }

    static byte[] outcome(KeyHistory.OutcomeRecord o) {
        Map<String, Object> m = base();
        m.put("outcome", o.outcome().wireName());
        m.put("detail", o.detail());
        return executorWrote(m, o.by(), o.token(), o.at());
    }

    /** An armed or outcome record, {@code m}, completed with who wrote it, under which token, and when. */
    private static byte[] executorWrote(Map<String, Object> m, Actor by, FencingToken token, Instant at) {
        m.put("by", actor(by));
        m.put("token", token.version());
        m.put("zxid", token.zxid());
        m.put("at", at.toString());
        return Json.encode(m);
    }

    static byte[] reconciliation(KeyHistory.Reconciliation r) {
        Map<String, Object> m = base();
        m.put("outcome", r.outcome().wireName());
        m.put("by", r.by());
        m.put("evidence", r.evidence());
        m.put("actor", actor(r.actor()));
        m.put("at", r.at().toString());
        return Json.encode(m);
    }

    static byte[] authorization(Authorization a) {
        Map<String, Object> m = base();
        m.put("by", a.by());
        m.put("reason", a.reason());
        m.put("actor", actor(a.actor()));
        m.put("at", a.at().toString());
        return Json.encode(m);
    }

    private static Map<String, Object> base() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("v", SCHEMA);
        return m;
    }

    private static Map<String, Object> actor(Actor a) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("task", a.task());
        m.put("host", a.host());
        m.put("pid", a.pid());
        m.put("session", a.session());
        m.put("attempt", a.attempt());
        return m;
    }

    // ---- decoding ----------------------------------------------------------------------

    static Genesis decodeGenesis(String path, byte[] data) {
        Map<String, Object> m = object(path, data);
        Genesis.Roles roles = null;
        if (m.get("roles") != null) {
            Map<String, Object> r = map(path, m.get("roles"), "roles");
            roles = new Genesis.Roles(string(path, r, "worker"), string(path, r, "operator"), string(path, r, "admin"));
        }
        return new Genesis(string(path, m, "id"), instant(path, m, "created"), roles);
    }

    static KeyHistory.KeyRecord decodeKey(String path, byte[] data) {
        Map<String, Object> m = object(path, data);
        return new KeyHistory.KeyRecord(string(path, m, "provider"), string(path, m, "identity"),
                string(path, m, "destination"), string(path, m, "sha256"), instant(path, m, "created"));
    }

    /** A scope znode's data; its election node is rebuilt under {@code path}'s latch. */
    static Scope decodeScope(String path, byte[] data) {
        Map<String, Object> m = object(path, data);
        boolean armed = flag(path, m, "armed");
        boolean reconciled = flag(path, m, "reconciled");
        Object holder = m.get("holder");
        KeyHistory.Lease lease = null;
        if (holder != null) {
            Map<String, Object> h = map(path, holder, "holder");
            String node = string(path, h, "node");
            if (node.isEmpty() || node.contains("/")) {
                throw new UnreadableRecordException(path, "field 'node' is not an election node name");
            }
            KeyHistory.Takeover takeover = null;
            if (h.get("over") != null) {
                Map<String, Object> over = map(path, h.get("over"), "over");
                takeover = new KeyHistory.Takeover(string(path, over, "cause"),
                        over.containsKey("attempt") ? decodeActor(path, over) : null);
            }
            lease = new KeyHistory.Lease(decodeActor(path, h), Layout.latch(path) + "/" + node,
                    instant(path, h, "expires"), takeover);
        } else if (!m.containsKey("holder")) {
            throw new UnreadableRecordException(path, "field 'holder' is missing");
        }
        if (armed && lease == null) {
            throw new UnreadableRecordException(path, "the scope says armed but names no holder (whose armed record?)");
        }
        return new Scope(string(path, m, "opened"), instant(path, m, "at"), lease, armed, reconciled);
    }

    static KeyHistory.Armed decodeArmed(String path, byte[] data) {
        Map<String, Object> m = object(path, data);
        Object cps = m.get("checkpoints");
        if (!(cps instanceof List<?> list)) {
            throw new UnreadableRecordException(path, "field 'checkpoints' is not a list");
        }
        List<String> checkpoints = new ArrayList<>();
        for (Object o : list) {
            if (!(o instanceof String s)) {
                throw new UnreadableRecordException(path, "a checkpoint is not a string");
            }
            checkpoints.add(s);
        }
        return new KeyHistory.Armed(decodeActor(path, map(path, m.get("by"), "by")), token(path, m),
                checkpoints, instant(path, m, "at"));
    }

    static KeyHistory.OutcomeRecord decodeOutcome(String path, byte[] data) {
        Map<String, Object> m = object(path, data);
        return new KeyHistory.OutcomeRecord(outcome(path, m), string(path, m, "detail"),
                decodeActor(path, map(path, m.get("by"), "by")), token(path, m), instant(path, m, "at"));
    }

    static KeyHistory.Reconciliation decodeReconciliation(String path, byte[] data) {
        Map<String, Object> m = object(path, data);
        Outcome outcome = outcome(path, m);
        if (outcome != Outcome.SENT_VERIFIED) {
            throw new UnreadableRecordException(path, "a reconciliation can only say sent_verified, this one says "
                    + outcome.wireName());
        }
        return new KeyHistory.Reconciliation(outcome, string(path, m, "by"), string(path, m, "evidence"),
                decodeActor(path, map(path, m.get("actor"), "actor")), instant(path, m, "at"));
    }

    /**
     * Authorizations are written by hand from zkCli: only {@code by} and {@code reason} (non-blank
     * strings) are required, and no schema version; the fields {@code oncegate authorize} adds are
     * checked when present. Their values are strings and integers only (the codec refuses fractions).
     */
    static Authorization decodeAuthorization(String path, byte[] data) {
        Map<String, Object> m;
        try {
            m = Json.decodeObject(data);
        } catch (IllegalArgumentException e) {
            throw new UnreadableRecordException(path, e.getMessage());
        }
        if (m.containsKey("v") && !Long.valueOf(SCHEMA).equals(m.get("v"))) {
            throw new UnreadableRecordException(path, "schema version " + m.get("v") + " is not understood (this"
                    + " oncegate reads version " + SCHEMA + ")");
        }
        String by = string(path, m, "by");
        String reason = string(path, m, "reason");
        if (by.isBlank() || reason.isBlank()) {
            throw new UnreadableRecordException(path, "'by' and 'reason' must name who authorized and why");
        }
        Instant at = m.containsKey("at") ? instant(path, m, "at") : null;
        Actor actor = m.get("actor") != null ? decodeActor(path, map(path, m.get("actor"), "actor")) : null;
        return new Authorization(by, reason, at, actor);
    }

    /** Any record as a JSON tree, for display. */
    static Map<String, Object> tree(String path, byte[] data) {
        try {
            return Json.decodeObject(data);
        } catch (IllegalArgumentException e) {
            throw new UnreadableRecordException(path, e.getMessage());
        }
    }

    private static Outcome outcome(String path, Map<String, Object> m) {
        try {
            return Outcome.fromWireName(string(path, m, "outcome"));
        } catch (IllegalArgumentException e) {
            throw new UnreadableRecordException(path, e.getMessage());
        }
    }

    private static FencingToken token(String path, Map<String, Object> m) {
        long version = number(path, m, "token");
        if (version < 0 || version > Integer.MAX_VALUE) {
            throw new UnreadableRecordException(path, "field 'token' is out of range");
        }
        return new FencingToken((int) version, number(path, m, "zxid"));
    }

    private static Actor decodeActor(String path, Map<String, Object> m) {
        return new Actor(string(path, m, "task"), string(path, m, "host"), number(path, m, "pid"),
                string(path, m, "session"), string(path, m, "attempt"));
    }

    private static boolean flag(String path, Map<String, Object> m, String field) {
        Object value = m.get(field);
        if (value != null && !(value instanceof Boolean)) {
            throw new UnreadableRecordException(path, "field '" + field + "' is not a boolean");
        }
        return Boolean.TRUE.equals(value);
    }

    private static Map<String, Object> object(String path, byte[] data) {
        Map<String, Object> m;
        try {
            m = Json.decodeObject(data);
        } catch (IllegalArgumentException e) {
            throw new UnreadableRecordException(path, e.getMessage());
        }
        Object v = m.get("v");
        if (!(v instanceof Long version)) {
            throw new UnreadableRecordException(path, "no schema version 'v'");
        }
        if (version != SCHEMA) {
            throw new UnreadableRecordException(path, "schema version " + version + " is not understood by this"
                    + " oncegate (it reads version " + SCHEMA + (version < SCHEMA
                    ? "; version " + version + " was written by an older pre-release: initialise a new namespace)"
                    : "); upgrade oncegate"));
        }
        return m;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(String path, Object value, String field) {
        if (!(value instanceof Map)) {
            throw new UnreadableRecordException(path, "field '" + field + "' is not an object");
        }
        return (Map<String, Object>) value;
    }

    private static String string(String path, Map<String, Object> m, String field) {
        if (!(m.get(field) instanceof String s)) {
            throw new UnreadableRecordException(path, "field '" + field + "' is missing or not a string");
        }
        return s;
    }

    private static long number(String path, Map<String, Object> m, String field) {
        if (!(m.get(field) instanceof Long n)) {
            throw new UnreadableRecordException(path, "field '" + field + "' is missing or not an integer");
        }
        return n;
    }

    private static Instant instant(String path, Map<String, Object> m, String field) {
        try {
            return Instant.parse(string(path, m, field));
        } catch (DateTimeParseException e) {
            throw new UnreadableRecordException(path, "field '" + field + "' is not an ISO-8601 instant");
        }
    }
}
