package dev.oncegate.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.AssertionFailedError;

/** A test whose Debian file is missing fails under {@code -Doncegate.require-tools=true} (CI), naming the package. */
class ToolsTest {

    @TempDir
    Path dir;

    @Test
    void missingFile_whenToolsAreRequired_failsNamingTheInstallCommand() {
        String before = System.getProperty("oncegate.require-tools");
        System.setProperty("oncegate.require-tools", "true");
        try {
            assertThatThrownBy(() -> Tools.requireFile(dir.resolve("zookeeper.jar"), "apt-get install -y zookeeper"))
                    .isInstanceOf(AssertionFailedError.class)
                    .hasMessageContaining("zookeeper.jar is missing; install it with `apt-get install -y zookeeper`");
        } finally {
            if (before == null) {
                System.clearProperty("oncegate.require-tools");
            } else {
                System.setProperty("oncegate.require-tools", before);
            }
        }
    }

    @Test
    void presentFile_isReturned() throws Exception {
        Path jar = java.nio.file.Files.createFile(dir.resolve("present.jar"));

        assertThat(Tools.requireFile(jar, "apt-get install -y zookeeper")).isEqualTo(jar);
    }
}
