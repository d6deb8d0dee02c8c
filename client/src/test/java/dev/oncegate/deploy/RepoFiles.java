package dev.oncegate.deploy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Files of this repository, found from the module's working directory (surefire runs tests there). */
public final class RepoFiles {

    private RepoFiles() {
    }

    /** The repository root: the nearest ancestor holding both {@code pom.xml} and {@code deploy/}. */
    public static Path root() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null) {
            if (Files.isRegularFile(dir.resolve("pom.xml")) && Files.isDirectory(dir.resolve("deploy"))) {
                return dir;
            }
            dir = dir.getParent();
        }
        throw new IllegalStateException("no repository root (pom.xml and deploy/) above " + Path.of("").toAbsolutePath());
    }

    public static Path path(String relative) {
        Path path = root().resolve(relative);
        if (!Files.exists(path)) {
            throw new IllegalStateException(relative + " does not exist under " + root());
        }
        return path;
    }

    public static String read(String relative) {
        try {
            return Files.readString(path(relative), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
