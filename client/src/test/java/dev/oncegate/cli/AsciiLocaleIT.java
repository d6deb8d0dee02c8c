package dev.oncegate.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code java -jar oncegate.jar} under {@code LANG=C}, whose JVM decodes its arguments as ASCII:
 * the CLI recovers their UTF-8 bytes ({@link Arguments}), so the key is the one a UTF-8 locale
 * gives. A process of its own, since the locale is fixed when a JVM starts.
 */
class AsciiLocaleIT {

    @TempDir
    Path dir;

    @AfterEach
    void killEverythingStarted() {
        Cli.destroyAll();
    }

    @Test
    void key_underAnAsciiLocale_keysTheExactUtf8Destination() throws Exception {
        Path report = dir.resolve("report");
        Files.writeString(report, "quarterly report");
        Cli ascii = new Cli(dir, Map.of("LANG", "C", "LC_ALL", "C"));

        Cli.Result result = ascii.run("key", "--dest-name", "desktop-chat:Équipe Finance – Q3 📊", "--file", report.toString());

        assertThat(result.exit()).as(result.toString()).isEqualTo(0);
        assertThat(result.stdoutJson().get("key").asText())
                .isEqualTo("aeb5f572755ad880115d25d9425727cd594aed3c8e4c11f0b298f3312fe016ea");
        assertThat(result.stdoutJson().get("destination").asText()).isEqualTo("Équipe Finance – Q3 📊");
    }
}
