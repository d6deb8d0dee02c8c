package dev.oncegate.cli;

import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * {@code oncegate run} without picocli, for a plain command line: options of {@code run}'s own,
 * each at most once ({@link QuickCommands.Plain}), then {@code --} and COMMAND. They fill the same
 * {@link RunCommand} that picocli would fill, with the same defaults (the same constants, the same
 * environment variables) and the same conversions ({@link Durations}, {@link Integer#valueOf},
 * {@link Path#of}), and it runs as picocli would run it. picocli's model of {@code run} cost about
 * 60 ms of the 390 that {@code run -- true} took ({@code oncegate-bench --startup}).
 *
 * <p>Declined, with nothing done, so that picocli runs the command line and reports in its own
 * words (the {@code --help} hint, the bad-input result line): anything not plain (help, a
 * misspelt or repeated option, a value that starts with {@code -}, no {@code --} or no COMMAND
 * after it); a value picocli would not convert; an environment default with a {@code $} in it
 * (picocli would interpolate it further); and every input that {@link RunCommand#callIfValid}
 * finds bad before anything connects. Past that point the run is the same run: its failures
 * end where picocli's execution handler ends, in {@link Main#failed}.
 * {@code QuickRunTest} compares what both make of the same command lines, field by field.
 *
 * <p>Stateless; called on the main thread.
 */
final class QuickRun {

    /** {@code run}'s options that take a value, its mixins' included. */
    private static final Set<String> OPTIONS = Set.of(
            "--namespace", "--connect", "--connect-timeout", "--zk-client-config", "--auth", "--auth-file", "--host",
            "--state-dir", "--dest", "--dest-name", "--file", "--task-id", "--wait", "--not-sent-exit",
            "--shutdown-grace", "--timeout", "--result-fd", "--result-file", "--metrics-textfile");

    private QuickRun() {
    }

    /** Runs {@code args} ({@code run …}) and returns the exit code, or {@link QuickCommands#DECLINED} having done nothing. */
    static int run(String[] args) {
        RunCommand command = parse(args, System::getenv);
        if (command == null) {
            return QuickCommands.DECLINED;
        }
        Integer code;
        try {
            code = command.callIfValid();
        } catch (RuntimeException | InterruptedException e) {
            PrintWriter err = new PrintWriter(new OutputStreamWriter(System.err, StandardCharsets.UTF_8), true);
            return Main.failed(e, "oncegate run", err);
        }
        return code == null ? QuickCommands.DECLINED : code;
    }

    /**
     * The {@link RunCommand} picocli would make of {@code args} in an environment of {@code env},
     * or null when the command line is not plain or a value would not convert.
     */
    static RunCommand parse(String[] args, UnaryOperator<String> env) {
        QuickCommands.Plain plain = QuickCommands.Plain.of(args, OPTIONS, true);
        if (plain == null || plain.rest() == null || plain.rest().isEmpty()) {
            return null;
        }
        String connect = env.apply(ConnectOptions.CONNECT_ENV);
        String zkClientConfig = env.apply(ZkClientConfigFile.ENV);
        String host = env.apply(ConnectOptions.HOST_ENV);
        String textfile = env.apply(RunCommand.METRICS_TEXTFILE_ENV);
        for (String value : new String[] {connect, zkClientConfig, host, textfile}) {
            if (value != null && value.indexOf('$') >= 0) {
                return null;
            }
        }
        RunCommand run = new RunCommand();
        run.effect = new EffectKeyOptions();
        run.zookeeper = new ZooKeeperOptions();
        run.zookeeper.common = new CommonOptions();
        run.zookeeper.connection = new ConnectOptions();
        run.zookeeper.state = new StateOptions();
        ConnectOptions c = run.zookeeper.connection;
        try {
            c.connect = connect != null ? connect : ConnectOptions.DEFAULT_CONNECT;
            c.connectTimeout = Durations.parse(ConnectOptions.DEFAULT_CONNECT_TIMEOUT);
            c.zkClientConfig = zkClientConfig;
            c.host = host;
            run.wait = Durations.parse(RunCommand.DEFAULT_WAIT);
            run.shutdownGrace = Durations.parse(RunCommand.DEFAULT_SHUTDOWN_GRACE);
            run.metricsTextfile = textfile != null ? Path.of(textfile) : null;
            for (var option : plain.values().entrySet()) {
                String v = option.getValue();
                switch (option.getKey()) {
                    case "--namespace" -> run.zookeeper.common.namespace = v;
                    case "--connect" -> c.connect = v;
                    case "--connect-timeout" -> c.connectTimeout = Durations.parse(v);
                    case "--zk-client-config" -> c.zkClientConfig = v;
                    case "--auth" -> c.auth = v;
                    case "--auth-file" -> c.authFile = Path.of(v);
                    case "--host" -> c.host = v;
                    case "--state-dir" -> run.zookeeper.state.stateDir = Path.of(v);
                    case "--dest" -> run.effect.dest = v;
                    case "--dest-name" -> run.effect.destName = v;
                    case "--file" -> run.effect.file = Path.of(v);
                    case "--task-id" -> run.taskId = v;
                    case "--wait" -> run.wait = Durations.parse(v);
                    case "--not-sent-exit" -> run.notSentExit = Integer.valueOf(v);
                    case "--shutdown-grace" -> run.shutdownGrace = Durations.parse(v);
                    case "--timeout" -> run.timeout = Durations.parse(v);
                    case "--result-fd" -> run.resultFd = Integer.valueOf(v);
                    case "--result-file" -> run.resultFile = Path.of(v);
                    case "--metrics-textfile" -> run.metricsTextfile = Path.of(v);
                    default -> throw new AssertionError("an option of OPTIONS without a field: " + option.getKey());
                }
            }
        } catch (RuntimeException notConverted) {
            return null;
        }
        run.zookeeper.common.verbose = plain.verbose();
        run.command = new ArrayList<>(plain.rest());
        return run;
    }
}
