package dev.oncegate.deploy;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import org.junit.jupiter.api.Assumptions;

/**
 * External tools some tests run (promtool from Debian's {@code prometheus} package, the
 * ZooKeeper server and zkCli from its {@code zookeeper} package). In CI ({@code CI=true}, or {@code -Doncegate.require-tools=true}, which
 * {@code .ci/run} passes) a missing tool fails the test; on a developer's machine the test is
 * skipped with a message that says how to install it.
 */
public final class Tools {

    private Tools() {
    }

    public static boolean required() {
        return "true".equalsIgnoreCase(System.getenv("CI")) || Boolean.getBoolean("oncegate.require-tools");
    }

    /** The tool's path on PATH; fails (CI) or skips (elsewhere) when it is missing. */
    public static Path require(String tool, String install) {
        Optional<Path> found = find(tool);
        if (found.isPresent()) {
            return found.get();
        }
        missing(tool + " is not on PATH; install it with `" + install + "` (.ci/run does)");
        throw new AssertionError("unreachable");
    }

    /**
     * A file a Debian package installs (a jar, say) that a test needs; fails (CI) or skips (elsewhere)
     * when it is missing, like {@link #require}.
     */
    public static Path requireFile(Path file, String install) {
        if (Files.isRegularFile(file)) {
            return file;
        }
        missing(file + " is missing; install it with `" + install + "` (.ci/run does)");
        throw new AssertionError("unreachable");
    }

    private static void missing(String message) {
        if (required()) {
            fail(message);
        }
        Assumptions.abort(message);
    }

    static Optional<Path> find(String tool) {
        String path = System.getenv("PATH");
        if (path == null) {
            return Optional.empty();
        }
        for (String dir : path.split(File.pathSeparator)) {
            Path candidate = Path.of(dir, tool);
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }
}
