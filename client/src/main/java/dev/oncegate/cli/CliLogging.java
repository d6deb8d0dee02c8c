package dev.oncegate.cli;

import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TimeZone;
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

    private static final String SHOW_DATE_TIME = "org.slf4j.simpleLogger.showDateTime";
    private static final String DATE_TIME_FORMAT = "org.slf4j.simpleLogger.dateTimeFormat";

    /** The log lines' date and time, as a {@link java.text.SimpleDateFormat} pattern (see {@link #timestamp}). */
    static final String DATE_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSZ";

    /**
     * Whether {@link MdcLogger} writes each line's {@link #DATE_FORMAT} date and time itself: unless
     * the system properties ask slf4j-simple for a format of their own, or for no date. slf4j-simple
     * would make a {@link java.text.SimpleDateFormat} when its first logger is made, whose locale
     * data cost a command some 30 ms before it has logged anything (and most never do).
     */
    private static volatile boolean ownsTimestamps;

    private static Map<String, String> defaults() {
        Map<String, String> all = new LinkedHashMap<>();
        all.put("org.slf4j.simpleLogger.logFile", "System.err");
        all.put("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        // The date and time of DATE_FORMAT are written by MdcLogger (see ownsTimestamps); a format of
        // one's own (-Dorg.slf4j.simpleLogger.dateTimeFormat=…) is slf4j-simple's to write.
        all.put(SHOW_DATE_TIME, "true");
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
        String show = System.getProperty(SHOW_DATE_TIME);
        ownsTimestamps = System.getProperty(DATE_TIME_FORMAT) == null && (show == null || show.equalsIgnoreCase("true"));
        if (ownsTimestamps) {
            System.setProperty(SHOW_DATE_TIME, "false");
        }
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

    /**
     * {@code millis} in {@code zone} as {@link #DATE_FORMAT} renders it ({@code 2026-12-01T14:03:07.250+0100}),
     * for instants after the Gregorian calendar's start in 1582 ({@code LogTimestampTest} compares the two).
     */
    static String timestamp(long millis, TimeZone zone) {
        int offsetMillis = zone.getOffset(millis);
        LocalDateTime t = LocalDateTime.ofEpochSecond(Math.floorDiv(millis, 1000L),
                (int) Math.floorMod(millis, 1000L) * 1_000_000, ZoneOffset.ofTotalSeconds(offsetMillis / 1000));
        int minutes = offsetMillis / 60_000; // SimpleDateFormat's Z: whole minutes, toward zero
        StringBuilder b = new StringBuilder(28);
        pad(b, t.getYear(), 4).append('-');
        pad(b, t.getMonthValue(), 2).append('-');
        pad(b, t.getDayOfMonth(), 2).append('T');
        pad(b, t.getHour(), 2).append(':');
        pad(b, t.getMinute(), 2).append(':');
        pad(b, t.getSecond(), 2).append('.');
        pad(b, t.getNano() / 1_000_000, 3).append(minutes < 0 ? '-' : '+');
        return pad(b, Math.abs(minutes / 60) * 100 + Math.abs(minutes % 60), 4).toString();
    }

    private static StringBuilder pad(StringBuilder b, int value, int width) {
        String digits = Integer.toString(value);
        for (int i = digits.length(); i < width; i++) {
            b.append('0');
        }
        return b.append(digits);
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

        /** The level as slf4j-simple renders it, after the date and time when {@link #ownsTimestamps}: a line's start. */
        @Override
        protected String renderLevel(int level) {
            String rendered = super.renderLevel(level);
            return ownsTimestamps ? timestamp(System.currentTimeMillis(), TimeZone.getDefault()) + " " + rendered : rendered;
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
