package dev.oncegate;

import org.slf4j.MDC;

/**
 * The slf4j MDC entries that say which effect a log line is about: {@value #KEY} (the effect
 * key), {@value #SCOPE} (the scope, once known) and {@value #TASK} (the gate's task id). A gate
 * sets them around its entry points ({@code enter}, {@code checkpoint}, {@code cross} — the
 * user's action included, so the user's own lines inside it carry them too — and {@code close})
 * and around its own lines on Curator's threads, instead of writing them into message text; a
 * logging backend shows them with its MDC pattern ({@code %X} in Logback and Log4j 2).
 *
 * <p>A context remembers the values it replaced and puts them back on {@link #close}, so an
 * attempt entered inside another attempt's action leaves the outer context as it found it.
 *
 * <p>Not thread-safe, like the MDC it writes: open and close it on one thread.
 */
final class LogContext implements AutoCloseable {

    /** The effect key, 64 hex characters. */
    static final String KEY = "oncegate.key";
    /** The scope, in decimal; absent until the attempt knows it. */
    static final String SCOPE = "oncegate.scope";
    /** The task id of the gate. */
    static final String TASK = "oncegate.task";

    private static final String[] NAMES = {KEY, SCOPE, TASK};

    private final String[] previous = new String[NAMES.length];

    private LogContext(String key, String scope, String task) {
        for (int i = 0; i < NAMES.length; i++) {
            previous[i] = MDC.get(NAMES[i]);
        }
        put(KEY, key);
        put(SCOPE, scope);
        put(TASK, task);
    }

    /** The context of an attempt on {@code key}; {@code scope} -1 while it is not known yet. */
    static LogContext of(EffectKey key, int scope, String task) {
        return new LogContext(key.key(), scope < 0 ? null : Integer.toString(scope), task);
    }

    /** The context of a gate's own line that concerns no key (a connection change, say). */
    static LogContext ofTask(String task) {
        return new LogContext(null, null, task);
    }

    /** Records the scope once an attempt inside an open context learns it; -1 leaves it as it is. */
    static void scope(int scope) {
        if (scope >= 0) {
            MDC.put(SCOPE, Integer.toString(scope));
        }
    }

    /** Puts back what this context replaced. */
    @Override
    public void close() {
        for (int i = 0; i < NAMES.length; i++) {
            put(NAMES[i], previous[i]);
        }
    }

    private static void put(String name, String value) {
        if (value == null) {
            MDC.remove(name);
        } else {
            MDC.put(name, value);
        }
    }
}
