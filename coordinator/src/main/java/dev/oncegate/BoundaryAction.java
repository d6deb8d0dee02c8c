package dev.oncegate;

/**
 * The external side effect itself: invoked at most once per scope, only after the scope was
 * armed with this executor's fencing token.
 *
 * <p>Return {@link ActionResult#verified} when delivery is confirmed,
 * {@link ActionResult#unconfirmed} when it is not, and throw {@link ProvenNotSentException} only
 * with proof that nothing was delivered. Any other exception (a timeout, a lost response)
 * records {@code send_status_unknown}, which consumes the key.
 *
 * <p>Called on the thread that calls {@link Attempt#cross}.
 */
@FunctionalInterface
public interface BoundaryAction {

    /**
     * Delivers the effect.
     *
     * @param context the key, scope and fencing token to hand on to the provider
     */
    ActionResult deliver(Context context) throws Exception;

    /**
     * What the action is told about its crossing. Immutable and thread-safe.
     *
     * @param key       the effect key
     * @param scope     the scope being crossed
     * @param token     the fencing token the scope was armed with, for a provider that can refuse a
     *                  stale executor (it remembers the largest token it has seen)
     * @param taskId    the task id of this executor
     * @param genesisId the namespace's genesis id (its life: a re-initialised namespace has another)
     * @param keyZxid   the zxid that created the key's znode (its incarnation: a key removed by
     *                  retention and entered again has another)
     */
    record Context(EffectKey key, int scope, FencingToken token, String taskId, String genesisId, long keyZxid) {

        /**
         * The idempotency token to hand the provider with every request of this crossing (an
         * HTTP {@code Idempotency-Key} header, a client message id): the same for each retry
         * inside this scope, different in any later scope and in any later incarnation of the key.
         * See {@link EffectKey#idempotencyKey(int, String, long)} for its exact derivation.
         */
        public String idempotencyKey() {
            return key.idempotencyKey(scope, genesisId, keyZxid);
        }
    }
}
