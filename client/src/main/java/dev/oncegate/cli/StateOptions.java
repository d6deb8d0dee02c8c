package dev.oncegate.cli;

import java.nio.file.Path;

import dev.oncegate.ZxidMarks;
import picocli.CommandLine.Option;

/**
 * Where this host keeps oncegate's local state: the zxid marks that catch an ensemble rolled
 * back to an older snapshot, and {@code oncegate server}'s default data directory. One fixed
 * place by default (the XDG state directory), never relative to the working directory.
 *
 * <p>Not thread-safe; filled in by picocli on the main thread.
 */
final class StateOptions {

    static final String ENV = "ONCEGATE_STATE_DIR";
    static final String MARKS_FILE = "zxid-marks.json";

    @Option(names = "--state-dir", paramLabel = "DIR",
            description = "This host's oncegate state: the zxid marks that catch a ZooKeeper restored from an older"
                    + " snapshot (default: $$ONCEGATE_STATE_DIR, else $$XDG_STATE_HOME/oncegate, else ~/.local/state/oncegate).")
    Path stateDir;

    /** The state directory, absolute. */
    Path dir() {
        if (stateDir != null) {
            return stateDir.toAbsolutePath().normalize();
        }
        return defaultDir();
    }

    static Path defaultDir() {
        String env = System.getenv(ENV);
        if (env != null && !env.isBlank()) {
            return Path.of(env).toAbsolutePath().normalize();
        }
        String xdg = System.getenv("XDG_STATE_HOME");
        Path base = xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute() ? Path.of(xdg)
                : Path.of(System.getProperty("user.home"), ".local", "state");
        return base.resolve("oncegate").toAbsolutePath().normalize();
    }

    /** The zxid marks file of this host. */
    Path marksFile() {
        return dir().resolve(MARKS_FILE);
    }

    /** This host's marks, recording {@code connect} as where they were seen. */
    ZxidMarks marks(String connect) {
        return ZxidMarks.file(marksFile(), connect);
    }
}
