package dev.oncegate.cli;


import dev.oncegate.KeyHistory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code oncegate inspect}: the whole story of one key, read without a lock, with what a new attempt would do now. */
@Command(name = "inspect", mixinStandardHelpOptions = true,
        customSynopsis = {"oncegate inspect [OPTIONS] (--key=KEY | (--dest=PROVIDER:ID |",
                "                        --dest-name=PROVIDER:TITLE) --file=PATH)"},
        description = "Print the whole story of a key, in order: every scope (state, lease and its last takeover, armed,"
                + " outcome, reconciliation), every authorization (used, unused, stale, premature, unreadable, ignored),"
                + " every record that cannot be read (path, raw bytes, the problem, how to repair it), what a new attempt"
                + " would do now and why, and for a consumed key the zkCli line that authorizes one redelivery.",
        footer = {"", "Exit codes: 0 every record read (also for a key nobody entered: \"exists\":false); 2 bad input;"
                + " 13 ZooKeeper unavailable, no permission, the namespace has no genesis, or a record of the key is"
                + " unreadable (the JSON is printed all the same)."})
final class InspectCommand extends NamespaceCommand {

    @Option(names = "--key", paramLabel = "KEY", description = EffectKeyOptions.KEY_DESCRIPTION)
    String key;

    @Mixin
    EffectKeyOptions effect;

    @Override
    public Integer call() throws InterruptedException {
        String keyText = resolveKey();
        KeyHistory history = zookeeper.withOperator(operator -> operator.inspect(keyText));
        System.out.println(Json.line(Render.history(history)));
        return history.readable() ? ExitCode.OK : ExitCode.STOP_UNAVAILABLE;
    }

    private String resolveKey() {
        if (key != null && effect.anyGiven()) {
            throw usage("--key and --dest/--dest-name/--file are mutually exclusive: name the key one way");
        }
        if (key != null) {
            return EffectKeyOptions.keyOption(key, zookeeper.namespace());
        }
        if (!effect.anyGiven()) {
            throw usage("missing the key: give --key KEY, or --dest/--dest-name with --file");
        }
        return effect.resolve(this).key();
    }
}
