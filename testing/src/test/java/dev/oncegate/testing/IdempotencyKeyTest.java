package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.oncegate.ActionResult;
import dev.oncegate.Attempt;
import dev.oncegate.BoundaryAction;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.FencingToken;
import dev.oncegate.Gate;
import dev.oncegate.KeyHistory;
import dev.oncegate.Outcome;
import dev.oncegate.ProvenNotSentException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The idempotency key the action hands its provider: one per scope. Every request an executor
 * of a scope makes (its retries inside the action) carries the same token, whoever the executor
 * is; a scope opened after a proven {@code not_sent}, or by an operator's redelivery
 * authorization, is a new intent with a new token.
 */
class IdempotencyKeyTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    /** Each request the fake provider received: the scope and the idempotency key it carried. */
    record Request(int scope, String idempotencyKey) {
    }

    private final List<Request> requests = new CopyOnWriteArrayList<>();
    private final List<BoundaryAction.Context> contexts = new CopyOnWriteArrayList<>();

    /** An action that sends its request twice (a retry after a timeout), with the context's idempotency key. */
    private BoundaryAction retryingAction(ActionResult result, String notSentEvidence) {
        return ctx -> {
            contexts.add(ctx);
            requests.add(new Request(ctx.scope(), ctx.idempotencyKey()));
            requests.add(new Request(ctx.scope(), ctx.idempotencyKey())); // the retry
            if (notSentEvidence != null) {
                throw new ProvenNotSentException(notSentEvidence);
            }
            return result;
        };
    }

    @Test
    void retriesInOneScope_shareTheKey_andEveryNewScopeGetsItsOwn() throws Exception {
        // Given an effect that is rejected (proven not_sent) in scope 0, uncertain in scope 1,
        // and redelivered on an operator's authorization in scope 2
        EffectKey key = EffectKey.of(Destination.stable("slack", "C-" + UUID.randomUUID()),
                "invoice 42".getBytes(StandardCharsets.UTF_8));
        Gate first = zk.newGate("worker-a");
        Gate second = zk.newGate("worker-b");
        Gate third = zk.newGate("worker-c");

        // When each worker crosses with an action that retries its request once
        Crossing rejected = cross(first, key, retryingAction(null, "HTTP 400: channel archived"));
        Crossing uncertain = cross(second, key, retryingAction(ActionResult.unconfirmed("HTTP 504"), null));
        first.operator().authorize(key.key(), 1, "alice", "the customer saw nothing arrive");
        Crossing redelivered = cross(third, key, retryingAction(ActionResult.verified("msg-1"), null));

        // Then the three crossings were scopes 0, 1 and 2
        assertThat(List.of(rejected, uncertain, redelivered)).allSatisfy(c -> assertThat(c).isInstanceOf(Crossing.Crossed.class));
        assertThat(((Crossing.Crossed) rejected).outcome()).isEqualTo(Outcome.NOT_SENT);
        assertThat(((Crossing.Crossed) uncertain).outcome()).isEqualTo(Outcome.SEND_STATUS_UNKNOWN);
        assertThat(((Crossing.Crossed) redelivered).outcome()).isEqualTo(Outcome.SENT_VERIFIED);
        assertThat(contexts).extracting(BoundaryAction.Context::scope).containsExactly(0, 1, 2);
        // and a request and its retry carried the same key, the documented one of their scope
        assertThat(requests).hasSize(6);
        KeyHistory history = first.inspect(key.key());
        for (int scope = 0; scope < 3; scope++) {
            int s = scope;
            assertThat(requests).filteredOn(r -> r.scope() == s).extracting(Request::idempotencyKey)
                    .containsOnly(key.idempotencyKey(s, history.genesis(), history.zxid()));
        }
        // and no two scopes share one: not the not_sent-opened scope 1, not the authorized scope 2
        assertThat(requests.stream().map(Request::idempotencyKey).distinct()).hasSize(3);
        // and it does not depend on the executor: another executor of scope 1 (a new token, a new task) gets the same
        BoundaryAction.Context seen = contexts.get(1);
        BoundaryAction.Context otherExecutor = new BoundaryAction.Context(key, seen.scope(),
                new FencingToken(seen.token().version() + 5, seen.token().zxid() + 100), "worker-z", seen.genesisId(),
                seen.keyZxid());
        assertThat(otherExecutor.idempotencyKey()).isEqualTo(seen.idempotencyKey());
    }

    @Test
    void keyRemovedByRetentionAndEnteredAgain_scopeZeroGetsANewKey_soADeduplicatingProviderDeliversTheNewIntent()
            throws Exception {
        // Given a deduplicating provider (it answers a repeated idempotency key with the first receipt and
        // delivers nothing) and an effect delivered in scope 0
        java.util.Map<String, String> receipts = new java.util.concurrent.ConcurrentHashMap<>();
        BoundaryAction dedup = ctx -> {
            contexts.add(ctx);
            String known = receipts.get(ctx.idempotencyKey());
            if (known != null) {
                return ActionResult.verified(known); // deduplicated: nothing delivered
            }
            String receipt = zk.provider().deliver(ctx);
            receipts.put(ctx.idempotencyKey(), receipt);
            return ActionResult.verified(receipt);
        };
        EffectKey key = zk.key();
        Gate gate = zk.newGate("worker-a");
        cross(gate, key, dedup);
        KeyHistory first = gate.inspect(key.key());

        // When retention removes the key (an admin's gc, past its age by the server's clock), and the effect is meant again
        dev.oncegate.Operator admin = zk.newGate("admin").operator();
        Scenarios.eventually("retention removes the key", () -> {
            try {
                return admin.gc(java.time.Duration.ZERO, false, e -> { }).removed() == 1;
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        cross(zk.newGate("worker-b"), key, dedup);
        KeyHistory second = gate.inspect(key.key());

        // Then scope 0 of the new incarnation carried another idempotency key, and the provider delivered again
        assertThat(second.zxid()).isNotEqualTo(first.zxid());
        assertThat(contexts).hasSize(2).extracting(BoundaryAction.Context::scope).containsOnly(0);
        assertThat(contexts.get(0).idempotencyKey()).isNotEqualTo(contexts.get(1).idempotencyKey());
        assertThat(contexts.get(1).idempotencyKey()).isEqualTo(key.idempotencyKey(0, second.genesis(), second.zxid()));
        assertThat(zk.provider().deliveries()).isEqualTo(2);
        assertThat(receipts).hasSize(2);
    }

    private static Crossing cross(Gate gate, EffectKey key, BoundaryAction action) throws InterruptedException {
        try (Attempt attempt = gate.enter(key)) {
            assertThat(attempt.decision()).isInstanceOf(Decision.Proceed.class);
            return attempt.cross(action);
        }
    }
}
