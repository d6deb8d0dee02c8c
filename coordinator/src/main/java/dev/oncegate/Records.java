package dev.oncegate;

import java.security.SecureRandom;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The protocol's znode records and their JSON form: an encoder and a strict decoder side by side
 * for each znode kind. Every record is compact (ZooKeeper keeps each znode in every server's
 * heap); every record an executor or operator command writes carries its {@link Actor} (task,
 * host, pid, session, attempt), so a retried write recognises itself; every time is an ISO-8601
 * instant.
 *
 * <p><b>Schema versions.</b> The records every key has (key, scope, armed, outcome) are written in
 * version 4: version 3's one-letter names (legend below), and an armed record that commits to a
 * secret only its executor knows ({@code "m"}: the SHA-256 of the secret), which the executor's
 * outcome reveals ({@code "s"}), so that every reader can tell an outcome the armed executor wrote
 * from one forged with the worker credential ({@link Custody}). Versions 2 and 3 are still read,
 * so keys written before stay readable; they carry no commitment, and {@link Custody} says what
 * they are trusted for. The genesis, reconciliations and authorizations, which operators read and
 * write by hand, keep version 2 and its names. An oncegate older than version 4 reads a version 4
 * record as unreadable and stops (fail closed): upgrade every worker of a namespace together.
 *
 * <p>Decoding is strict: a missing field, a wrong type or an unknown schema version throws
 * {@link UnreadableRecordException}, which stops a worker with {@code unavailable} and which
 * {@link Operator#inspect} reports instead of hiding the rest. Stateless and thread-safe.
 *
 * <pre>
 * genesis         {"v":2,"id","created",["roles":{"worker","operator","admin"}],["restores_accepted","acceptance"],["automatic"]} (v 3 with either)
 * key             {"v":4,"p":provider,"i":identity,"d":destination,"s":sha256,"c":created}
 * scope           {"v":4,"o":opened,"t":at,"h":null|{actor,"n":election node,"e":expires,["x":{"c":cause,[actor]}]},
 *                  ["a":true (armed)],["r":true (reconciled, before schema 4)]}
 * armed           {"v":4,"c":[checkpoints],"b":{actor},"k":token,"z":zxid,"t":at,"m":commitment}
 * outcome         {"v":4,"o":outcome,"d":detail,"b":{actor},"k":token,"z":zxid,"t":at,"s":secret}
 *                 or, written by an operator's reconciliation of an armed scope without outcome,
 *                 {"v":4,"o":"sent_verified","r":"reconciled-N"}
 *   actor         "t":task,"h":host,"p":pid,"s":session,"a":attempt
 * reconciliation  {"v":2,"outcome":"sent_verified","by","evidence","actor":{task,host,pid,session,attempt},"at"}
 * after-N         {"by","reason"} (zkCli), or {"v":2,"by","reason","actor":{…},"at"} (oncegate authorize)
 * </pre>
 * Version 3 is version 4 without {@code "m"}, {@code "s"} and the reconciliation marker (an armed
 * record of version 3 or 2 is named {@code armed-ATTEMPT}, after the attempt that armed).
 * Version 2 of the key, scope, armed and outcome records is the same with the full names
 * ({@code provider}, …, {@code holder}, {@code node}, {@code expires}, {@code over}, {@code cause},
 * {@code armed}, {@code reconciled}, {@code checkpoints}, {@code by}, {@code token}, …).
 */
final class Records {

    /** The schema version of the genesis, reconciliation and authorization records. */
    static final int SCHEMA = 2;
    /**
     * The newest schema version of the genesis: 3 when it counts accepted restores or was written
     * automatically (fields a version-2 reader would skip, and its {@code acl} drop); else 2.
     */
    static final int GENESIS_SCHEMA = 3;
    /** The schema version the key, scope, armed and outcome records are written in (2 and 3 are read too). */
    static final int KEY_SCHEMA = 4;

    /** A field of a key, scope, armed or outcome record: its name on the wire, and what it is. */
    private record F(String wire, String name) {
        static F named(String name) {
            return new F(name, name);
        }

        static F named(String wire, String name) {
            return new F(wire, name);
        }

        /** How an error names it: {@code 't' (at)}, or {@code 'at'} where the wire says it all. */
        String quoted() {
            return "'" + wire + "'" + (wire.equals(name) ? "" : " (" + name + ")");
        }
    }

    /** The field names of the key, scope, armed and outcome records (and their actors) in one schema version. */
    private record Names(int version, F provider, F identity, F destination, F sha256, F created, F opened, F at,
                         F holder, F node, F expires, F over, F cause, F armed, F reconciled, F checkpoints, F by,
                         F token, F zxid, F outcome, F detail, F task, F host, F pid, F session, F attempt) {

        /** The same names under another schema version. */
        Names version(int v) {
            return new Names(v, provider, identity, destination, sha256, created, opened, at, holder, node, expires, over,
                    cause, armed, reconciled, checkpoints, by, token, zxid, outcome, detail, task, host, pid, session, attempt);
        }
    }

    private static final Names V2 = new Names(2, F.named("provider"), F.named("identity"), F.named("destination"),
            F.named("sha256"), F.named("created"), F.named("opened"), F.named("at"), F.named("holder"), F.named("node"),
            F.named("expires"), F.named("over"), F.named("cause"), F.named("armed"), F.named("reconciled"),
            F.named("checkpoints"), F.named("by"), F.named("token"), F.named("zxid"), F.named("outcome"),
            F.named("detail"), F.named("task"), F.named("host"), F.named("pid"), F.named("session"), F.named("attempt"));
    private static final Names V3 = new Names(3, F.named("p", "provider"), F.named("i", "identity"),
            F.named("d", "destination"), F.named("s", "sha256"), F.named("c", "created"), F.named("o", "opened"),
            F.named("t", "at"), F.named("h", "holder"), F.named("n", "node"), F.named("e", "expires"), F.named("x", "over"),
            F.named("c", "cause"), F.named("a", "armed"), F.named("r", "reconciled"), F.named("c", "checkpoints"),
            F.named("b", "by"), F.named("k", "token"), F.named("z", "zxid"), F.named("o", "outcome"), F.named("d", "detail"),
            F.named("t", "task"), F.named("h", "host"), F.named("p", "pid"), F.named("s", "session"), F.named("a", "attempt"));
    private static final Names V4 = V3.version(4);
    /** Schema 4's armed record: the commitment to the executor's secret. */
    private static final F COMMITMENT = F.named("m", "commitment");
    /** Schema 4's executor outcome: the secret the armed record committed to. */
    private static final F SECRET = F.named("s", "secret");
    /** Schema 4's reconciliation marker: the name of its reconciliation record. */
    private static final F RECONCILED_BY = F.named("r", "reconciliation");
    /** Bytes of an executor's secret: 128 bits. */
    private static final int SECRET_BYTES = 16;

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
     * A new attempt id: 64 random bits as 16 hex characters, written into the attempt's records
     * (its actor), so that an operator can tell one attempt's writes from another's. (Before schema
     * 4 it also named the armed record, {@code armed-<attempt>}.)
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
     * The scope znode's data: why it opened, when, and the current lease (null when open). A worker
     * credential may rewrite it, so no reader decides safety from it ({@link Custody}): the lease
     * says who holds an open scope, and {@code armed} (set by the arming multi, which moves the
     * version so that no takeover slips in) is for people reading zkCli. {@code reconciled} is read
     * in records before schema 4 and no longer written: a reconciliation is its own record.
     */
    record Scope(String opened, Instant at, KeyHistory.Lease lease, boolean armed, boolean reconciled) {

        Scope withLease(KeyHistory.Lease newLease) {
            return new Scope(opened, at, newLease, armed, reconciled);
        }

        Scope armedNow() {
            return new Scope(opened, at, lease, true, reconciled);
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
        // A genesis with a field of schema 3 says so: a release that reads version 2 only then refuses it (and its
        // `oncegate acl` cannot rewrite it without them) instead of taking it for a genesis without them.
        Map<String, Object> m = base(g.restoresAccepted() > 0 || g.automatic() ? GENESIS_SCHEMA : SCHEMA);
        m.put("id", g.id());
        m.put("created", Instants.format(g.created()));
        if (g.roles() != null) {
            Map<String, Object> roles = new LinkedHashMap<>();
            roles.put("worker", g.roles().worker());
            roles.put("operator", g.roles().operator());
            roles.put("admin", g.roles().admin());
            m.put("roles", roles);
        }
        if (g.restoresAccepted() > 0) {
            m.put("restores_accepted", (long) g.restoresAccepted());
            m.put("acceptance", g.acceptance());
        }
        if (g.automatic()) {
            m.put("automatic", true);
        }
        return Json.encode(m);
    }

    static byte[] key(EffectKey key, Instant created) {
        Names n = V4;
        Map<String, Object> m = base(n.version());
        m.put(n.provider().wire(), key.destination().provider());
        m.put(n.identity().wire(), key.destination().identity().wireName());
        m.put(n.destination().wire(), key.destination().id());
        m.put(n.sha256().wire(), key.sha256());
        m.put(n.created().wire(), Instants.format(created));
        return Json.encode(m);
    }

    static byte[] scope(Scope s) {
        Names n = V4;
        Map<String, Object> m = base(n.version());
        m.put(n.opened().wire(), s.opened());
        m.put(n.at().wire(), Instants.format(s.at()));
        if (s.lease() != null) {
            KeyHistory.Lease l = s.lease();
            Map<String, Object> h = actor(l.holder(), n);
            h.put(n.node().wire(), l.electionNode().substring(l.electionNode().lastIndexOf('/') + 1));
            h.put(n.expires().wire(), Instants.format(l.expires()));
            if (l.takeover() != null) {
                Map<String, Object> over = new LinkedHashMap<>();
                over.put(n.cause().wire(), l.takeover().cause());
                if (l.takeover().from() != null) {
                    over.putAll(actor(l.takeover().from(), n));
                }
                h.put(n.over().wire(), over);
            }
            m.put(n.holder().wire(), h);
        } else {
            m.put(n.holder().wire(), null);
        }
        if (s.armed()) {
            m.put(n.armed().wire(), true);
        }
        if (s.reconciled()) {
            m.put(n.reconciled().wire(), true);
        }
        return Json.encode(m);
    }

    /** The armed record, committing to {@code secret}: the executor reveals it in its outcome. */
    static byte[] armed(KeyHistory.Armed a, String secret) {
        Names n = V4;
        Map<String, Object> m = base(n.version());
        m.put(n.checkpoints().wire(), a.checkpoints());
        m.put(COMMITMENT.wire(), commitment(secret));
        return executorWrote(m, n, a.by(), a.token(), a.at());
    }

    /** The executor's outcome record, revealing the secret its armed record committed to. */
    static byte[] outcome(KeyHistory.OutcomeRecord o, String secret) {
        Names n = V4;
        Map<String, Object> m = base(n.version());
        m.put(n.outcome().wire(), o.outcome().wireName());
        m.put(n.detail().wire(), o.detail());
        m.put(SECRET.wire(), secret);
        return executorWrote(m, n, o.by(), o.token(), o.at());
    }

    /**
     * What an operator's reconciliation of an armed scope without outcome writes as the scope's
     * outcome ({@code sent_verified}), in the same multi as its record {@code reconciled-N}:
     * taking the create-once outcome is what keeps a late outcome of the executor from landing.
     */
    static byte[] reconciledMarker(int scope) {
        Map<String, Object> m = base(V4.version());
        m.put(V4.outcome().wire(), Outcome.SENT_VERIFIED.wireName());
        m.put(RECONCILED_BY.wire(), Layout.RECONCILED_PREFIX + scope);
        return Json.encode(m);
    }

    /** A new executor secret: 128 random bits as 32 hex characters, kept in memory until the outcome. */
    static String newSecret() {
        byte[] bytes = new byte[SECRET_BYTES];
        RANDOM.nextBytes(bytes);
        return java.util.HexFormat.of().formatHex(bytes);
    }

    /** The commitment to {@code secret}: the hex SHA-256 of {@code "oncegate-commitment/v1\n" + secret}. */
    static String commitment(String secret) {
        return EffectKey.hexSha256(("oncegate-commitment/v1\n" + secret).getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** An armed or outcome record, {@code m}, completed with who wrote it, under which token, and when. */
    private static byte[] executorWrote(Map<String, Object> m, Names n, Actor by, FencingToken token, Instant at) {
        m.put(n.by().wire(), actor(by, n));
        m.put(n.token().wire(), token.version());
        m.put(n.zxid().wire(), token.zxid());
        m.put(n.at().wire(), Instants.format(at));
        return Json.encode(m);
    }

    static byte[] reconciliation(KeyHistory.Reconciliation r) {
        Map<String, Object> m = base(SCHEMA);
        m.put("outcome", r.outcome().wireName());
        m.put("by", r.by());
        m.put("evidence", r.evidence());
        m.put("actor", actor(r.actor(), V2));
        m.put("at", Instants.format(r.at()));
        return Json.encode(m);
    }

    static byte[] authorization(Authorization a) {
        Map<String, Object> m = base(SCHEMA);
        m.put("by", a.by());
        m.put("reason", a.reason());
        m.put("actor", actor(a.actor(), V2));
        m.put("at", Instants.format(a.at()));
        return Json.encode(m);
    }

    private static Map<String, Object> base(int version) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("v", version);
        return m;
    }

    private static Map<String, Object> actor(Actor a, Names n) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(n.task().wire(), a.task());
        m.put(n.host().wire(), a.host());
        m.put(n.pid().wire(), a.pid());
        m.put(n.session().wire(), a.session());
        m.put(n.attempt().wire(), a.attempt());
        return m;
    }

    // ---- decoding ----------------------------------------------------------------------

    static Genesis decodeGenesis(String path, byte[] data) {
        Map<String, Object> m = object(path, data, GENESIS_SCHEMA);
        Genesis.Roles roles = null;
        if (m.get("roles") != null) {
            Map<String, Object> r = map(path, m.get("roles"), "'roles'");
            roles = new Genesis.Roles(string(path, r, "worker"), string(path, r, "operator"), string(path, r, "admin"));
        }
        int restores = 0;
        String acceptance = null;
        if (m.get("restores_accepted") != null) {
            if (!(m.get("restores_accepted") instanceof Long n) || n < 1 || n > Integer.MAX_VALUE) {
                throw new UnreadableRecordException(path, "field 'restores_accepted' is not a positive integer");
            }
            restores = (int) (long) n;
            acceptance = string(path, m, "acceptance");
            if (acceptance.isEmpty() || acceptance.contains("/")) {
                throw new UnreadableRecordException(path, "field 'acceptance' is not an acceptance id");
            }
        } else if (m.get("acceptance") != null) {
            throw new UnreadableRecordException(path, "field 'acceptance' without 'restores_accepted'");
        }
        Object automatic = m.get("automatic");
        if (automatic != null && !(automatic instanceof Boolean)) {
            throw new UnreadableRecordException(path, "field 'automatic' is not a boolean");
        }
        return new Genesis(string(path, m, "id"), instant(path, m, "created"), roles, restores, acceptance,
                Boolean.TRUE.equals(automatic));
    }

    static KeyHistory.KeyRecord decodeKey(String path, byte[] data) {
        Map<String, Object> m = object(path, data, KEY_SCHEMA);
        Names n = names(m);
        return new KeyHistory.KeyRecord(string(path, m, n.provider()), string(path, m, n.identity()),
                string(path, m, n.destination()), string(path, m, n.sha256()), instant(path, m, n.created()));
    }

    /** A scope znode's data; its election node is rebuilt under {@code path}'s latch. */
    static Scope decodeScope(String path, byte[] data) {
        Map<String, Object> m = object(path, data, KEY_SCHEMA);
        Names n = names(m);
        boolean armed = flag(path, m, n.armed());
        boolean reconciled = flag(path, m, n.reconciled());
        Object holder = m.get(n.holder().wire());
        KeyHistory.Lease lease = null;
        if (holder != null) {
            Map<String, Object> h = map(path, holder, n.holder().quoted());
            String node = string(path, h, n.node());
            if (node.isEmpty() || node.contains("/")) {
                throw new UnreadableRecordException(path, "field " + n.node().quoted() + " is not an election node name");
            }
            KeyHistory.Takeover takeover = null;
            if (h.get(n.over().wire()) != null) {
                Map<String, Object> over = map(path, h.get(n.over().wire()), n.over().quoted());
                takeover = new KeyHistory.Takeover(string(path, over, n.cause()),
                        over.containsKey(n.attempt().wire()) ? decodeActor(path, over, n) : null);
            }
            lease = new KeyHistory.Lease(decodeActor(path, h, n), Layout.latch(path) + "/" + node,
                    instant(path, h, n.expires()), takeover);
        } else if (!m.containsKey(n.holder().wire())) {
            throw new UnreadableRecordException(path, "field " + n.holder().quoted() + " is missing");
        }
        if (armed && lease == null) {
            throw new UnreadableRecordException(path, "the scope says armed but names no holder (whose armed record?)");
        }
        return new Scope(string(path, m, n.opened()), instant(path, m, n.at()), lease, armed, reconciled);
    }

    /**
     * An armed record as read: what it says, and (schema 4) the commitment to its executor's
     * secret; null for an armed record of an older schema, which carries none.
     */
    record ArmedData(KeyHistory.Armed armed, String commitment) {
    }

    static ArmedData decodeArmed(String path, byte[] data) {
        Map<String, Object> m = object(path, data, KEY_SCHEMA);
        Names n = names(m);
        Object cps = m.get(n.checkpoints().wire());
        if (!(cps instanceof List<?> list)) {
            throw new UnreadableRecordException(path, "field " + n.checkpoints().quoted() + " is not a list");
        }
        List<String> checkpoints = new ArrayList<>();
        for (Object o : list) {
            if (!(o instanceof String s)) {
                throw new UnreadableRecordException(path, "a checkpoint is not a string");
            }
            checkpoints.add(s);
        }
        String commitment = n.version() >= 4 ? hex64(path, m, COMMITMENT) : null;
        return new ArmedData(new KeyHistory.Armed(decodeActor(path, map(path, m.get(n.by().wire()), n.by().quoted()), n),
                token(path, m, n), checkpoints, instant(path, m, n.at())), commitment);
    }

    /** What a scope's {@code outcome} znode holds: an executor's outcome, or an operator's reconciliation marker. */
    sealed interface OutcomeData permits ExecutorOutcome, ReconciledMarker {
    }

    /**
     * An outcome the executor wrote (or claims to have written).
     *
     * @param outcome what it says
     * @param secret  (schema 4) the secret it reveals, checked against the armed record's
     *                commitment; null in an outcome of an older schema
     */
    record ExecutorOutcome(KeyHistory.OutcomeRecord outcome, String secret) implements OutcomeData {
        /** Whether this outcome reveals the secret {@code armed} committed to. */
        boolean opens(ArmedData armed) {
            return secret != null && armed.commitment() != null && commitment(secret).equals(armed.commitment());
        }
    }

    /**
     * The outcome an operator's reconciliation wrote ({@code sent_verified}), valid only beside
     * its reconciliation record {@code KEY/authorizations/reconciled-<scope>} created in the same multi.
     */
    record ReconciledMarker(int scope) implements OutcomeData {
    }

    static OutcomeData decodeOutcome(String path, byte[] data) {
        Map<String, Object> m = object(path, data, KEY_SCHEMA);
        Names n = names(m);
        if (n.version() >= 4 && m.containsKey(RECONCILED_BY.wire())) {
            String name = string(path, m, RECONCILED_BY);
            int scope = name.startsWith(Layout.RECONCILED_PREFIX)
                    ? Layout.scopeNumber(name.substring(Layout.RECONCILED_PREFIX.length())) : -1;
            if (scope < 0 || outcome(path, m, n.outcome()) != Outcome.SENT_VERIFIED) {
                throw new UnreadableRecordException(path, "a reconciliation marker must say sent_verified and name"
                        + " reconciled-<n>");
            }
            return new ReconciledMarker(scope);
        }
        KeyHistory.OutcomeRecord outcome = new KeyHistory.OutcomeRecord(outcome(path, m, n.outcome()),
                string(path, m, n.detail()), decodeActor(path, map(path, m.get(n.by().wire()), n.by().quoted()), n),
                token(path, m, n), instant(path, m, n.at()));
        return new ExecutorOutcome(outcome, n.version() >= 4 ? string(path, m, SECRET) : null);
    }

    static KeyHistory.Reconciliation decodeReconciliation(String path, byte[] data) {
        Map<String, Object> m = object(path, data, SCHEMA);
        Outcome outcome = outcome(path, m, V2.outcome());
        if (outcome != Outcome.SENT_VERIFIED) {
            throw new UnreadableRecordException(path, "a reconciliation can only say sent_verified, this one says "
                    + outcome.wireName());
        }
        return new KeyHistory.Reconciliation(outcome, string(path, m, "by"), string(path, m, "evidence"),
                decodeActor(path, map(path, m.get("actor"), "'actor'"), V2), instant(path, m, "at"));
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
        Actor actor = m.get("actor") != null ? decodeActor(path, map(path, m.get("actor"), "'actor'"), V2) : null;
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

    private static Outcome outcome(String path, Map<String, Object> m, F field) {
        try {
            return Outcome.fromWireName(string(path, m, field));
        } catch (IllegalArgumentException e) {
            throw new UnreadableRecordException(path, e.getMessage());
        }
    }

    private static FencingToken token(String path, Map<String, Object> m, Names n) {
        long version = number(path, m, n.token());
        if (version < 0 || version > Integer.MAX_VALUE) {
            throw new UnreadableRecordException(path, "field " + n.token().quoted() + " is out of range");
        }
        return new FencingToken((int) version, number(path, m, n.zxid()));
    }

    private static Actor decodeActor(String path, Map<String, Object> m, Names n) {
        return new Actor(string(path, m, n.task()), string(path, m, n.host()), number(path, m, n.pid()),
                string(path, m, n.session()), string(path, m, n.attempt()));
    }

    private static boolean flag(String path, Map<String, Object> m, F field) {
        Object value = m.get(field.wire());
        if (value != null && !(value instanceof Boolean)) {
            throw new UnreadableRecordException(path, "field " + field.quoted() + " is not a boolean");
        }
        return Boolean.TRUE.equals(value);
    }

    /** The names of the record's version: {@link #object} let only 2 to {@link #KEY_SCHEMA} through. */
    private static Names names(Map<String, Object> m) {
        Object v = m.get("v");
        return Long.valueOf(V4.version()).equals(v) ? V4 : Long.valueOf(V3.version()).equals(v) ? V3 : V2;
    }

    /** A field holding 64 lower-case hex characters (a SHA-256). */
    private static String hex64(String path, Map<String, Object> m, F field) {
        String value = string(path, m, field);
        if (!EffectKey.isHex64(value)) {
            throw new UnreadableRecordException(path, "field " + field.quoted() + " is not 64 lower-case hex characters");
        }
        return value;
    }

    /** The record as JSON, of schema version 2 up to {@code newest} (else unreadable, saying what to do). */
    private static Map<String, Object> object(String path, byte[] data, int newest) {
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
        if (version < SCHEMA || version > newest) {
            String reads = newest == SCHEMA ? "version " + SCHEMA : "versions " + SCHEMA + " to " + newest;
            throw new UnreadableRecordException(path, "schema version " + version + " is not understood by this"
                    + " oncegate (it reads " + reads + (version < SCHEMA
                    ? "; version " + version + " was written by an older pre-release: initialise a new namespace)"
                    : "); upgrade oncegate"));
        }
        return m;
    }

    /** {@code value} as an object; {@code field} as an error names it, quoted: {@code 'h' (holder)}. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(String path, Object value, String field) {
        if (!(value instanceof Map)) {
            throw new UnreadableRecordException(path, "field " + field + " is not an object");
        }
        return (Map<String, Object>) value;
    }

    private static String string(String path, Map<String, Object> m, F field) {
        if (!(m.get(field.wire()) instanceof String s)) {
            throw new UnreadableRecordException(path, "field " + field.quoted() + " is missing or not a string");
        }
        return s;
    }

    private static String string(String path, Map<String, Object> m, String field) {
        return string(path, m, F.named(field));
    }

    private static long number(String path, Map<String, Object> m, F field) {
        if (!(m.get(field.wire()) instanceof Long n)) {
            throw new UnreadableRecordException(path, "field " + field.quoted() + " is missing or not an integer");
        }
        return n;
    }

    private static Instant instant(String path, Map<String, Object> m, F field) {
        try {
            return Instants.parse(string(path, m, field));
        } catch (DateTimeParseException e) {
            throw new UnreadableRecordException(path, "field " + field.quoted() + " is not an ISO-8601 instant");
        }
    }

    private static Instant instant(String path, Map<String, Object> m, String field) {
        return instant(path, m, F.named(field));
    }
}
