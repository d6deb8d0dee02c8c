package dev.oncegate.cli;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.oncegate.BoundaryAction;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.Evidence;
import dev.oncegate.IdentityKind;
import dev.oncegate.KeyHistory;
import dev.oncegate.OncegateException;
import dev.oncegate.Outcome;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.json.schema.jackson2.DefaultJsonSchemaValidator;
import io.modelcontextprotocol.server.McpServerFeatures.AsyncToolSpecification;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The tools of {@code oncegate mcp}: their names, descriptions and input schemas (what a model
 * reads to decide how to use them, so part of the product: McpToolsIT pins them), and their
 * answers, each one JSON object whose first field, {@code instruction}, says in words what the
 * agent must do now ("do not send again", "proceed: …"). The work is {@link McpSession}'s.
 *
 * <p>Stateless; thread-safe.
 */
final class McpTools {

    /** What the server tells the model at initialisation: the order of the calls. */
    static final String INSTRUCTIONS = "oncegate makes an external delivery (a message, a mail, an upload, a post, a"
            + " submitted form) happen at most once across every agent that might attempt it: sibling agents, earlier"
            + " runs of this task and resumed tasks. For each delivery: 1. check_effect, and deliver only if it says"
            + " proceed; 2. checkpoint_effect before opening a picker or dialog and after any pause; 3. cross_effect"
            + " immediately before pressing the submit control, and submit (once) only if it says proceed; 4."
            + " record_outcome: sent_verified with the receipt as evidence, not_sent only with proof that nothing was"
            + " submitted, unknown whenever you are not sure. Never deliver without both check_effect and cross_effect"
            + " saying proceed, and never deliver again what an answer says was or may have been delivered.";

    static final int MAX_WAIT_SECONDS = 300;
    static final int MAX_EVIDENCE = 1024;

    private static final String KEY_PATTERN = "^[0-9a-f]{64}$";

    private McpTools() {
    }

    /**
     * The six tools, over {@code session}, each call run on {@code calls}. Not on the SDK's default
     * for blocking handlers (Reactor's shared boundedElastic scheduler, ten threads per core): a
     * check_effect may wait up to {@link #MAX_WAIT_SECONDS}, and calls queued behind waiting ones
     * would include the record_outcome of a delivery already made, which a session ending
     * meanwhile records send_status_unknown. {@code calls} must give every call a thread of its own.
     */
    static List<AsyncToolSpecification> specifications(McpSession session, Calls calls) {
        return List.of(
                tool(effectKeyTool(), args -> KeyCommand.describe(effectKey(session, args, false), session.namespace()),
                        calls),
                tool(checkTool(), args -> {
                    EffectKey key = effectKey(session, args, true);
                    int wait = integer(args, "wait_seconds", 0, MAX_WAIT_SECONDS);
                    McpEffect effect = session.check(key, Duration.ofSeconds(wait));
                    return decision(key.key(), effect.decision(), null);
                }, calls),
                tool(checkpointTool(), args -> {
                    String key = keyArgument(args);
                    String name = text(args, "name", 128, true);
                    return decision(key, session.checkpoint(key, scopeArgument(args), name), name);
                }, calls),
                tool(crossTool(), args -> {
                    String key = keyArgument(args);
                    return crossing(key, session.cross(key, scopeArgument(args)));
                }, calls),
                tool(recordTool(), args -> {
                    String key = keyArgument(args);
                    Outcome outcome = outcome(args);
                    String evidence = text(args, "evidence", MAX_EVIDENCE, outcome != Outcome.SEND_STATUS_UNKNOWN);
                    if (evidence == null) {
                        evidence = "the agent reported unknown without evidence";
                    }
                    return recorded(key, session.record(key, scopeArgument(args), outcome, evidence));
                }, calls),
                tool(inspectTool(), args -> {
                    // By key, a key nobody entered yet is inspected too (exists: false).
                    String key = args.get("key") != null ? keyAlone(args) : effectKey(session, args, false).key();
                    KeyHistory history = session.inspect(key);
                    Map<String, Object> out = Json.object();
                    out.put("instruction", "for reading only: this grants nothing; only check_effect can allow a"
                            + " delivery. Next attempt: " + history.nextAttempt());
                    out.putAll(Render.history(history));
                    return out;
                }, calls));
    }

    // ---- the tools as a model reads them ----

    static Tool effectKeyTool() {
        return Tool.builder("effect_key", schema(effectProperties(false), List.of("destination")))
                .title("Effect key")
                .description("Compute the effect key of delivering one exact content to one destination. It contacts"
                        + " nobody and changes nothing. The key is the same for every agent and every retry that would"
                        + " deliver the same bytes to the same destination; it never depends on a file's name or"
                        + " location. Returns {key, path, provider, identity, destination, sha256}, exactly what"
                        + " `oncegate key` prints. Give the content as file or as sha256, not both.")
                .annotations(annotations("Effect key", true, false))
                .build();
    }

    static Tool checkTool() {
        Map<String, Object> properties = effectProperties(true);
        properties.put("wait_seconds", ordered("type", "integer", "minimum", 0, "maximum", MAX_WAIT_SECONDS,
                "default", 0, "description", "When another agent is delivering this effect right now, how long to"
                        + " wait for its result instead of answering stop_busy at once (default 0)."));
        return Tool.builder("check_effect", schema(properties, List.of()))
                .title("Check before delivering")
                .description("Call this BEFORE starting any external delivery (sending a message or a mail, uploading"
                        + " or attaching a file, posting, submitting a form) to learn whether you may do it. Sibling"
                        + " agents, earlier runs of this task and resumed tasks may already have delivered the same"
                        + " content to the same destination: only this answer tells, never your own memory. The"
                        + " answer's decision is one of: proceed (you alone may deliver it; you now hold the lease),"
                        + " stop_sent (already delivered: do not send again), stop_unknown (may already have been"
                        + " delivered: do not send again and do not retry), stop_busy (another agent is delivering it"
                        + " now: do not send; you may call again with wait_seconds), stop_unavailable (the state could"
                        + " not be established: do not send). Follow the answer's instruction literally. Proceed does"
                        + " not allow you to submit yet: call cross_effect immediately before the submit control. Name"
                        + " the effect by destination plus file or sha256, or by key once known.")
                .annotations(annotations("Check before delivering", false, false))
                .build();
    }

    static Tool checkpointTool() {
        Map<String, Object> properties = keyAndScopeProperties();
        properties.put("name", ordered("type", "string", "minLength", 1, "maxLength", 128, "description",
                "The step you are about to take, e.g. attachment-picker, compose-dialog, resume-after-pause."));
        return Tool.builder("checkpoint_effect", schema(properties, List.of("key", "name")))
                .title("Checkpoint before the boundary")
                .description("Revalidate your lease on an effect you hold (check_effect said proceed) at a named step"
                        + " on the way to the boundary, and renew it: call it before opening an attachment picker or a"
                        + " compose dialog, after any pause, long wait or reconnect, and before anything that takes a"
                        + " while. If the answer's decision is not proceed, stop: another agent took over or the state"
                        + " changed, and you must not submit.")
                .annotations(annotations("Checkpoint before the boundary", false, true))
                .build();
    }

    static Tool crossTool() {
        return Tool.builder("cross_effect", schema(keyAndScopeProperties(), List.of("key")))
                .title("Cross the boundary")
                .description("Call this IMMEDIATELY before the control that performs the delivery (the Send, Submit"
                        + " or Upload button, the API request), after check_effect said proceed. It records, atomically"
                        + " and for every agent, that this delivery is about to happen: from then on the effect counts"
                        + " as possibly delivered. Only act if the answer's decision is proceed, and then submit"
                        + " exactly once; hand the returned idempotency_key to the provider when it accepts one (an"
                        + " Idempotency-Key header, a client message id). If the decision is anything else, do not"
                        + " submit. After submitting, or failing to, call record_outcome.")
                .annotations(annotations("Cross the boundary", false, false))
                .build();
    }

    static Tool recordTool() {
        Map<String, Object> properties = keyAndScopeProperties();
        properties.put("outcome", ordered("type", "string", "enum", List.of("sent_verified", "not_sent", "unknown"),
                "description", "sent_verified: you saw confirmation that it was delivered. not_sent: you have proof"
                        + " that nothing was submitted. unknown: anything else."));
        properties.put("evidence", ordered("type", "string", "maxLength", MAX_EVIDENCE, "description",
                "For sent_verified the receipt (a message id, a sent-folder entry, a confirmation text); for not_sent"
                        + " the proof that nothing was submitted; for unknown what happened. Required for"
                        + " sent_verified and not_sent."));
        return Tool.builder("record_outcome", schema(properties, List.of("key", "outcome")))
                .title("Record the outcome")
                .description("Report what happened after cross_effect said proceed; once per crossing, it cannot be"
                        + " changed. The rule: uncertain means unknown. sent_verified only when you saw confirmation"
                        + " that the delivery happened, with the receipt as evidence. not_sent only with proof that"
                        + " nothing was submitted (the submit control was never pressed, or the provider rejected the"
                        + " request before accepting anything), with that proof as evidence: not_sent lets another"
                        + " agent deliver, so never use it when unsure. Anything uncertain (a timeout, an error after"
                        + " pressing submit, a page that did not load, no confirmation) is unknown: it consumes the"
                        + " effect for good, and an operator decides about a redelivery. If you never call this, the"
                        + " outcome is recorded as unknown when your session ends.")
                .annotations(annotations("Record the outcome", false, false))
                .build();
    }

    static Tool inspectTool() {
        return Tool.builder("inspect_effect", schema(effectProperties(true), List.of()))
                .title("Inspect an effect")
                .description("Read everything recorded about an effect, changing nothing: every scope (each new"
                        + " intent to deliver) with its state, who held or crossed it and when, its outcome and"
                        + " evidence, operator authorizations, and in plain words what a new check_effect would do now."
                        + " Use it to explain a stop; it grants nothing: only check_effect can allow a delivery. Name"
                        + " the effect by key, or by destination plus file or sha256.")
                .annotations(annotations("Inspect an effect", true, true))
                .build();
    }

    private static Map<String, Object> effectProperties(boolean withKey) {
        Map<String, Object> p = withKey ? keyProperty() : Json.object();
        p.put("destination", ordered("type", "string", "minLength", 3, "description",
                "Where the content goes, as PROVIDER:ID, e.g. slack:C024BE91L or mail:ops@example.com. Prefer the"
                        + " provider's stable id; when you only know the visible title, give it exactly (e.g."
                        + " slack:#general) and set identity to display-name. Copy it exactly: no trimming, no change"
                        + " of case."));
        p.put("identity", ordered("type", "string", "enum", List.of("stable", "display-name"), "default", "stable",
                "description", "stable: ID is a provider-assigned id (default). display-name: ID is an exact visible"
                        + " title, a weaker identity."));
        p.put("file", ordered("type", "string", "minLength", 1, "description",
                "Path of the exact file to deliver, readable by this server (absolute, or relative to its working"
                        + " directory); its SHA-256 is part of the key. Give file or sha256, not both."));
        p.put("sha256", ordered("type", "string", "pattern", KEY_PATTERN, "description",
                "SHA-256 of the exact bytes to deliver (64 lower-case hex characters), e.g. of a message's UTF-8"
                        + " text, when there is no file. Give file or sha256, not both."));
        return p;
    }

    /** The key, and the scope a call is for. */
    private static Map<String, Object> keyAndScopeProperties() {
        Map<String, Object> p = keyProperty();
        p.put("scope", ordered("type", "integer", "minimum", 0, "description",
                "The scope check_effect answered (each new intent to deliver the effect has its own). Give it always;"
                        + " it is required once this session has worked on more than one scope of the effect, since a"
                        + " call without it may repeat one for an earlier scope."));
        return p;
    }

    private static Map<String, Object> keyProperty() {
        Map<String, Object> p = Json.object();
        p.put("key", ordered("type", "string", "pattern", KEY_PATTERN, "description",
                "The effect key (64 lower-case hex characters) that check_effect or effect_key returned."));
        return p;
    }

    /** A JSON object with its fields in the order given (tools/list renders the same bytes every time). */
    private static Map<String, Object> ordered(Object... fieldsAndValues) {
        Map<String, Object> m = Json.object();
        for (int i = 0; i < fieldsAndValues.length; i += 2) {
            m.put((String) fieldsAndValues[i], fieldsAndValues[i + 1]);
        }
        return m;
    }

    private static Map<String, Object> schema(Map<String, Object> properties, List<String> required) {
        Map<String, Object> s = Json.object();
        s.put("type", "object");
        s.put("properties", properties);
        if (!required.isEmpty()) {
            s.put("required", required);
        }
        s.put("additionalProperties", false);
        return s;
    }

    private static McpSchema.ToolAnnotations annotations(String title, boolean readOnly, boolean idempotent) {
        return new McpSchema.ToolAnnotations(title, readOnly, false, idempotent, true, null);
    }

    // ---- answers ----

    /** A check's or a checkpoint's answer. */
    static Map<String, Object> decision(String key, Decision decision, String checkpoint) {
        Map<String, Object> out = answer(key, decision.kind());
        if (decision instanceof Decision.Proceed proceed) {
            out.put("instruction", checkpoint == null
                    ? "proceed: you hold the lease for scope " + proceed.scope() + " of this effect, and nothing has"
                    + " been delivered in this scope. Prepare the delivery; call checkpoint_effect before opening a"
                    + " picker or dialog, and cross_effect immediately before the submit control. Do not submit"
                    + " before cross_effect says proceed."
                    : "proceed: your lease for scope " + proceed.scope() + " is still valid and renewed at checkpoint '"
                    + checkpoint + "'. Continue; call cross_effect immediately before the submit control.");
            out.put("scope", proceed.scope());
            out.put("token", proceed.token().version());
            out.put("zxid", proceed.token().zxid());
            return out;
        }
        return stop(out, (Decision.Stop) decision, "send");
    }

    /** A crossing's answer: armed (proceed) or refused. */
    static Map<String, Object> crossing(String key, McpEffect.CrossAnswer answer) {
        if (answer.refused() != null) {
            return stop(answer(key, answer.refused().kind()), answer.refused(), "submit");
        }
        BoundaryAction.Context armed = answer.armed();
        Map<String, Object> out = answer(key, "proceed");
        out.put("instruction", "proceed: scope " + armed.scope() + " is armed for you. Submit exactly once, now;"
                + " hand idempotency_key " + armed.idempotencyKey() + " to the provider if it accepts one. Then call"
                + " record_outcome: sent_verified with the receipt as evidence, not_sent only with proof that nothing"
                + " was submitted, unknown otherwise. Never submit twice.");
        out.put("scope", armed.scope());
        out.put("token", armed.token().version());
        out.put("zxid", armed.token().zxid());
        out.put("idempotency_key", armed.idempotencyKey());
        return out;
    }

    /** record_outcome's answer: what the records say now. */
    static Map<String, Object> recorded(String key, Crossing.Crossed crossed) {
        Map<String, Object> out = answer(key, null);
        Outcome readsAs = crossed.recorded() ? crossed.outcome() : Outcome.SEND_STATUS_UNKNOWN;
        String instruction;
        if (!crossed.recorded()) {
            instruction = "the outcome could not be written (ZooKeeper unreachable): scope " + crossed.scope()
                    + " stays armed, which reads as send_status_unknown to every agent. Do not deliver this effect"
                    + " again; an operator decides about a redelivery.";
        } else {
            instruction = switch (crossed.outcome()) {
                case SENT_VERIFIED -> "recorded sent_verified for scope " + crossed.scope() + ": the effect is"
                        + " delivered, and no agent will deliver it again. Done.";
                case NOT_SENT -> "recorded not_sent for scope " + crossed.scope() + ": nothing was delivered and the"
                        + " effect is free again; call check_effect if it should still be delivered.";
                case SEND_STATUS_UNKNOWN -> "recorded send_status_unknown for scope " + crossed.scope() + ": the"
                        + " effect may have been delivered and is consumed. Do not deliver it again; an operator"
                        + " decides about a redelivery.";
            };
        }
        out.put("instruction", instruction);
        out.put("scope", crossed.scope());
        out.put("token", crossed.token().version());
        out.put("zxid", crossed.token().zxid());
        out.put("outcome", crossed.outcome().wireName());
        out.put("recorded", crossed.recorded());
        out.put("reads_as", readsAs.wireName());
        out.put("detail", crossed.detail());
        return out;
    }

    private static Map<String, Object> answer(String key, String decision) {
        Map<String, Object> out = Json.object();
        out.put("instruction", null);
        out.put("decision", decision);
        out.put("key", key);
        return out;
    }

    /** A stop in words: what happened, by whom and when, and what not to do. */
    private static Map<String, Object> stop(Map<String, Object> out, Decision.Stop stop, String verb) {
        Evidence e = stop.evidence();
        String scope = e.scope() < 0 ? "" : " (scope " + e.scope() + ")";
        String who = (e.task() != null ? "task " + e.task() : "another agent")
                + (e.host() != null ? " on " + e.host() : "");
        String when = e.at() != null ? " at " + e.at() : "";
        String instruction = switch (stop.reason()) {
            case SENT_VERIFIED -> "do not " + verb + ": already delivered (sent_verified) by " + who + when + scope
                    + ". Do not send again; it is done.";
            case SEND_STATUS_UNKNOWN -> "do not " + verb + ": " + who + " crossed the boundary" + when + scope
                    + " and its outcome is unknown, so it may already have been delivered. Do not send again and do"
                    + " not retry; only an operator who checked with the recipient can authorize a redelivery.";
            case ARMED_WITHOUT_OUTCOME -> "do not " + verb + ": " + who + " is delivering it or died while"
                    + " delivering (armed" + when + scope + ", no outcome yet), so it may already have been delivered."
                    + " Do not send again and do not retry.";
            case EXECUTOR_ACTIVE, WAIT_EXPIRED -> "do not " + verb + " now: " + who + " is working on this effect"
                    + scope + ". Call check_effect again, with wait_seconds, to wait for its result.";
            case FENCED -> "do not " + verb + ": your lease was taken over by " + who + scope + ", so you may no"
                    + " longer deliver this effect. Call check_effect again to learn its result.";
            default -> "do not " + verb + ": the shared state could not be established (" + stop.reason().wireName()
                    + ": " + e.detail() + "). Fail closed: do not send; call check_effect again later, and tell the"
                    + " user if it persists.";
        };
        out.put("instruction", instruction);
        out.put("reason", stop.reason().wireName());
        out.put("scope", e.scope() < 0 ? null : e.scope());
        out.put("evidence", Json.evidence(e));
        return out;
    }

    // ---- arguments ----

    /** A tool's work on its arguments; IllegalArgumentException for bad input, IllegalStateException for a wrong order. */
    @FunctionalInterface
    interface Work {
        Map<String, Object> apply(Map<String, Object> args) throws InterruptedException;
    }

    /**
     * The SDK's own JSON Schema validator, run by each tool on its arguments ({@link McpCommand}
     * turns the SDK's run of it off): the SDK would answer a refusal in plain text, while every
     * answer of these tools is one JSON object whose {@code instruction} says what to do.
     */
    private static final JsonSchemaValidator SCHEMAS = new DefaultJsonSchemaValidator();

    /** What the SDK's validator puts before the list of errors. */
    private static final String VALIDATOR_PREFIX = "Validation failed: JSON schema validation errors: ";

    /**
     * Where the calls run ({@link #specifications}), and what the session's end waits for when the
     * client closes stdin: every {@code tools/call} line stdin handed the SDK before its end reaches
     * its handler, and every {@code record_outcome} under way finishes, so that an outcome reported
     * in the last line before the end is the one recorded (within the shutdown grace). Thread-safe.
     */
    static final class Calls {
        final Scheduler scheduler;
        private long handed;
        private long dispatched;
        private int recording;

        Calls(Scheduler scheduler) {
            this.scheduler = scheduler;
        }

        /** stdin handed the SDK a line that may be a tools/call request. */
        synchronized void handed() {
            handed++;
        }

        private synchronized void dispatched(boolean record) {
            dispatched++;
            if (record) {
                recording++;
            }
            notifyAll();
        }

        private synchronized void recorded() {
            recording--;
            notifyAll();
        }

        /**
         * Waits, at most {@code within}, until every call handed on has reached its handler and no
         * record_outcome is under way; returns whether they did.
         */
        synchronized boolean awaitReceived(Duration within) throws InterruptedException {
            long deadline = System.nanoTime() + within.toNanos();
            while (dispatched < handed || recording > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return true;
        }
    }

    private static AsyncToolSpecification tool(Tool tool, Work work, Calls calls) {
        Work validated = args -> {
            JsonSchemaValidator.ValidationResponse valid = SCHEMAS.validate(tool.inputSchema(), args);
            if (!valid.valid()) {
                throw new IllegalArgumentException(schemaErrors(valid.errorMessage()));
            }
            return work.apply(args);
        };
        boolean record = tool.name().equals(recordTool().name());
        return new AsyncToolSpecification(tool, (exchange, request) -> {
            calls.dispatched(record);
            Mono<CallToolResult> answer = Mono.fromCallable(() -> call(tool.name(), validated,
                    request.arguments() == null ? Map.of() : request.arguments())).subscribeOn(calls.scheduler);
            return record ? answer.doFinally(signal -> calls.recorded()) : answer;
        });
    }

    /** The validator's errors, e.g. {@code /destination: integer found, string expected}, without its wrapping. */
    static String schemaErrors(String message) {
        String errors = message == null ? "the arguments do not match the tool's input schema" : message;
        if (errors.startsWith(VALIDATOR_PREFIX)) {
            errors = errors.substring(VALIDATOR_PREFIX.length());
        }
        if (errors.startsWith("[") && errors.endsWith("]")) {
            errors = errors.substring(1, errors.length() - 1);
        }
        return errors.startsWith(": ") ? errors.substring(2) : errors;
    }

    /** Runs one call; bad input and wrong order are answers with isError, never a protocol error. */
    static CallToolResult call(String tool, Work work, Map<String, Object> args) {
        try {
            return result(work.apply(args), false);
        } catch (IllegalArgumentException e) {
            return error(tool + ": bad input: " + e.getMessage() + ". Nothing was written; correct the arguments.");
        } catch (IllegalStateException e) {
            return error(e.getMessage());
        } catch (OncegateException e) {
            return error(tool + ": unavailable, failing closed: " + e.getMessage() + ". Do not send.");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return error(tool + ": interrupted: the session is ending. Do not send.");
        } catch (RuntimeException e) {
            return error(tool + ": unexpected failure, failing closed: " + e + ". Do not send.");
        }
    }

    private static CallToolResult result(Map<String, Object> body, boolean error) {
        return CallToolResult.builder().addTextContent(Json.line(body)).structuredContent(body).isError(error).build();
    }

    private static CallToolResult error(String message) {
        Map<String, Object> body = Json.object();
        body.put("instruction", message);
        body.put("error", true);
        return result(body, true);
    }

    private static EffectKey effectKey(McpSession session, Map<String, Object> args, boolean keyAllowed)
            throws InterruptedException {
        if (args.get("key") != null && keyAllowed) {
            return session.effectKey(keyAlone(args));
        }
        String destination = text(args, "destination", Destination.MAX_ID_BYTES + 64, true);
        String identity = text(args, "identity", 32, false);
        IdentityKind kind = identity == null ? IdentityKind.STABLE : IdentityKind.fromWireName(identity);
        Destination dest;
        try {
            dest = Destination.parse(kind, destination);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("destination: " + e.getMessage(), e);
        }
        String file = text(args, "file", 4096, false);
        String sha256 = text(args, "sha256", 64, false);
        if ((file == null) == (sha256 == null)) {
            throw new IllegalArgumentException("file, sha256: give exactly one of them: the content to deliver");
        }
        return file != null ? EffectKey.of(dest, Path.of(file)) : EffectKey.of(dest, sha256);
    }

    /** The key, given instead of destination and content. */
    private static String keyAlone(Map<String, Object> args) {
        if (args.get("destination") != null || args.get("file") != null || args.get("sha256") != null) {
            throw new IllegalArgumentException("key: give either key or destination with file/sha256, not both");
        }
        return keyArgument(args);
    }

    private static String keyArgument(Map<String, Object> args) {
        return EffectKey.requireKeyText(text(args, "key", 64, true));
    }

    /** The scope a call names, or null when it names none. */
    private static Integer scopeArgument(Map<String, Object> args) {
        return args.get("scope") == null ? null : integer(args, "scope", 0, Integer.MAX_VALUE);
    }

    private static Outcome outcome(Map<String, Object> args) {
        String text = text(args, "outcome", 32, true);
        return switch (text) {
            case "sent_verified" -> Outcome.SENT_VERIFIED;
            case "not_sent" -> Outcome.NOT_SENT;
            case "unknown" -> Outcome.SEND_STATUS_UNKNOWN;
            default -> throw new IllegalArgumentException("outcome: must be sent_verified, not_sent or unknown, got '"
                    + text + "'");
        };
    }

    private static String text(Map<String, Object> args, String field, int max, boolean required) {
        Object value = args.get(field);
        if (value == null || (value instanceof String s && s.isBlank())) {
            if (required) {
                throw new IllegalArgumentException(field + ": missing" + (field.equals("evidence")
                        ? " (sent_verified needs the receipt, not_sent the proof that nothing was submitted; without"
                        + " either, the outcome is unknown)" : ""));
            }
            return null;
        }
        if (!(value instanceof String s)) {
            throw new IllegalArgumentException(field + ": must be a string");
        }
        if (s.length() > max) {
            throw new IllegalArgumentException(field + ": at most " + max + " characters, got " + s.length());
        }
        return s;
    }

    private static int integer(Map<String, Object> args, String field, int min, int max) {
        Object value = args.get(field);
        if (value == null) {
            return min;
        }
        if (!(value instanceof Number n) || n.doubleValue() != Math.rint(n.doubleValue())) {
            throw new IllegalArgumentException(field + ": must be a whole number");
        }
        long v = n.longValue();
        if (v < min || v > max) {
            throw new IllegalArgumentException(field + ": must be from " + min + " to " + max + ", got " + v);
        }
        return (int) v;
    }
}
