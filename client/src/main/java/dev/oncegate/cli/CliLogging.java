package dev.oncegate.cli;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

import org.apache.curator.CuratorConnectionLossException;
import org.apache.zookeeper.KeeperException;
import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.Logger;
import org.slf4j.MDC;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.BasicMDCAdapter;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.simple.SimpleLogger;
import org.slf4j.simple.SimpleLoggerFactory;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * The CLI's logging backend: slf4j-simple (configured by {@link #DEFAULTS} and the system
 * properties {@link Main} sets), with an MDC that works and is shown. slf4j-simple alone
 * has a no-op MDC, which would drop the {@code oncegate.key}, {@code oncegate.scope} and
 * {@code oncegate.task} entries the library sets around its work; here every line that has MDC
 * entries ends with them, sorted, as {@code {oncegate.key=…, oncegate.scope=0, oncegate.task=…}}.
 *
 * <p>Quiet unless {@code -v} ({@link #verbose}): a line's exception is one line, not its stack
 * trace, and a line about a lost or missing ZooKeeper connection is not printed at all, since
 * the command says itself, once, what failed and what to check (Curator's and ZooKeeper's own
 * loggers are off then, see {@link Main#configureLogging}).
 *
 * <p>Registered as the jar's only {@link SLF4JServiceProvider} (the shaded jar leaves
 * slf4j-simple's own registration out). Thread-safe: the MDC is per thread, the loggers are
 * slf4j-simple's.
 */
public final class CliLogging implements SLF4JServiceProvider {

    private static final String REQUESTED_API_VERSION = "2.0.99";

    private static volatile boolean verbose;

    /** {@code -v}: stack traces and connection trouble as logged; else the quiet rules of the class comment. */
    static void verbose(boolean on) {
        verbose = on;
    }

    private ILoggerFactory loggerFactory;
    private IMarkerFactory markerFactory;
    private MDCAdapter mdcAdapter;

    /** Called by slf4j's service loader. */
    public CliLogging() {
    }

    /**
     * slf4j-simple's configuration, each setting applied unless a system property already gives
     * it (as {@code -Dorg.slf4j.simpleLogger…} or set by {@link Main#configureLogging}), which is
     * how slf4j-simple weighs its system properties over its {@code simplelogger.properties}.
     * Not that file: slf4j-simple reads it through a {@code jar:} URL, which opens the whole jar
     * a second time (some 15,000 entries), a tenth of what {@code oncegate run -- true} spends.
     * stdout belongs to JSON output and to {@code run}'s command, so everything goes to stderr.
     */
    static final Map<String, String> DEFAULTS = defaults();

    private static Map<String, String> defaults() {
        Map<String, String> all = new LinkedHashMap<>();
        all.put("org.slf4j.simpleLogger.logFile", "System.err");
        all.put("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        all.put("org.slf4j.simpleLogger.showDateTime", "true");
        all.put("org.slf4j.simpleLogger.dateTimeFormat", "yyyy-MM-dd'T'HH:mm:ss.SSSZ");
        all.put("org.slf4j.simpleLogger.showThreadName", "false");
        all.put("org.slf4j.simpleLogger.showShortLogName", "true");
        // --verbose / ONCEGATE_VERBOSE=1 raise this to info (Main sets the system property first).
        all.put("org.slf4j.simpleLogger.log.dev.oncegate", "warn");
        all.put("org.slf4j.simpleLogger.log.org.apache.zookeeper", "error");
        all.put("org.slf4j.simpleLogger.log.org.apache.curator", "error");
        // Logs a harmless ERROR when a latch is closed while its node is being created.
        all.put("org.slf4j.simpleLogger.log.org.apache.curator.framework.recipes.leader.LeaderLatch", "off");
        // An unresolvable host is reported once by oncegate (exit 13); ZooKeeper would add a stack trace per retry.
        all.put("org.slf4j.simpleLogger.log.org.apache.zookeeper.client.StaticHostProvider", "off");
        // oncegate server --metrics-port: Jetty (ZooKeeper's metrics provider) warns that its /metrics
        // servlet leaves HTTP methods unconstrained, on every start; it serves GET only.
        all.put("org.slf4j.simpleLogger.log.org.eclipse.jetty", "error");
        return Collections.unmodifiableMap(all);
    }

    @Override
    public void initialize() {
        DEFAULTS.forEach((name, value) -> {
            if (System.getProperty(name) == null) {
                System.setProperty(name, value);
            }
        });
        markerFactory = new BasicMarkerFactory();
        mdcAdapter = new BasicMDCAdapter();
        loggerFactory = new SimpleLoggerFactory() {
            @Override
            protected Logger createLogger(String name) {
                return new MdcLogger(name);
            }
        };
    }

    @Override
    public ILoggerFactory getLoggerFactory() {
        return loggerFactory;
    }

    @Override
    public IMarkerFactory getMarkerFactory() {
        return markerFactory;
    }

    @Override
    public MDCAdapter getMDCAdapter() {
        return mdcAdapter;
    }

    @Override
    public String getRequestedApiVersion() {
        return REQUESTED_API_VERSION;
    }

    /** slf4j-simple's logger, with the calling thread's MDC appended to the message. */
    private static final class MdcLogger extends SimpleLogger {

        private static final long serialVersionUID = 1L;

        MdcLogger(String name) {
            super(name);
        }

        @Override
        protected void handleNormalizedLoggingCall(Level level, Marker marker, String pattern, Object[] arguments,
                                                   Throwable throwable) {
            Map<String, String> mdc = MDC.getCopyOfContextMap();
            boolean quiet = !verbose && throwable != null;
            if (quiet && connectionLoss(throwable)) {
                return;
            }
            if ((mdc == null || mdc.isEmpty()) && !quiet) {
                super.handleNormalizedLoggingCall(level, marker, pattern, arguments, throwable);
                return;
            }
            // Formatted here, so that braces in the MDC values are never taken for placeholders.
            String message = MessageFormatter.basicArrayFormat(pattern, arguments)
                    + (quiet ? ": " + throwable + " (-v for the stack trace)" : "")
                    + (mdc == null || mdc.isEmpty() ? "" : " " + new TreeMap<>(mdc));
            super.handleNormalizedLoggingCall(level, marker, message, null, quiet ? null : throwable);
        }

        /** A lost or missing ZooKeeper connection, which the command itself reports. */
        private static boolean connectionLoss(Throwable throwable) {
            for (Throwable t = throwable; t != null; t = t.getCause()) {
                if (t instanceof KeeperException.ConnectionLossException || t instanceof CuratorConnectionLossException
                        || t instanceof KeeperException.SessionExpiredException) {
                    return true;
                }
            }
            return false;
        }
    }
}
