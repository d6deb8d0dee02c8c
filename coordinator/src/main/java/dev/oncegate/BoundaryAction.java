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
     * What the action is told about its crossing.
     *
     * @param key    the effect key
     * @param scope  the scope being crossed
     * @param token  the fencing token the scope was armed with; pass it on as an idempotency token
     * @param taskId the task id of this executor
     */
    record Context(EffectKey key, int scope, FencingToken token, String taskId) {
    }
}
