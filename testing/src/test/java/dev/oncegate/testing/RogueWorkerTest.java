package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import dev.oncegate.ActionResult;
import dev.oncegate.Attempt;
import dev.oncegate.BoundaryAction;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.KeyHistory;
import dev.oncegate.OncegateException;
import dev.oncegate.Operator;
import dev.oncegate.ProvenNotSentException;
import dev.oncegate.ScopeState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The threat model's worker row, explored: a rogue holding the worker credential
 * ({@link RogueWorker}) strikes at seeded random points of honest crossings — before a contender
 * enters, between its decision and its crossing, inside its action while another honest
 * contender enters — and an operator now and then authorizes a redelivery. A ledger of its own,
 * kept by the test and not by oncegate, then holds:
 * <ul>
 *   <li>deliveries by honest contenders, per key, at most 1 + the operator's authorizations;</li>
 *   <li>at most one honest crossing per scope;</li>
 *   <li>no scope an honest executor may have delivered in reads {@code not_sent}.</li>
 * </ul>
 * Bounded by {@code -Doncegate.rogue.duration} (default 15 s, 2 min under {@code -Plong};
 * {@code -Progue} runs ten minutes);
 * the seed is printed, and {@code -Doncegate.rogue.seed=N} replays a run.
 */
class RogueWorkerTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    static final int KEYS = 4;

    /** One honest crossing: the action was invoked (once the scope was armed). */
    record Crossed(String key, int scope, String task, boolean delivered) {
    }

    final List<Crossed> crossings = new ArrayList<>();
    final Map<String, Integer> authorizations = new HashMap<>();
    final Set<EffectKey> seen = new LinkedHashSet<>();
    final Deque<String> trail = new ArrayDeque<>();

    static long seed() {
        String s = System.getProperty("oncegate.rogue.seed");
        return s == null || s.isBlank() ? new Random().nextLong() : Long.parseLong(s.trim());
    }

    static Duration budget() {
        String duration = System.getProperty("oncegate.rogue.duration");
        return duration == null || duration.isBlank() ? LongRuns.of(Duration.ofSeconds(15), Duration.ofMinutes(2))
                : Duration.parse(duration.trim());
    }

    void log(String line) {
        trail.addLast(line);
        if (trail.size() > 80) {
            trail.removeFirst();
        }
    }

    /**
     * The worker credential may write an outcome znode (the executor's one write needs it), so it can
     * rewrite a verified or unknown outcome: contenders stop either way, but an operator deciding on a
     * redelivery must be able to tell the outcome is no longer its executor's word.
     */
    @Test
    void outcomeRewrittenWithTheWorkerCredential_inspectCountsItsWrites() throws Exception {
        RoleNamespace ns = RoleNamespace.create(zk);
        EffectKey rewritten = zk.newKey();
        EffectKey untouched = zk.newKey();
        for (EffectKey key : List.of(rewritten, untouched)) {
            try (Attempt a = ns.gate("task-a").enter(key)) {
                a.cross(ctx -> ActionResult.verified("msg-1"));
            }
        }
        String outcome = rewritten.path(ns.namespace()) + "/0/armed/outcome";
        org.apache.curator.framework.CuratorFramework worker = ns.client(RoleNamespace.WORKER);
        worker.setData().forPath(outcome, worker.getData().forPath(outcome));

        KeyHistory.Scope scope = ns.operator().inspect(rewritten.key()).scopes().get(0);
        assertThat(scope.outcomeWrites()).isEqualTo(2);
        assertThat(scope.state()).as("still a stop for contenders").isEqualTo(ScopeState.SENT_VERIFIED);
        assertThat(ns.operator().inspect(untouched.key()).scopes().get(0).outcomeWrites()).isEqualTo(1);
    }

    @Test
    void rogueWithTheWorkerCredential_makesHonestContendersStopAtWorst_neverDeliverAgain() throws Exception {
        long seed = seed();
        String replay = "mvn -B test -pl testing -am -Dsurefire.failIfNoSpecifiedTests=false -Dtest=RogueWorkerTest"
                + " -Doncegate.rogue.seed=" + seed;
        System.out.println("RogueWorkerTest seed " + seed + " (replay: " + replay + ")");
        Random random = new Random(seed);
        RoleNamespace roles = RoleNamespace.create(zk);
        RogueWorker rogue = new RogueWorker(roles.client(RoleNamespace.WORKER), roles.namespace(), new Random(random.nextLong()));
        List<Gate> gates = List.of(roles.gate("honest-a"), roles.gate("honest-b"), roles.gate("honest-c"));
        Operator operator = roles.operator();
        Operator reader = roles.admin();
        List<EffectKey> keys = new ArrayList<>();
        for (int i = 0; i < KEYS; i++) {
            keys.add(zk.newKey());
        }
        seen.addAll(keys);

        Instant end = Instant.now().plus(budget());
        int rounds = 0;
        while (Instant.now().isBefore(end)) {
            rounds++;
            int k = random.nextInt(KEYS);
            if (random.nextInt(8) == 0) {
                keys.set(k, zk.newKey()); // a fresh effect: a new history, maybe created by the rogue first
                seen.add(keys.get(k));
                if (random.nextBoolean()) {
                    log(rogue.precreate(keys.get(k)));
                }
            }
            EffectKey key = keys.get(k);
            strikes(rogue, key, random.nextInt(3));
            Gate gate = gates.get(random.nextInt(gates.size()));
            Gate other = gates.get((gates.indexOf(gate) + 1 + random.nextInt(gates.size() - 1)) % gates.size());
            round(random, rogue, gate, other, key, rounds);
            if (random.nextInt(5) == 0) {
                authorize(operator, reader, keys.get(random.nextInt(KEYS)));
            }
        }
        System.out.println("RogueWorkerTest seed " + seed + ": " + rounds + " rounds, " + crossings.size()
                + " honest crossings, " + authorizations.values().stream().mapToInt(Integer::intValue).sum()
                + " authorizations, " + seen.size() + " keys");

        String context = "seed " + seed + " (replay: " + replay + "); last strikes and decisions:\n"
                + String.join("\n", trail);
        for (EffectKey key : seen) {
            List<Crossed> mine = crossings.stream().filter(c -> c.key().equals(key.key())).toList();
            long delivered = mine.stream().filter(Crossed::delivered).count();
            assertThat(delivered).as("deliveries of key %s: at most 1 + its authorizations %s; %s", key.key(), mine, context)
                    .isLessThanOrEqualTo(1 + authorizations.getOrDefault(key.key(), 0));
            assertThat(mine.stream().map(Crossed::scope).distinct().count())
                    .as("one honest crossing per scope of %s: %s; %s", key.key(), mine, context).isEqualTo(mine.size());
            if (mine.stream().anyMatch(Crossed::delivered)) {
                KeyHistory history = reader.inspect(key.key());
                for (Crossed c : mine) {
                    if (c.delivered() && c.scope() < history.scopes().size()) {
                        assertThat(history.scopes().get(c.scope()).state())
                                .as("scope %d of %s, possibly delivered by %s, never reads not_sent; %s", c.scope(), key.key(),
                                        c.task(), context)
                                .isNotEqualTo(ScopeState.NOT_SENT);
                    }
                }
            }
        }
        assertThat(crossings).as("the run crossed at all; %s", context).isNotEmpty();
    }

    void strikes(RogueWorker rogue, EffectKey key, int count) throws InterruptedException {
        for (int i = 0; i < count; i++) {
            log("rogue " + rogue.strike(key));
        }
    }

    /** One honest contender's try, with the rogue striking between its steps and another contender entering inside its action. */
    void round(Random random, RogueWorker rogue, Gate gate, Gate other, EffectKey key, int round) throws Exception {
        try (Attempt attempt = gate.enter(key, Duration.ZERO)) {
            log("round " + round + " " + key.key().substring(0, 8) + ": " + attempt.decision());
            if (!attempt.decision().proceeds()) {
                return;
            }
            strikes(rogue, key, random.nextInt(2));
            if (random.nextInt(4) == 0 && !attempt.checkpoint("picker-open").proceeds()) {
                log("checkpoint stopped: " + attempt.decision());
                return;
            }
            int kind = random.nextInt(4);
            boolean nested = random.nextBoolean();
            int strikes = random.nextInt(3);
            log("crossing: " + attempt.cross(ctx -> {
                strikes(rogue, key, strikes);
                if (nested) {
                    inside(other, key);
                }
                return act(ctx, kind);
            }));
        }
    }

    /** Another honest contender entering (and crossing, should it proceed) while the first is inside its action. */
    void inside(Gate gate, EffectKey key) throws InterruptedException {
        try (Attempt attempt = gate.enter(key, Duration.ZERO)) {
            log("  meanwhile: " + attempt.decision());
            if (attempt.decision().proceeds()) {
                log("  meanwhile crossing: " + attempt.cross(ctx -> act(ctx, 0)));
            }
        }
    }

    /** The action: delivered and verified, delivered unconfirmed, proven not sent, or delivered and then failed. */
    ActionResult act(BoundaryAction.Context ctx, int kind) throws ProvenNotSentException {
        boolean delivers = kind != 2;
        crossings.add(new Crossed(ctx.key().key(), ctx.scope(), ctx.taskId(), delivers));
        return switch (kind) {
            case 0 -> ActionResult.verified("receipt " + ctx.idempotencyKey());
            case 1 -> ActionResult.unconfirmed("no confirmation");
            case 2 -> throw new ProvenNotSentException("the provider rejected it before storing anything");
            default -> throw new IllegalStateException("delivered, then the connection broke");
        };
    }

    /** The operator authorizes one redelivery of the key's latest scope when it is consumed. */
    void authorize(Operator operator, Operator reader, EffectKey key) throws InterruptedException {
        try {
            KeyHistory history = reader.inspect(key.key());
            if (!history.readable() || history.state() == null || !history.state().consumed()) {
                return;
            }
            int latest = history.scopes().size() - 1;
            if (operator.authorize(key.key(), latest, "ops", "rogue test").created()) {
                authorizations.merge(key.key(), 1, Integer::sum);
                log("operator authorized after-" + latest + " of " + key.key().substring(0, 8));
            }
        } catch (IllegalArgumentException | OncegateException refused) {
            log("operator refused: " + refused.getMessage());
        }
    }
}
