package dev.oncegate.testing;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A private temporary directory per embedded server. ZooKeeper's embedded server writes a
 * generated configuration file next to its data directory and never removes it; giving every
 * server a directory of its own, removed on close, leaves nothing behind in the system's temp
 * directory. Public for the kit's other packages (the benchmark's server uses it too) and for
 * the tests that back up and restore a server's data directory. Stateless and thread-safe.
 */
public final class Scratch {

    private Scratch() {
    }

    /** A new empty directory under the system temp directory. */
    public static Path create(String prefix) {
        try {
            return Files.createTempDirectory(prefix);
        } catch (IOException e) {
            throw new UncheckedIOException("could not create a temporary directory: " + e.getMessage(), e);
        }
    }

    /** {@code dir/name}, created. */
    public static Path child(Path dir, String name) {
        try {
            return Files.createDirectories(dir.resolve(name));
        } catch (IOException e) {
            throw new UncheckedIOException("could not create " + dir.resolve(name) + ": " + e.getMessage(), e);
        }
    }

    /** Closes {@code server} (a server or cluster using {@code dir}), then removes {@code dir} whatever the close did. */
    public static void closeThenDelete(Closeable server, Path dir) {
        try {
            server.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            delete(dir);
        }
    }

    /**
     * Copies {@code from} and everything below it to {@code to}, which must not exist or be an
     * empty directory: a backup of a stopped server's data directory, or its restore.
     *
     * @throws UncheckedIOException when a file cannot be copied (the copy is then partial)
     */
    public static void copyTree(Path from, Path to) {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not copy " + from + " to " + to + ": " + e.getMessage(), e);
        }
    }

    /** Removes {@code dir} and everything below it; what cannot be removed is left, silently. */
    public static void delete(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
            // best effort: a file still held open by a dying server thread
        }
    }
}
