package dev.oncegate.cli;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import dev.oncegate.EffectKey;

/**
 * The command lines answered without picocli: {@code --version} alone, and {@code key} whose
 * options are all plain ({@code --dest}, {@code --dest-name}, {@code --file}, {@code --namespace},
 * each at most once, as {@code --option VALUE} or {@code --option=VALUE}, and {@code -v}). Building
 * picocli's model of even one command (reflection over its annotations, a proxy class per
 * annotation type) costs more than everything else {@code key} does, in a command that lives a
 * fraction of a second.
 *
 * <p>Anything else is declined, and picocli runs the command line as always: help, a misspelt or
 * repeated option, an {@code @file} argument, a value that looks like an option, and every
 * failure (a bad destination, an unreadable file), which picocli then reports in its words. So a
 * quick answer is only ever a success, with exactly the output the full path prints
 * ({@code QuickCommandsTest} runs both on the same command lines). {@code key} reads only its
 * file and writes nothing but stdout, so a declined attempt leaves nothing behind.
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
        return DECLINED;
    }

    /** {@code oncegate VERSION}, from the jar's manifest ({@code dev} when run from classes). */
    static String version() {
        String v = QuickCommands.class.getPackage().getImplementationVersion();
        return "oncegate " + (v != null ? v : "dev");
    }

    /** The options a quick {@code key} takes, each with a value, each at most once. */
    private static final Set<String> KEY_OPTIONS = Set.of("--dest", "--dest-name", "--file", "--namespace");

    private static int key(String[] args) {
        Map<String, String> given = new HashMap<>();
        boolean verbose = false;
        for (int i = 1; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("-v") || arg.equals("--verbose")) {
                if (verbose) {
                    return DECLINED;
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
                if (value.startsWith("-") || value.startsWith("@")) {
                    return DECLINED;
                }
            } else {
                return DECLINED;
            }
            if (!KEY_OPTIONS.contains(name) || given.putIfAbsent(name, value) != null) {
                return DECLINED;
            }
        }
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
