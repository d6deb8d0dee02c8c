package dev.oncegate.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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

    /**
     * The JVM hands a child its arguments in its own charset, so under an ASCII locale a non-ASCII
     * argument would reach COMMAND as {@code ?} (a wrong effect delivered) and a non-ASCII program
     * would fail after the arming (the key consumed for a command that never started): refused
     * before anything connects. The server address is a closed port, so a run that went on would
     * exit 13, not 2.
     */
    @Test
    void run_underAnAsciiLocale_refusesACommandItCannotPassOnVerbatim() throws Exception {
        Path report = Files.writeString(dir.resolve("report"), "quarterly report");
        Path script = dir.resolve("envoyé.sh");
        Files.writeString(script, "#!/bin/sh\necho ran >> ledger\n");
        script.toFile().setExecutable(true);
        Cli ascii = new Cli(dir, Map.of("LANG", "C", "LC_ALL", "C"));

        for (List<String> command : List.of(List.of("sh", "-c", "echo \"$1\" >> ledger", "sh", "Réunion"),
                List.of(script.toString()))) {
            List<String> args = new ArrayList<>(List.of("run", "--connect", "127.0.0.1:1", "--connect-timeout", "1s",
                    "--dest", "slack:C1", "--file", report.toString(), "--"));
            args.addAll(command);

            Cli.Result result = ascii.run(args.toArray(String[]::new));

            assertThat(result.exit()).as(result.toString()).isEqualTo(ExitCode.USAGE);
            assertThat(result.stderr()).contains("COMMAND", "C.UTF-8");
        }
        assertThat(dir.resolve("ledger")).doesNotExist();
    }
}
