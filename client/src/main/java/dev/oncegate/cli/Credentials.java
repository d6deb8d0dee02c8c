package dev.oncegate.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import dev.oncegate.OncegateAcl;

/**
 * A digest identity, {@code USER:PASSWORD}, from an option, an environment variable or a file
 * (so that the password stays out of {@code ps}). Immutable.
 *
 * @param text   {@code USER:PASSWORD}
 * @param source where it came from, for messages (never the password itself)
 */
record Credentials(String text, String source) {

    /**
     * Parses {@code USER:PASSWORD}.
     *
     * @throws IllegalArgumentException naming the source when malformed (exit 2)
     */
    static Credentials parse(String text, String source) {
        String t = text.strip();
        int colon = t.indexOf(':');
        if (colon <= 0 || colon == t.length() - 1) {
            throw new IllegalArgumentException(source + ": expected USER:PASSWORD (both non-empty)");
        }
        return new Credentials(t, source);
    }

    /** The first line of {@code file}. */
    static Credentials fromFile(Path file, String source) {
        try {
            String content = Files.readString(file, StandardCharsets.UTF_8);
            String first = content.lines().findFirst().orElse("");
            return parse(first, source + " (" + file + ")");
        } catch (IOException e) {
            throw new IllegalArgumentException(source + ": cannot read " + file + " (" + e.getMessage() + ")", e);
        }
    }

    String user() {
        return text.substring(0, text.indexOf(':'));
    }

    /** The digest id ZooKeeper matches ACLs against: {@code user:base64(sha1(user:password))}. */
    String digest() {
        return OncegateAcl.digest(text);
    }

    byte[] bytes() {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return user() + ":*** (" + source + ")";
    }
}
