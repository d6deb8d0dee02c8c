package dev.oncegate.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;

/**
 * The benchmark of issue 9: {@code java -jar testing/target/oncegate-bench.jar [--quick]
 * [--out FILE] [--seed N]}. Measures raw ZooKeeper, the two-write floor, the naive Curator gate
 * and oncegate against one real ZooKeeper server (fsync on) in this process, writes the JSON
 * report, prints a Markdown table on stdout and a progress line per step on stderr. The
 * libraries' log goes to a file beside the report (WARN and up), where the run counts the
 * WARN and ERROR lines of each trial.
 *
 * <p>Exit status: 0 when no arm executed any effect twice; 1 when one did, or the run failed;
 * 2 for bad options. Figures are reported, never judged: no exit status depends on speed.
 *
 * <p>Thread-safe as far as a benchmark can be: {@link #run} may be called again after it
 * returned, never twice at once (it sets the JVM's slf4j-simple properties if they are unset).
 */
public final class BenchMain {

    private static final String SIMPLE_LOGGER = "org.slf4j.simpleLogger.";

    private BenchMain() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Runs the benchmark in this JVM.
     *
     * @return the exit status (see the class comment)
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("oncegate-bench: " + e.getMessage());
            err.println(Options.USAGE);
            return 2;
        }
        if (options.help()) {
            out.println(Options.USAGE);
            return 0;
        }
        try {
            Files.createDirectories(options.out().toAbsolutePath().getParent());
            LogTally logs = new LogTally(routeLogs(options.logFile()));
            Report report = new Bench(options, logs, err).run();
            new ObjectMapper().setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
                    .enable(SerializationFeature.INDENT_OUTPUT)
                    .writeValue(options.out().toFile(), report);
            out.print(MarkdownTable.render(report));
            out.flush();
            err.println("oncegate-bench: report " + options.out() + ", log " + options.logFile());
            if (!report.passed()) {
                err.println("oncegate-bench: FAILED: " + report.duplicates() + " effects executed twice");
                return 1;
            }
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("oncegate-bench: interrupted");
            return 1;
        } catch (Exception e) {
            err.println("oncegate-bench: failed: " + e);
            e.printStackTrace(err);
            return 1;
        }
    }

    /**
     * Sends slf4j-simple's output to {@code logFile} at WARN and up, in the format
     * {@link LogTally} reads, unless the JVM already says otherwise.
     *
     * @return the file the log goes to, or null when it does not go to a file
     */
    private static Path routeLogs(Path logFile) throws IOException {
        setIfAbsent("logFile", logFile.toString());
        setIfAbsent("defaultLogLevel", "warn");
        setIfAbsent("showDateTime", "true");
        setIfAbsent("dateTimeFormat", "HH:mm:ss.SSS");
        setIfAbsent("showThreadName", "true");
        String target = System.getProperty(SIMPLE_LOGGER + "logFile");
        return target.equals("System.err") || target.equals("System.out") ? null : Path.of(target);
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(SIMPLE_LOGGER + key) == null) {
            System.setProperty(SIMPLE_LOGGER + key, value);
        }
    }
}
