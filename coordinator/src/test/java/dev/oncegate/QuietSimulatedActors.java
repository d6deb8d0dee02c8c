package dev.oncegate;

import org.slf4j.ILoggerFactory;
import org.slf4j.Logger;
import org.slf4j.simple.SimpleLogger;
import org.slf4j.simple.SimpleLoggerFactory;
import org.slf4j.simple.SimpleServiceProvider;

/**
 * The coordinator tests' logging (surefire names it in {@code slf4j.provider}): slf4j-simple as
 * configured by {@code simplelogger.properties}, except that nothing is logged on the simulator's
 * threads (named {@code sim-…}). The real protocol code that the simulator runs logs every decision
 * it makes, thousands a second; the simulator reports what it found itself, and its histories
 * replay (SimulationTest). So SimulationTest can run in the same JVMs as the other tests, beside
 * them, instead of a minute after them.
 *
 * <p>Thread-safe as slf4j-simple is.
 */
public final class QuietSimulatedActors extends SimpleServiceProvider {

    private volatile ILoggerFactory factory;

    @Override
    public void initialize() {
        super.initialize();
        factory = new SimpleLoggerFactory() {
            @Override
            protected Logger createLogger(String name) {
                return new QuietOnSimulatorThreads(name);
            }
        };
    }

    @Override
    public ILoggerFactory getLoggerFactory() {
        return factory;
    }

    private static final class QuietOnSimulatorThreads extends SimpleLogger {

        private static final long serialVersionUID = 1L;

        QuietOnSimulatorThreads(String name) {
            super(name);
        }

        @Override
        protected boolean isLevelEnabled(int level) {
            return !Thread.currentThread().getName().startsWith("sim-") && super.isLevelEnabled(level);
        }
    }
}
