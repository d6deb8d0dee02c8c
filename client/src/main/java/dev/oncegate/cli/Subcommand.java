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

    /** A usage error of this subcommand naming what is wrong (exit 2), for the caller to throw. */
    final ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
