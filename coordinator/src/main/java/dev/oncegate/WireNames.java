package dev.oncegate;

import java.util.function.Function;

/**
 * The one lookup behind every enum's {@code fromWireName}: {@link Outcome}, {@link ScopeState},
 * {@link IdentityKind}. Stateless and thread-safe.
 */
final class WireNames {

    private WireNames() {
    }

    /**
     * The constant among {@code values} whose wire name is {@code text}.
     *
     * @throws IllegalArgumentException with {@code problem}'s message when there is none
     */
    static <E extends Enum<E>> E parse(E[] values, Function<E, String> wireName, String text, String problem) {
        for (E e : values) {
            if (wireName.apply(e).equals(text)) {
                return e;
            }
        }
        throw new IllegalArgumentException(problem);
    }
}
