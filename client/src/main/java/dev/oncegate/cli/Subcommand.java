package dev.oncegate.cli;

import java.util.concurrent.Callable;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * A subcommand of {@code oncegate} that checks by hand what picocli cannot, and says so as a usage
 * error of its own (exit 2, with the hint to run {@code --help}).
 *
 * <p>Not thread-safe; filled in by picocli and run on the main thread.
 */
abstract class Subcommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    /**
     * A usage error of this subcommand naming what is wrong (exit 2), for the caller to throw: picocli's,
     * which adds the hint to run {@code --help}; an {@link IllegalArgumentException}, also exit 2, for a
     * command line that picocli did not parse ({@link QuickRun}).
     */
    final RuntimeException usage(String message) {
        return spec != null ? new ParameterException(spec.commandLine(), message) : new IllegalArgumentException(message);
    }
}
