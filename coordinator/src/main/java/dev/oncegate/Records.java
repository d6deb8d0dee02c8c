package dev.oncegate;

import java.security.SecureRandom;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The protocol's znode records and their JSON form (schema version 1). Every record is
 * compact (ZooKeeper keeps each znode in every server's heap) and every record an executor
 * writes carries its attempt id, so a retried write after a connection loss recognises itself.
 *
 * <p>Decoding is strict: a missing field, a wrong type or an unknown schema version throws
 * {@link UnreadableRecordException}, which stops the worker with {@code unavailable}.
 * Stateless and thread-safe.
 */
final class Records {

    static final int SCHEMA = 1;

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

    /** Who is acting: identifies one attempt of one task in one process. */
    record Actor(String task, String host, long pid, String attempt) {
    }

    /** The lease stored in the scope znode. {@code expires} is epoch millis by the holder's clock. */
    record Lease(Actor holder, String session, String latchNode, long expires) {
    }

    /**
     * The scope znode's data: why it opened, when, and the current lease (null when open).
     * {@code armed} is set by the arming multi so that a takeover can never slip in between
     * arming and the outcome.
     */
    record Scope(String opened, Instant at, Lease lease, boolean armed) {
    }

    record Armed(Actor by, String session, FencingToken token, List<String> checkpoints, Instant at) {
    }

    /**
     * The outcome record. {@code detail} is free text from the action (a receipt, an exception's
     * message): unpaired surrogates, which have no UTF-8 form, become U+FFFD, so that a strange
     * receipt can never keep a verified outcome from being recorded.
     */
    record OutcomeRecord(Outcome outcome, String detail, Actor by, FencingToken token, Instant at) {
        OutcomeRecord {
            detail = wellFormed(detail);
        }
    }

    record KeyRecord(String provider, String identity, String destination, String sha256, Instant created) {
    }

    /**
     * An operator's redelivery authorization. The zkCli recipe writes only {@code by} and
     * {@code reason}; {@code oncegate authorize} also writes who ran it and its attempt id (so a
     * create retried after a lost reply recognises itself). Absent fields are null.
     */
    record Authorization(String by, String reason, Instant at, String host, Long pid, String attempt) {
    }

    // ---- encoding ----------------------------------------------------------------------

    static byte[] genesis(Genesis g) {
        Map<String, Object> m = base();
        m.put("id", g.id());
        m.put("created", g.created().toString());
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
        if (s.armed()) {
            m.put("armed", true);
        }
        if (s.lease() != null) {
            Lease l = s.lease();
            Map<String, Object> h = actor(l.holder());
            h.put("session", l.session());
            h.put("latch", l.latchNode());
            h.put("expires", l.expires());
            m.put("holder", h);
        } else {
            m.put("holder", null);
        }
        return Json.encode(m);
    }

    static byte[] armed(Armed a) {
        Map<String, Object> m = base();
        m.put("by", actor(a.by()));
        m.put("session", a.session());
        m.put("token", a.token().version());
        m.put("zxid", a.token().zxid());
        m.put("checkpoints", a.checkpoints());
        m.put("at", a.at().toString());
        return Json.encode(m);
    }

    static byte[] outcome(OutcomeRecord o) {
        Map<String, Object> m = base();
        m.put("outcome", o.outcome().wireName());
        m.put("detail", o.detail());
        m.put("by", actor(o.by()));
        m.put("token", o.token().version());
        m.put("zxid", o.token().zxid());
        m.put("at", o.at().toString());
        return Json.encode(m);
    }

    static byte[] authorization(Authorization a) {
        Map<String, Object> m = base();
        m.put("by", a.by());
        m.put("reason", a.reason());
        m.put("at", a.at().toString());
        m.put("host", a.host());
        m.put("pid", a.pid());
        m.put("attempt", a.attempt());
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
        m.put("attempt", a.attempt());
        return m;
    }

    // ---- decoding ----------------------------------------------------------------------

    static Genesis decodeGenesis(String path, byte[] data) {
        Map<String, Object> m = object(path, data);
        return new Genesis(string(path, m, "id"), instant(path, m, "created"));
    }

    static KeyRecord decodeKey(String path, byte[] data) {
        Map<String, Object> m = object(path, data);
        return new KeyRecord(string(path, m, "provider"), string(path, m, "identity"),
                string(path, m, "destination"), string(path, m, "sha256"), instant(path, m, "created"));
    }

    static Scope decodeScope(String path, byte[] data) {
        Map<String, Object> m = object(path, data);
        Object armed = m.get("armed");
        if (armed != null && !(armed instanceof Boolean)) {
            throw new UnreadableRecordException(path, "field 'armed' is not a boolean");
        }
        Object holder = m.get("holder");
        Lease lease = null;
        if (holder != null) {
            Map<String, Object> h = map(path, holder, "holder");
            lease = new Lease(decodeActor(path, h), string(path, h, "session"), string(path, h, "latch"),
                    number(path, h, "expires"));
        } else if (!m.containsKey("holder")) {
            throw new UnreadableRecordException(path, "field 'holder' is missing");
        }
        if (Boolean.TRUE.equals(armed) && lease == null) {
            throw new UnreadableRecordException(path, "the scope says armed but names no holder (whose armed record?)");
        }
        return new Scope(string(path, m, "opened"), instant(path, m, "at"), lease, Boolean.TRUE.equals(armed));
    }

    static Armed decodeArmed(String path, byte[] data) {
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
        return new Armed(decodeActor(path, map(path, m.get("by"), "by")), string(path, m, "session"),
                token(path, m), List.copyOf(checkpoints), instant(path, m, "at"));
    }

    static OutcomeRecord decodeOutcome(String path, byte[] data) {
        Map<String, Object> m = object(path, data);
        Outcome outcome;
        try {
            outcome = Outcome.fromWireName(string(path, m, "outcome"));
        } catch (IllegalArgumentException e) {
            throw new UnreadableRecordException(path, e.getMessage());
        }
        return new OutcomeRecord(outcome, string(path, m, "detail"), decodeActor(path, map(path, m.get("by"), "by")),
                token(path, m), instant(path, m, "at"));
    }

    /**
     * Authorizations are written by hand from zkCli: only {@code by} and {@code reason} (non-blank
     * strings) are required, and no schema version; the fields {@code oncegate authorize} adds are
     * checked when present.
     */
    static Authorization decodeAuthorization(String path, byte[] data) {
        Map<String, Object> m;
        try {
            m = Json.decodeObject(data);
        } catch (IllegalArgumentException e) {
            throw new UnreadableRecordException(path, e.getMessage());
        }
        String by = string(path, m, "by");
        String reason = string(path, m, "reason");
        if (by.isBlank() || reason.isBlank()) {
            throw new UnreadableRecordException(path, "'by' and 'reason' must name who authorized and why");
        }
        Instant at = m.containsKey("at") ? instant(path, m, "at") : null;
        String host = m.containsKey("host") ? string(path, m, "host") : null;
        Long pid = m.containsKey("pid") ? number(path, m, "pid") : null;
        String attempt = m.containsKey("attempt") ? string(path, m, "attempt") : null;
        return new Authorization(by, reason, at, host, pid, attempt);
    }

    /** Any record as a JSON tree, for inspection. */
    static Map<String, Object> tree(String path, byte[] data) {
        try {
            return Json.decodeObject(data);
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
                string(path, m, "attempt"));
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
            throw new UnreadableRecordException(path, "schema version " + version
                    + " is not understood by this oncegate (it reads version " + SCHEMA + "); upgrade oncegate");
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
