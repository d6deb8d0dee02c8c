package dev.oncegate.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Whether the JVM maps the launcher's class-data sharing archive, checked from inside:
 * {@code bin/oncegate} names the archive it gives the JVM in the system property {@value #PROPERTY}, and
 * {@link #setAsideIfRejected} sets it aside as {@code ARCHIVE.rejected} when this JVM does not
 * share classes from it. A JVM that cannot use an archive (another jar or Java under the same
 * names, a jar unpacked with an older time) says nothing and starts without it, every time; so the
 * launcher, which cannot tell without starting a process, learns it here and makes the archive
 * again on its next start, once ({@code bin/oncegate} explains the rest).
 *
 * <p>Stateless; called on the main thread before the command runs.
 */
final class ClassDataArchive {

    /** The system property that names the archive; set only by bin/oncegate. */
    static final String PROPERTY = "oncegate.cds.archive";

    private ClassDataArchive() {
    }

    /**
     * Sets the named archive aside when it is not in use: the JVM says "sharing" in
     * {@code java.vm.info} exactly when it maps classes from an archive. Nothing happens without the
     * property. A failure to rename is left alone: the archive only makes starts faster, and the
     * next start checks again.
     */
    static void setAsideIfRejected() {
        String archive = System.getProperty(PROPERTY);
        if (archive == null || archive.isEmpty() || System.getProperty("java.vm.info", "").contains("sharing")) {
            return;
        }
        Path file = Path.of(archive);
        try {
            Files.move(file, file.resolveSibling(file.getFileName() + ".rejected"), StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException | RuntimeException e) {
            // another start set it aside first, or the cache is read-only: this start runs as it is
        }
    }
}
