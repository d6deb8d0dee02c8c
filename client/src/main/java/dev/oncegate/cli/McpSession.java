package dev.oncegate.cli;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.IdentityKind;
import dev.oncegate.KeyHistory;
import dev.oncegate.Outcome;

/**
 * The agent task of one MCP session ({@code oncegate mcp}): the effects it works on, each an
 * {@link McpEffect} by key, on one {@link Gate}. The session's end ends every effect (before a
 * crossing: released; after it: unknown unless reported).
 *
 * <p>Thread-safe: the map is guarded by this object's lock, never held while waiting on an effect.
 */
final class McpSession {

    /** Effects a session may hold at once (each has a thread): an agent works on a few. */
    static final int MAX_EFFECTS = 64;

    private final Gate gate;
    private final McpEffect.Preparation prepare;
    private final Map<String, McpEffect> effects = new LinkedHashMap<>();
    /** The scopes this session proceeded in, by key: more than one, and a call must name its scope ({@link #held}). */
    private final Map<String, java.util.SortedSet<Integer>> proceeded = new java.util.HashMap<>();
    private String ended;

    McpSession(Gate gate, McpEffect.Preparation prepare) {
        this.gate = gate;
        this.prepare = prepare;
    }

    String namespace() {
        return gate.namespace();
    }

    /**
     * {@code check_effect}: the decision for {@code key}. An effect this session is entering
     * answers with its own decision (a retried call never enters twice), one it holds after
     * revalidating its lease as a checkpoint does (its stop, if the lease was lost); a stopped or
     * finished one is entered again.
     */
    McpEffect check(EffectKey key, Duration wait) throws InterruptedException {
        McpEffect effect;
        boolean held;
        synchronized (this) {
            requireOpen();
            effect = effects.get(key.key());
            if (effect != null && (effect.phase() == McpEffect.Phase.CROSSING || effect.phase() == McpEffect.Phase.ARMED)) {
                throw new IllegalStateException("check_effect: you already crossed this effect: do not submit again;"
                        + " call record_outcome with what happened");
            }
            boolean reusable = effect != null && switch (effect.phase()) {
                case ENTERING, PROCEEDING -> true;
                case CROSSING, ARMED, STOPPED, CROSSED, ENDED -> false;
            };
            held = reusable && effect.phase() == McpEffect.Phase.PROCEEDING;
            if (!reusable) {
                if (effects.size() >= MAX_EFFECTS) {
                    evictFinished();
                }
                if (effects.size() >= MAX_EFFECTS) {
                    throw new IllegalStateException("check_effect: this session already works on " + MAX_EFFECTS
                            + " effects at once: finish them (cross_effect and record_outcome) first");
                }
                effect = McpEffect.enter(gate, key, wait, prepare);
                effects.put(key.key(), effect);
            }
        }
        if (effect.awaitEntry() instanceof Decision.Proceed p) {
            synchronized (this) {
                proceeded.computeIfAbsent(key.key(), k -> new java.util.TreeSet<>()).add(p.scope());
            }
        }
        if (held) {
            // Held since an earlier call: its lease may have lapsed and a sibling delivered meanwhile (SPEC 4.5: a
            // resumed task checks again). Revalidated as a checkpoint is; a stop is then the answer.
            effect.checkpoint("check_effect");
        }
        return effect;
    }

    /**
     * The effect this session holds for {@code key}, in {@code scope} when given; IllegalStateException
     * saying what to do otherwise. An agent repeats calls: once this session has proceeded in more than
     * one scope of the key (scope n ended {@code not_sent}, n+1 proceeded), a call naming the key alone
     * may be a repeat of one for scope n, so it must name its scope, and one naming another scope than
     * the one held is over. Else a repeated {@code not_sent} of scope n would become scope n+1's outcome.
     */
    McpEffect held(String key, Integer scope, String tool) {
        synchronized (this) {
            requireOpen();
            McpEffect effect = effects.get(key);
            if (effect == null) {
                throw new IllegalStateException(tool + ": this session has not checked effect " + key
                        + ": call check_effect first, and act only if it says proceed");
            }
            int current = scope(effect);
            java.util.SortedSet<Integer> scopes = proceeded.getOrDefault(key, java.util.Collections.emptySortedSet());
            if (scope == null && scopes.size() > 1) {
                throw new IllegalStateException(tool + ": this session has worked on effect " + key + " in scopes "
                        + scopes + ": name the scope (the one check_effect answered: " + current + "), since a call"
                        + " without it may repeat one for an earlier scope. Nothing was written");
            }
            if (scope != null && scope != current) {
                throw new IllegalStateException(tool + ": this session's effect " + key + " is in scope " + current
                        + ", not " + scope + ": a call for scope " + scope + " is over (a repeated call?). Nothing was"
                        + " written");
            }
            return effect;
        }
    }

    /** The scope of {@code effect}'s decision; -1 before it has one. */
    private static int scope(McpEffect effect) {
        Decision d = effect.decision();
        return d instanceof Decision.Proceed p ? p.scope() : d instanceof Decision.Stop s ? s.evidence().scope() : -1;
    }

    /** {@code checkpoint_effect}. */
    Decision checkpoint(String key, Integer scope, String name) throws InterruptedException {
        return held(key, scope, "checkpoint_effect").checkpoint(name);
    }

    /** {@code cross_effect}. */
    McpEffect.CrossAnswer cross(String key, Integer scope) throws InterruptedException {
        return held(key, scope, "cross_effect").cross();
    }

    /** {@code record_outcome}. */
    Crossing.Crossed record(String key, Integer scope, Outcome outcome, String evidence) throws InterruptedException {
        return held(key, scope, "record_outcome").record(outcome, evidence);
    }

    /** {@code inspect_effect}: everything recorded, read without a lock. */
    KeyHistory inspect(String key) throws InterruptedException {
        return gate.inspect(key);
    }

    /**
     * The effect key of a key given as text: this session's own, else rebuilt from the key record
     * that its first contender wrote (and checked against the key).
     *
     * @throws IllegalArgumentException when nobody ever entered the key (its destination and content are unknown)
     */
    EffectKey effectKey(String key) throws InterruptedException {
        synchronized (this) {
            McpEffect effect = effects.get(key);
            if (effect != null) {
                return effect.key();
            }
        }
        KeyHistory.KeyRecord record = gate.inspect(key).record();
        if (record == null) {
            throw new IllegalArgumentException("key: no agent has entered " + key + " yet, so its destination and"
                    + " content are unknown here: name the effect by destination and file (or sha256) instead");
        }
        Destination destination = new Destination(record.provider(), IdentityKind.fromWireName(record.identity()),
                record.destination());
        EffectKey effectKey = EffectKey.of(destination, record.sha256());
        if (!effectKey.key().equals(key)) {
            throw new IllegalArgumentException("key: the key record of " + key + " names another effect ("
                    + effectKey.key() + "): name the effect by destination and file (or sha256) instead");
        }
        return effectKey;
    }

    /**
     * Ends the session: every effect ends (see {@link McpEffect#end}), then waits up to
     * {@code grace} in all for their last writes. Idempotent.
     *
     * @return how many crossings ended unreported that armed, or may have: each recorded as
     *         {@code send_status_unknown}, or reading so (a crossing in flight that the library then
     *         refused armed nothing and is not counted)
     */
    int end(String why, Duration grace) throws InterruptedException {
        List<McpEffect> all;
        synchronized (this) {
            if (ended == null) {
                ended = why;
            }
            all = new ArrayList<>(effects.values());
        }
        for (McpEffect effect : all) {
            effect.end(why);
        }
        long deadline = System.nanoTime() + grace.toNanos();
        for (McpEffect effect : all) {
            effect.awaitEnd(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        }
        int unreported = 0; // counted once the crossings in flight armed or were refused
        for (McpEffect effect : all) {
            if (effect.endedUnreported()) {
                unreported++;
            }
        }
        return unreported;
    }

    /** How many of this session's crossings armed and ended with their outcome not (or maybe not) recorded. */
    int unrecorded() {
        List<McpEffect> all;
        synchronized (this) {
            all = new ArrayList<>(effects.values());
        }
        int n = 0;
        for (McpEffect effect : all) {
            if (effect.unrecorded()) {
                n++;
            }
        }
        return n;
    }

    private void requireOpen() {
        if (ended != null) {
            throw new IllegalStateException("the session is ending (" + ended + "): do not submit");
        }
    }

    private void evictFinished() {
        effects.values().removeIf(e -> switch (e.phase()) {
            case STOPPED, CROSSED, ENDED -> true;
            default -> false;
        });
    }
}
