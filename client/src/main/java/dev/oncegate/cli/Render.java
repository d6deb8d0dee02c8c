package dev.oncegate.cli;

import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import dev.oncegate.Actor;
import dev.oncegate.FencingToken;
import dev.oncegate.Crossing;
import dev.oncegate.KeyHistory;
import dev.oncegate.Outcome;
import dev.oncegate.Operator;
import dev.oncegate.ScopeState;

/**
 * The operator API's typed values as JSON: snake-case fields, every field present (null when
 * absent) so that every object of a kind has the same shape, times ISO-8601, zxids decimal.
 *
 * <p>Stateless; thread-safe.
 */
final class Render {

    private Render() {
    }

    /**
     * {@code inspect}'s {@code next_attempt}: the library's sentence, and for a stop the exit code
     * {@code oncegate run} would give (the library knows stops, the client knows exit codes).
     */
    static String nextAttempt(KeyHistory h) {
        return h.nextStop() == null ? h.nextAttempt()
                : h.nextAttempt() + " (`oncegate run` would exit " + ExitCode.of(h.nextStop()) + ".)";
    }

    /** {@code oncegate inspect}'s object. */
    static Map<String, Object> history(KeyHistory h) {
        Map<String, Object> out = Json.object();
        out.put("key", h.key());
        out.put("path", h.path());
        out.put("exists", h.exists());
        out.put("state", state(h.state()));
        out.put("readable", h.readable());
        out.put("next_attempt", nextAttempt(h));
        out.put("authorize_command", h.authorizeCommand());
        out.put("genesis", h.genesis());
        out.put("zxid", h.exists() ? h.zxid() : null);
        out.put("record", record(h.record()));
        List<Object> scopes = new ArrayList<>();
        for (KeyHistory.Scope s : h.scopes()) {
            scopes.add(scope(s));
        }
        out.put("scopes", scopes);
        List<Object> auths = new ArrayList<>();
        for (KeyHistory.Authorization a : h.authorizations()) {
            auths.add(authorization(a));
        }
        out.put("authorizations", auths);
        List<Object> unreadable = new ArrayList<>();
        for (KeyHistory.Unreadable u : h.unreadable()) {
            unreadable.add(unreadable(u));
        }
        out.put("unreadable", unreadable);
        return out;
    }

    /**
     * A crossing's fields, in the order every result that reports one uses: scope, token, zxid,
     * outcome, recorded, and {@code reads_as}, what every later contender reads (an outcome that
     * could not be written leaves the scope armed: unknown).
     */
    static void crossed(Map<String, Object> out, Crossing.Crossed crossed) {
        out.put("scope", crossed.scope());
        out.put("token", crossed.token().version());
        out.put("zxid", crossed.token().zxid());
        out.put("outcome", crossed.outcome().wireName());
        out.put("recorded", crossed.recorded());
        out.put("reads_as", crossed.recorded() ? crossed.outcome().wireName() : Outcome.SEND_STATUS_UNKNOWN.wireName());
    }

    static Map<String, Object> record(KeyHistory.KeyRecord r) {
        if (r == null) {
            return null;
        }
        Map<String, Object> m = Json.object();
        m.put("provider", r.provider());
        m.put("identity", r.identity());
        m.put("destination", r.destination());
        m.put("sha256", r.sha256());
        m.put("created", Json.instant(r.created()));
        return m;
    }

    static Map<String, Object> scope(KeyHistory.Scope s) {
        Map<String, Object> m = Json.object();
        m.put("scope", s.scope());
        m.put("path", s.path());
        m.put("state", state(s.state()));
        m.put("version", s.version());
        m.put("mzxid", s.mzxid());
        m.put("opened", s.opened());
        m.put("opened_at", Json.instant(s.openedAt()));
        m.put("lease", lease(s.lease()));
        m.put("armed", armed(s.armed()));
        m.put("outcome", outcome(s.outcome()));
        m.put("outcome_writes", s.outcomeWrites());
        m.put("reconciliation", reconciliation(s.reconciliation()));
        m.put("armed_zxid", s.armedZxid() == 0 ? null : s.armedZxid());
        m.put("recorded_at", Json.instant(s.recordedAt()));
        return m;
    }

    static Map<String, Object> lease(KeyHistory.Lease l) {
        if (l == null) {
            return null;
        }
        Map<String, Object> m = Json.object();
        m.put("holder", actor(l.holder()));
        m.put("election_node", l.electionNode());
        m.put("expires", Json.instant(l.expires()));
        Map<String, Object> takeover = null;
        if (l.takeover() != null) {
            takeover = Json.object();
            takeover.put("cause", l.takeover().cause());
            takeover.put("from", actor(l.takeover().from()));
        }
        m.put("takeover", takeover);
        return m;
    }

    static Map<String, Object> armed(KeyHistory.Armed a) {
        if (a == null) {
            return null;
        }
        Map<String, Object> m = Json.object();
        m.put("by", actor(a.by()));
        token(m, a.token());
        m.put("checkpoints", a.checkpoints());
        m.put("at", Json.instant(a.at()));
        return m;
    }

    static Map<String, Object> outcome(KeyHistory.OutcomeRecord o) {
        if (o == null) {
            return null;
        }
        Map<String, Object> m = Json.object();
        m.put("outcome", o.outcome().wireName());
        m.put("detail", o.detail());
        m.put("by", actor(o.by()));
        token(m, o.token());
        m.put("at", Json.instant(o.at()));
        return m;
    }

    static Map<String, Object> reconciliation(KeyHistory.Reconciliation r) {
        if (r == null) {
            return null;
        }
        Map<String, Object> m = Json.object();
        m.put("outcome", r.outcome().wireName());
        m.put("by", r.by());
        m.put("evidence", r.evidence());
        m.put("actor", actor(r.actor()));
        m.put("at", Json.instant(r.at()));
        return m;
    }

    static Map<String, Object> authorization(KeyHistory.Authorization a) {
        Map<String, Object> m = Json.object();
        m.put("name", a.name());
        m.put("path", a.path());
        m.put("after", a.after() < 0 ? null : a.after());
        m.put("status", a.status().wireName());
        m.put("by", a.by());
        m.put("reason", a.reason());
        m.put("at", Json.instant(a.at()));
        m.put("actor", actor(a.actor()));
        m.put("used_by", a.usedBy() < 0 ? null : a.usedBy());
        return m;
    }

    /** An unreadable record: its bytes as text when they are UTF-8, else base64, so nothing is hidden. */
    static Map<String, Object> unreadable(KeyHistory.Unreadable u) {
        Map<String, Object> m = Json.object();
        m.put("path", u.path());
        m.put("problem", u.problem());
        m.put("repair", u.repair());
        byte[] raw = u.raw();
        String text = utf8(raw);
        m.put("raw", text);
        m.put("raw_base64", text == null ? Base64.getEncoder().encodeToString(raw) : null);
        return m;
    }

    static Map<String, Object> actor(Actor a) {
        if (a == null) {
            return null;
        }
        Map<String, Object> m = Json.object();
        m.put("task", a.task());
        m.put("host", a.host());
        m.put("pid", a.pid());
        m.put("session", a.session());
        m.put("attempt", a.attempt());
        return m;
    }

    /** {@code oncegate list}'s line. */
    static Map<String, Object> summary(Operator.KeySummary s) {
        Map<String, Object> m = Json.object();
        m.put("key", s.key());
        m.put("path", s.path());
        m.put("state", state(s.state()));
        m.put("scopes", s.scopes());
        m.put("since", Json.instant(s.since()));
        KeyHistory.KeyRecord r = s.record();
        m.put("provider", r == null ? null : r.provider());
        m.put("identity", r == null ? null : r.identity());
        m.put("destination", r == null ? null : r.destination());
        m.put("sha256", r == null ? null : r.sha256());
        m.put("problem", s.problem());
        return m;
    }

    static String state(ScopeState s) {
        return s == null ? null : s.wireName();
    }

    private static void token(Map<String, Object> m, FencingToken token) {
        m.put("token", token.version());
        m.put("zxid", token.zxid());
    }

    private static String utf8(byte[] raw) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(raw)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }
}
