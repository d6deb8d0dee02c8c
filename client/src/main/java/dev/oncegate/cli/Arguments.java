package dev.oncegate.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Recovers the command-line arguments' exact UTF-8 text when the JVM decoded them as ASCII.
 *
 * <p>Java decodes {@code argv} with {@code sun.jnu.encoding}, which follows the locale. Under
 * {@code LANG=C} or {@code POSIX} that is ASCII, and every non-ASCII byte silently becomes
 * {@code ?}: {@code --dest-name "chat:Équipe"} would become {@code chat:??quipe} and yield a
 * different effect key than the same command under a UTF-8 locale, breaking at-most-once across
 * workers. On Linux the raw bytes are in {@code /proc/self/cmdline}; they are decoded as UTF-8.
 * Where that is impossible and an argument may have been mangled, the run is refused rather than
 * keyed on a guess.
 */
final class Arguments {

    private Arguments() {
    }

    /**
     * The arguments as UTF-8 text.
     *
     * @throws IllegalArgumentException when an argument was mangled and cannot be recovered
     */
    static String[] utf8(String[] args) {
        Charset jnu = jnuCharset();
        if (jnu == null || !isAscii(jnu)) {
            return args; // UTF-8, or a locale charset that decodes its own bytes faithfully
        }
        List<byte[]> raw = procCmdline();
        if (raw == null || raw.size() < args.length) {
            if (Arrays.stream(args).anyMatch(a -> a.indexOf('?') >= 0 || a.indexOf('\uFFFD') >= 0)) {
                throw new IllegalArgumentException("arguments: this JVM decodes arguments as " + jnu
                        + " (locale " + System.getenv("LANG") + "), so non-ASCII text may have been replaced by '?';"
                        + " run oncegate under a UTF-8 locale (e.g. LANG=C.UTF-8)");
            }
            return args;
        }
        List<byte[]> tail = raw.subList(raw.size() - args.length, raw.size());
        String[] out = new String[args.length];
        for (int i = 0; i < args.length; i++) {
            byte[] bytes = tail.get(i);
            if (!new String(bytes, jnu).equals(args[i])) {
                return args; // not aligned with what the JVM saw (should not happen): keep the JVM's view
            }
            try {
                out[i] = StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(bytes)).toString();
            } catch (CharacterCodingException e) {
                throw new IllegalArgumentException("arguments: argument " + (i + 1) + " is not valid UTF-8");
            }
        }
        return out;
    }

    private static Charset jnuCharset() {
        String name = System.getProperty("sun.jnu.encoding");
        try {
            return name == null ? null : Charset.forName(name);
        } catch (RuntimeException e) {
            return null;
        }
    }

    private static boolean isAscii(Charset charset) {
        return charset.equals(StandardCharsets.US_ASCII);
    }

    private static List<byte[]> procCmdline() {
        Path cmdline = Path.of("/proc/self/cmdline");
        if (!Files.isReadable(cmdline)) {
            return null;
        }
        byte[] all;
        try {
            all = Files.readAllBytes(cmdline);
        } catch (IOException e) {
            return null;
        }
        List<byte[]> parts = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < all.length; i++) {
            if (all[i] == 0) {
                parts.add(Arrays.copyOfRange(all, start, i));
                start = i + 1;
            }
        }
        if (start < all.length) {
            parts.add(Arrays.copyOfRange(all, start, all.length));
        }
        return parts;
    }
}
