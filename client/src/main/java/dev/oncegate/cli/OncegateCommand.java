package dev.oncegate.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code oncegate}: the root command; does nothing itself but list its subcommands, which
 * {@link Main#commandLine} adds (all of them, or only the one a command line names).
 */
@Command(name = "oncegate", mixinStandardHelpOptions = true, versionProvider = OncegateCommand.Version.class,
        description = "Make an external side effect happen at most once across a fleet, coordinated through ZooKeeper.",
        footer = {"", "Exit codes: 0 delivered (sent_verified) or success, 1 crossed with unknown outcome,"
                + " 2 usage error or bad input, 3 proven not_sent, 10 stop_sent, 11 stop_unknown,"
                + " 12 stop_busy, 13 stop_unavailable (fail closed)."})
final class OncegateCommand implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(),
                "missing a subcommand: init, key, run, inspect, list, authorize, reconcile, gc, acl, server, exporter,"
                        + " doctor or demo");
    }

    /** The version from the jar's manifest ({@code dev} when run from classes). */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {QuickCommands.version()};
        }
    }
}
