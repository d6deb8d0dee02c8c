package dev.oncegate.cli;

import java.nio.file.Path;
import java.util.Locale;

import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.IdentityKind;
import picocli.CommandLine.Option;

/**
 * {@code (--dest PROVIDER:ID | --dest-name PROVIDER:TITLE) --file PATH}: the options that name
 * an effect. Checked by hand rather than with picocli groups, so every message names the
 * option at fault; nothing here touches ZooKeeper.
 *
 * <p>Not thread-safe; filled in by picocli on the main thread.
 */
final class EffectKeyOptions {

    @Option(names = "--dest", paramLabel = "PROVIDER:ID",
            description = "Destination by a provider-assigned id (preferred), e.g. slack:C024BE91L.")
    String dest;

    @Option(names = "--dest-name", paramLabel = "PROVIDER:TITLE",
            description = "Destination by its exact visible title (a weaker identity), e.g. slack:#general.")
    String destName;

    @Option(names = "--file", paramLabel = "PATH",
            description = "The exact bytes to deliver; their SHA-256 is part of the key.")
    Path file;

    /** What {@code --key} takes, for its description. */
    static final String KEY_DESCRIPTION = "The key: 64 hex characters (either case), or its znode path as `oncegate key`"
            + " and `inspect` print it (in this --namespace).";

    /**
     * A key given as text, {@code --key KEY}: 64 hex characters, upper-case accepted (the key is
     * lower-case), or the key's znode path in {@code namespace}, as {@code key} and {@code inspect}
     * print it.
     *
     * @return the key, 64 lower-case hex characters
     * @throws IllegalArgumentException naming --key when it is neither (exit 2)
     */
    static String keyOption(String key, String namespace) {
        try {
            if (key.startsWith("/")) {
                return EffectKey.keyAt(namespace, key);
            }
            return EffectKey.requireKeyText(key.toLowerCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--" + e.getMessage(), e);
        }
    }

    /** Whether any of these options was given. */
    boolean anyGiven() {
        return dest != null || destName != null || file != null;
    }

    /**
     * The effect key, from exactly one of {@code --dest}/{@code --dest-name} and {@code --file}.
     *
     * @throws RuntimeException         {@code command}'s usage error when the options are missing or combined wrongly (exit 2)
     * @throws IllegalArgumentException naming the field when the destination or file is bad (exit 2)
     */
    EffectKey resolve(Subcommand command) {
        if (dest != null && destName != null) {
            throw command.usage("--dest and --dest-name are mutually exclusive: give exactly one");
        }
        if (dest == null && destName == null) {
            throw command.usage("missing the destination: give --dest PROVIDER:ID or --dest-name PROVIDER:TITLE");
        }
        if (file == null) {
            throw command.usage("missing --file PATH: the content to deliver");
        }
        return key(dest, destName, file);
    }

    /**
     * The effect key of exactly one of {@code dest} and {@code destName} (the other null) and
     * {@code file}.
     *
     * @throws IllegalArgumentException naming the option when the destination or file is bad (exit 2)
     */
    static EffectKey key(String dest, String destName, Path file) {
        Destination destination;
        try {
            destination = dest != null
                    ? Destination.parse(IdentityKind.STABLE, dest)
                    : Destination.parse(IdentityKind.DISPLAY_NAME, destName);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException((dest != null ? "--dest: " : "--dest-name: ") + e.getMessage(), e);
        }
        try {
            return EffectKey.of(destination, file);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--" + e.getMessage(), e);
        }
    }
}
