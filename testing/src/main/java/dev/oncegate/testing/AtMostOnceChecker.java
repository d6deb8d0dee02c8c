package dev.oncegate.testing;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

import dev.oncegate.KeyHistory;
import dev.oncegate.ScopeState;

/**
 * Checks a recorded history against the at-most-once rules: the provider's ledger (what was
 * really delivered) against what ZooKeeper recorded for every key ({@link KeyHistory}).
 *
 * <ul>
 *   <li><b>no scope crossed twice</b>: at most one delivery per (key, scope);</li>
 *   <li><b>no delivery after a consuming outcome</b>: no delivery in a scope that opened after a
 *       {@code send_status_unknown} or {@code sent_verified} scope unless an authorization opened it;</li>
 *   <li><b>{@code sent_verified} only when delivered</b>: its scope has a delivery in the ledger;</li>
 *   <li><b>a delivery only in an armed scope</b>: the ledger never shows a scope that was not armed;</li>
 *   <li><b>every effect decided</b> (when asked): the latest scope of each key is
 *       {@code sent_verified}, {@code send_status_unknown} or armed (which reads as unknown).</li>
 * </ul>
 *
 * <p>Stateless and thread-safe; {@link #check} returns an immutable {@link Verdict}.
 */
public final class AtMostOnceChecker {

    private AtMostOnceChecker() {
    }

    /**
     * The checker's findings.
     *
     * @param effects    keys checked
     * @param deliveries deliveries in the ledger for those keys
     * @param duplicates deliveries beyond the first, per key, summed
     * @param outcomes   final state of each key's latest scope, counted by state name
     * @param undecided  keys whose latest scope is still open or leased
     * @param violations every broken rule, in words (empty when the history is safe)
     */
    public record Verdict(int effects, int deliveries, int duplicates, Map<String, Integer> outcomes,
                          int undecided, List<String> violations) {

        /** Whether no safety rule was broken (liveness is reported in {@link #undecided}). */
        public boolean safe() {
            return violations.isEmpty();
        }
    }

    /**
     * Checks {@code ledger} against {@code histories}.
     *
     * @param requireDecided whether an undecided key is a violation (liveness after faults stop)
     */
    public static Verdict check(Collection<KeyHistory> histories, List<RecordingProvider.Delivery> ledger,
                                boolean requireDecided) {
        Objects.requireNonNull(histories, "histories");
        Objects.requireNonNull(ledger, "ledger");
        Map<String, Map<Integer, List<RecordingProvider.Delivery>>> byKey = new HashMap<>();
        for (RecordingProvider.Delivery d : ledger) {
            byKey.computeIfAbsent(d.key(), k -> new TreeMap<>()).computeIfAbsent(d.scope(), s -> new ArrayList<>()).add(d);
        }
        List<String> violations = new ArrayList<>();
        Map<String, Integer> outcomes = new TreeMap<>();
        int deliveries = 0;
        int duplicates = 0;
        int undecided = 0;
        for (KeyHistory h : histories) {
            Map<Integer, List<RecordingProvider.Delivery>> scopes = byKey.getOrDefault(h.key(), Map.of());
            int keyDeliveries = scopes.values().stream().mapToInt(List::size).sum();
            deliveries += keyDeliveries;
            duplicates += Math.max(0, keyDeliveries - 1);
            if (!h.exists()) {
                if (keyDeliveries > 0) {
                    violations.add(h.key() + ": " + keyDeliveries + " deliveries but no key record");
                }
                undecided++;
                outcomes.merge("absent", 1, Integer::sum);
                continue;
            }
            for (KeyHistory.Unreadable u : h.unreadable()) {
                violations.add(h.key() + ": unreadable record " + u.path() + " (" + u.problem() + ")");
            }
            boolean consumed = false;
            for (KeyHistory.Scope scope : h.scopes()) {
                int crossed = scopes.getOrDefault(scope.scope(), List.of()).size();
                if (crossed > 1) {
                    violations.add(h.key() + " scope " + scope.scope() + ": crossed " + crossed + " times");
                }
                boolean authorized = String.valueOf(scope.opened()).startsWith("after-");
                if (consumed && !authorized && crossed > 0) {
                    violations.add(h.key() + " scope " + scope.scope() + ": delivered after a consuming outcome without authorization");
                }
                if (crossed > 0 && scope.armed() == null) {
                    violations.add(h.key() + " scope " + scope.scope() + ": delivered but never armed");
                }
                if (scope.state() == ScopeState.SENT_VERIFIED && scope.reconciliation() == null && crossed == 0) {
                    violations.add(h.key() + " scope " + scope.scope() + ": sent_verified without a delivery");
                }
                if (scope.state() != null && scope.state().consumed()) {
                    consumed = true;
                } else if (scope.state() == ScopeState.NOT_SENT) {
                    consumed = false;
                }
            }
            for (Integer s : scopes.keySet()) {
                if (s >= h.scopes().size()) {
                    violations.add(h.key() + " scope " + s + ": delivered in a scope ZooKeeper does not know");
                }
            }
            ScopeState latest = h.state();
            String state = latest == null ? "unreadable" : latest.wireName();
            outcomes.merge(state, 1, Integer::sum);
            boolean decided = latest != null && latest.consumed();
            if (!decided) {
                undecided++;
                if (requireDecided) {
                    violations.add(h.key() + ": undecided (latest scope " + state + ")");
                }
            }
        }
        return new Verdict(histories.size(), deliveries, duplicates, Map.copyOf(outcomes), undecided, List.copyOf(violations));
    }
}
