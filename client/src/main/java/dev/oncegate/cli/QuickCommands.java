package dev.oncegate.cli;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.oncegate.EffectKey;

/**
 * The command lines answered without picocli: {@code --version} alone, {@code key} whose options
 * are all plain ({@code --dest}, {@code --dest-name}, {@code --file}, {@code --namespace}, each at
 * most once, as {@code --option VALUE} or {@code --option=VALUE}, and {@code -v}), and a plain
 * {@code run} ({@link QuickRun}). Building picocli's model of even one command (reflection over
 * its annotations, a proxy class per annotation type, its converters) costs more than everything
 * else {@code key} does, and a sixth of what {@code run -- true} did, in commands that live a
 * fraction of a second.
 *
 * <p>Anything else is declined, and picocli runs the command line as always: help, a misspelt or
 * repeated option, a value that looks like an option, and every failure (a bad destination, an
 * unreadable file), which picocli then reports in its words. So a quick {@code key} is only ever a
 * success, with exactly the output the full path prints ({@code QuickCommandsTest} runs both on
 * the same command lines). {@code key} reads only its file and writes nothing but stdout, so a
 * declined attempt leaves nothing behind.
 *
 * <p>Stateless; called on the main thread.
 */
final class QuickCommands {

    /** What {@link #run} returns when it leaves the command line to picocli. */
    static final int DECLINED = -1;

    private QuickCommands() {
    }

    /** Runs {@code args} and returns the exit code, or {@link #DECLINED} having printed nothing. */
    static int run(String[] args) {
        if (args.length == 1 && (args[0].equals("--version") || args[0].equals("-V"))) {
            System.out.println(version());
            return ExitCode.OK;
        }
        if (args.length > 0 && args[0].equals("key")) {
            return key(args);
        }
        if (args.length > 0 && args[0].equals("run")) {
            return QuickRun.run(args);
        }
        return DECLINED;
    }

    /** {@code oncegate VERSION}, from the jar's manifest ({@code dev} when run from classes). */
    static String version() {
        String v = QuickCommands.class.getPackage().getImplementationVersion();
        return "oncegate " + (v != null ? v : "dev");
    }

    /**
     * The options of a plain command line, after its subcommand: each of a known set at most
     * once, with a value ({@code --option VALUE} or {@code --option=VALUE}, where VALUE does not start
     * with {@code -}); {@code -v} or {@code --verbose} at most once; and, for a command
     * that takes them, {@code --} and the words after it, as they are.
     *
     * @param values  each option given, with its value as typed
     * @param verbose whether {@code -v}/{@code --verbose} was given
     * @param rest    the words after {@code --}; null when there is no {@code --}
     */
    record Plain(Map<String, String> values, boolean verbose, List<String> rest) {

        /** The options of {@code args} (the subcommand first), or null for anything not plain. */
        static Plain of(String[] args, Set<String> options, boolean takesRest) {
            Map<String, String> given = new HashMap<>();
            boolean verbose = false;
            for (int i = 1; i < args.length; i++) {
                String arg = args[i];
                if (arg.equals("--")) {
                    return takesRest ? new Plain(given, verbose, List.of(args).subList(i + 1, args.length)) : null;
                }
                if (arg.equals("-v") || arg.equals("--verbose")) {
                    if (verbose) {
                        return null;
                    }
                    verbose = true;
                    continue;
                }
                String name = arg;
                String value;
                int eq = arg.indexOf('=');
                if (arg.startsWith("--") && eq > 0) {
                    name = arg.substring(0, eq);
                    value = arg.substring(eq + 1);
                } else if (i + 1 < args.length) {
                    value = args[++i];
                } else {
                    return null;
                }
                // picocli weighs whether such a value is an option instead (`--file=--` is refused).
                if (value.startsWith("-") || !options.contains(name) || given.putIfAbsent(name, value) != null) {
                    return null;
                }
            }
            return new Plain(given, verbose, null);
        }
    }

    /** The options a quick {@code key} takes, each with a value, each at most once. */
    private static final Set<String> KEY_OPTIONS = Set.of("--dest", "--dest-name", "--file", "--namespace");

    private static int key(String[] args) {
        Plain plain = Plain.of(args, KEY_OPTIONS, false);
        if (plain == null) {
            return DECLINED;
        }
        Map<String, String> given = plain.values();
        String dest = given.get("--dest");
        String destName = given.get("--dest-name");
        String file = given.get("--file");
        if ((dest == null) == (destName == null) || file == null) {
            return DECLINED;
        }
        String line;
        try {
            String checked = CommonOptions.namespace(given.get("--namespace"));
            EffectKey key = EffectKeyOptions.key(dest, destName, Path.of(file));
            line = Json.line(KeyCommand.describe(key, checked));
        } catch (RuntimeException e) {
            return DECLINED;
        }
        System.out.println(line);
        return ExitCode.OK;
    }
}
