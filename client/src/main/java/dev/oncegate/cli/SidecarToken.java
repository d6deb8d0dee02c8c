package dev.oncegate.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * The sidecar's bearer token: 256 random bits, written at every start to the token file with mode
 * 0600 (created so, never widened afterwards), replacing an earlier file by rename, so an agent
 * reads either the old token or the new one, never part of one. Agents that may read the file
 * are the sidecar's own user (and, in Kubernetes, the containers sharing its volume as that user).
 * The token is made before it is written: the sidecar writes it only once it listens, so a second
 * sidecar that cannot listen leaves the running one's token in place.
 *
 * <p>Stateless; thread-safe.
 */
final class SidecarToken {

    private SidecarToken() {
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
