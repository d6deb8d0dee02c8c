package dev.oncegate.cli;

import java.util.Map;

import dev.oncegate.EffectKey;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code oncegate key}: computes an effect key and its znode path; needs no ZooKeeper. */
@Command(name = "key", mixinStandardHelpOptions = true,
        customSynopsis = {"oncegate key [OPTIONS] (--dest=PROVIDER:ID | --dest-name=PROVIDER:TITLE)",
                "                    --file=PATH"},
        description = "Print the effect key of a destination and a file, and its znode path (no ZooKeeper needed).",
        footer = {"", "Exit codes: 0 printed; 2 bad input (a malformed destination, an unreadable file)."})
final class KeyCommand extends Subcommand {

    @Mixin
    CommonOptions common;

    @Mixin
    EffectKeyOptions effect;

    @Override
    public Integer call() {
        String namespace = common.namespace();
        EffectKey key = effect.resolve(this);
        System.out.println(Json.line(describe(key, namespace)));
        return ExitCode.OK;
    }

    /** {@code {key, path, provider, identity, destination, sha256}}. */
    static Map<String, Object> describe(EffectKey key, String namespace) {
        Map<String, Object> out = Json.object();
        out.put("key", key.key());
        out.put("path", key.path(namespace));
        out.put("provider", key.destination().provider());
        out.put("identity", key.destination().identity().wireName());
        out.put("destination", key.destination().id());
        out.put("sha256", key.sha256());
        return out;
    }
}
