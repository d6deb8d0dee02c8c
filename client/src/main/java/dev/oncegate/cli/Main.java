package dev.oncegate.cli;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

import dev.oncegate.OncegateException;
import picocli.AutoComplete;
import picocli.CommandLine;

/**
 * Entry point of {@code oncegate.jar}. Configures logging before any logger exists (slf4j-simple
 * reads its configuration once, when the first logger is created), then runs the command line
 * and exits with its code ({@link ExitCode}).
 */
public final class Main {

    static final String VERBOSE_ENV = "ONCEGATE_VERBOSE";

    private Main() {
    }

    public static void main(String[] args) {
        // JSON and messages are UTF-8 whatever the locale (an ASCII locale would print '?').
        System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8));
        ClassDataArchive.setAsideIfRejected();
        System.exit(run(args));
    }

    /**
     * Everything {@link #main} does but choosing the streams and exiting: configures logging,
     * recovers the arguments' UTF-8 text, runs the command line on {@code System.out} and
     * {@code System.err}, and returns the exit code ({@link ExitCode}). The tests run usage,
     * parsing and operator commands through this in their own JVM; {@code run}, {@code server},
     * {@code exporter} and {@code demo} install shutdown hooks and start processes, so they are
     * tested as {@code java -jar oncegate.jar}.
     */
    static int run(String... args) {
        configureLogging(args);
        String[] text;
        try {
            text = Arguments.utf8(args);
        } catch (IllegalArgumentException e) {
            System.err.println("oncegate: " + e.getMessage());
            return ExitCode.USAGE;
        }
        return execute(text);
    }

    /**
     * The subcommands, in the order the usage lists them, each made only when added: picocli
     * reads every added command's annotations, and reading all of them costs a short-lived
     * command (`key`, `--version`) a good part of its start. In a class of its own, so that a
     * command line answered without picocli ({@link QuickCommands}) loads none of them.
     */
    private static final class Subcommands {
        static final Map<String, Supplier<Object>> ALL = subcommands();
    }

    private static Map<String, Supplier<Object>> subcommands() {
        Map<String, Supplier<Object>> all = new LinkedHashMap<>();
        all.put("init", InitCommand::new);
        all.put("key", KeyCommand::new);
        all.put("run", RunCommand::new);
        all.put("inspect", InspectCommand::new);
        all.put("list", ListCommand::new);
        all.put("authorize", AuthorizeCommand::new);
        all.put("reconcile", ReconcileCommand::new);
        all.put("gc", GcCommand::new);
        all.put("acl", AclCommand::new);
        all.put("mcp", McpCommand::new);
        all.put("server", ServerCommand::new);
        all.put("exporter", ExporterCommand::new);
        all.put("sidecar", SidecarCommand::new);
        all.put("doctor", DoctorCommand::new);
        all.put("demo", DemoCommand::new);
        // Lambdas, not constructor references, for picocli's own classes, and nested classes, not method
        // references, for its handlers (below): a reference to a class of picocli's Java 5 class files
        // makes the JVM link it when it archives the lambda, and a linked class of a version before 50 is
        // left out of the class-data sharing archive, with every class that implements it; loading them
        // from the jar costs each command picocli runs the opening of the whole jar.
        all.put("help", () -> new CommandLine.HelpCommand());
        all.put("generate-completion", () -> new AutoComplete.GenerateCompletion());
        return Collections.unmodifiableMap(all);
    }

    /**
     * Runs the command line; returns the exit code instead of exiting. {@code --version} and a
     * plain {@code key} are answered without picocli ({@link QuickCommands}), the same way.
     */
    static int execute(String... args) {
        int quick = QuickCommands.run(args);
        if (quick != QuickCommands.DECLINED) {
            return quick;
        }
        return commandLine(args).execute(args);
    }

    /** Every subcommand: for the usage, the man pages and completion. */
    static CommandLine commandLine() {
        return commandLine(Subcommands.ALL.keySet());
    }

    /**
     * What {@code args} needs: only the subcommand it names (no other is parsed, so none other
     * needs its classes loaded), none for {@code --version}, else every one (the usage, picocli's
     * suggestions for a misspelt name, {@code help} and {@code generate-completion}, which
     * describe them all).
     */
    static CommandLine commandLine(String... args) {
        String first = args.length > 0 ? args[0] : "";
        if (first.equals("-V") || first.equals("--version")) {
            return commandLine(Set.of());
        }
        boolean named = Subcommands.ALL.containsKey(first) && !first.equals("help") && !first.equals("generate-completion");
        return commandLine(named ? Set.of(first) : Subcommands.ALL.keySet());
    }

    private static CommandLine commandLine(Set<String> names) {
        CommandLine cli = new CommandLine(new OncegateCommand());
        Subcommands.ALL.forEach((name, factory) -> {
            if (names.contains(name)) {
                cli.addSubcommand(name, factory.get());
            }
        });
        // picocli's own subcommands get their exit codes in their help too.
        if (names.contains("help")) {
            cli.getSubcommands().get("help").getCommandSpec().usageMessage()
                    .footer("", "Exit codes: 0 help printed; 2 no such subcommand.");
        }
        if (names.contains("generate-completion")) {
            cli.getSubcommands().get("generate-completion").getCommandSpec().usageMessage()
                    .footer("", "Exit codes: 0 the script printed.");
        }
        cli.setStopAtPositional(true); // `run … -- COMMAND ARG…`: the command's own flags stay its own
        // Every word is a value as typed: picocli would take a word starting with @ for an argument file
        // and put the file's lines in its place, in an option's value and in run's COMMAND alike
        // (`curl -d @body.json` would have run with the body's words as its arguments).
        cli.setExpandAtFiles(false);
        cli.setParameterExceptionHandler(new OnBadUsage());
        cli.setExecutionExceptionHandler(new OnFailure());
        return cli;
    }

    /** {@code -v}/{@code --verbose} before {@code --}, or {@code ONCEGATE_VERBOSE} set: dev.oncegate at INFO. */
    static void configureLogging(String[] args) {
        boolean verbose = isTruthy(System.getenv(VERBOSE_ENV));
        for (String arg : args) {
            if (arg.equals("--")) {
                break;
            }
            if (arg.equals("-v") || arg.equals("--verbose")) {
                verbose = true;
            }
        }
        String command = args.length > 0 ? args[0] : "";
        boolean serves = command.equals("server") || command.equals("exporter") || command.equals("demo");
        CliLogging.verbose(verbose || serves);
        if (verbose) {
            System.setProperty("org.slf4j.simpleLogger.log.dev.oncegate", "info");
        } else if (!serves) {
            // A short-lived command says itself what failed and what to check; the libraries' own
            // lines (a stack trace per retry that gave up) are for -v.
            System.setProperty("org.slf4j.simpleLogger.log.org.apache.curator", "off");
            System.setProperty("org.slf4j.simpleLogger.log.org.apache.zookeeper", "off");
            // The gate's own warnings are about the connection's state, which the command's result reports.
            System.setProperty("org.slf4j.simpleLogger.log.dev.oncegate.DefaultGate", "error");
        }
        if (!verbose && args.length > 0 && args[0].equals("demo")) {
            // The demo injects faults on purpose: its workers' connection warnings are the show, not news.
            System.setProperty("org.slf4j.simpleLogger.log.dev.oncegate", "error");
            System.setProperty("org.slf4j.simpleLogger.log.org.apache.zookeeper", "off");
        }
    }

    private static boolean isTruthy(String value) {
        return value != null && !value.isEmpty() && !value.equals("0") && !value.equalsIgnoreCase("false");
    }

    /** {@link #onBadUsage}, as a class of its own (see {@link #subcommands} for why not a method reference). */
    private static final class OnBadUsage implements CommandLine.IParameterExceptionHandler {
        @Override
        public int handleParseException(CommandLine.ParameterException e, String[] args) {
            return onBadUsage(e, args);
        }
    }

    /** {@link #failed}, as a class of its own (see {@link #subcommands} for why not a method reference). */
    private static final class OnFailure implements CommandLine.IExecutionExceptionHandler {
        @Override
        public int handleExecutionException(Exception e, CommandLine cli, CommandLine.ParseResult parsed) {
            return failed(e, cli.getCommandSpec().qualifiedName(), cli.getErr());
        }
    }

    private static int onBadUsage(CommandLine.ParameterException e, String[] args) {
        CommandLine cli = e.getCommandLine();
        PrintWriter err = cli.getErr();
        err.println(cli.getCommandSpec().qualifiedName() + ": " + e.getMessage());
        if (e instanceof CommandLine.MissingParameterException missing) {
            // What each missing option is and where its value comes from (authorize's --after: `oncegate inspect`).
            for (CommandLine.Model.ArgSpec arg : missing.getMissing()) {
                if (arg instanceof CommandLine.Model.OptionSpec option) {
                    err.println("  " + option.longestName() + "=" + option.paramLabel() + ": " + String.join(" ", option.description()));
                }
            }
        }
        CommandLine.UnmatchedArgumentException.printSuggestions(e, err);
        err.println("Try '" + cli.getCommandSpec().qualifiedName() + " --help' for more information.");
        err.flush();
        return ExitCode.USAGE;
    }

    /**
     * What a command that failed prints on {@code err} and exits with, as {@code name}
     * ({@code oncegate run}): bad input, exit 2; ZooKeeper or the records unavailable, or an
     * interruption before a decision, exit 13; anything else, with its stack trace, exit 13
     * (failing closed). picocli's execution handler and {@link QuickRun} both end here.
     */
    static int failed(Exception e, String name, PrintWriter err) {
        int code;
        if (e instanceof RunCommand.ReportedFailure) {
            return ExitCode.STOP_UNAVAILABLE; // said on stderr already, before the shutdown hook could halt the JVM
        } else if (e instanceof IllegalArgumentException) {
            err.println(name + ": " + e.getMessage());
            code = ExitCode.USAGE;
        } else if (e instanceof UnavailableException || e instanceof OncegateException) {
            err.println(name + ": unavailable: " + e.getMessage());
            code = ExitCode.STOP_UNAVAILABLE;
        } else if (e instanceof InterruptedException) {
            err.println(name + ": interrupted (SIGTERM/SIGINT?) before a decision was reached; nothing was run");
            code = ExitCode.STOP_UNAVAILABLE;
        } else {
            err.println(name + ": unexpected failure, failing closed: " + e);
            e.printStackTrace(err);
            code = ExitCode.STOP_UNAVAILABLE;
        }
        err.flush();
        return code;
    }
}
