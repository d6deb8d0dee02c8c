package dev.oncegate.cli;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Set;

/**
 * The sidecar's bearer token: 256 random bits, written at every start to the token file with mode
 * 0600 (created so, never widened afterwards), replacing an earlier file by rename, so an agent
 * reads either the old token or the new one, never part of one. Agents that may read the file
 * are the sidecar's own user (and, in Kubernetes, the containers sharing its volume as that user).
 * The token is made before it is written: the sidecar writes it only once it listens, so a second
 * sidecar that cannot listen leaves the running one's token in place. A sidecar also holds a lock
 * on {@code TOKEN_FILE.lock} for its life ({@link #hold}), so a second sidecar on another port
 * with the same token file is refused instead of replacing the token the first one's agents use;
 * the operating system drops the lock when the process ends, however it ends.
 *
 * <p>Stateless; thread-safe.
 */
final class SidecarToken {

    private SidecarToken() {
    }

    /** The lock a running sidecar holds on its token file; closing it (or the process ending) lets it go. */
    record Hold(FileChannel channel) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            channel.close();
        }
    }

    /**
     * Takes the lock on {@code file}'s {@code .lock} sibling (created with mode 0600, left in place
     * afterwards: an unlocked one is free) and writes this process's pid in it.
     *
     * @throws IllegalArgumentException naming --token-file when another process (or this one) holds
     *     it, naming that holder's pid where the lock file says it, or when it cannot be made
     */
    static Hold hold(Path file) {
        Path lock = file.resolveSibling(file.getFileName() + ".lock");
        FileChannel channel = null;
        try {
            channel = FileChannel.open(lock, Set.of(StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            FileLock held;
            try {
                held = channel.tryLock();
            } catch (OverlappingFileLockException thisProcess) {
                held = null;
            }
            if (held == null) {
                String holder = Files.readString(lock, StandardCharsets.UTF_8).strip();
                channel.close();
                throw new IllegalArgumentException("--token-file: " + file + " belongs to a sidecar that is running ("
                        + (holder.isEmpty() ? "its lock " : holder + ", holding ") + lock + "); give each sidecar its"
                        + " own --token-file. Nothing was written");
            }
            channel.truncate(0);
            channel.write(ByteBuffer.wrap(("pid " + ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.UTF_8)));
            return new Hold(channel);
        } catch (IOException | UnsupportedOperationException e) {
            closeQuietly(channel);
            throw new IllegalArgumentException("--token-file: cannot lock " + lock + ": " + e, e);
        }
    }

    private static void closeQuietly(FileChannel channel) {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException alreadyFailing) {
                // the error being reported says more
            }
        }
    }

    /** A new token: 256 random bits, URL-safe base64 without padding. */
    static String generate() {
        byte[] bits = new byte[32];
        new SecureRandom().nextBytes(bits);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bits);
    }

    /**
     * Writes {@code token} to {@code file} (its directory must exist), replacing it by rename.
     *
     * @throws IllegalArgumentException naming --token-file when it cannot be written
     */
    static void write(Path file, String token) {
        Path dir = file.toAbsolutePath().getParent();
        if (dir == null || !Files.isDirectory(dir)) {
            throw new IllegalArgumentException("--token-file: its directory " + dir + " does not exist");
        }
        Path tmp = null;
        try {
            tmp = Files.createTempFile(dir, ".sidecar-token-", ".tmp",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(tmp, token + "\n", StandardCharsets.UTF_8);
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException | UnsupportedOperationException e) {
            throw new IllegalArgumentException("--token-file: cannot write " + file + " with mode 0600: " + e, e);
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // renamed already, or gone
                }
            }
        }
    }
}
