package dev.oncegate.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The short-lived commands start in a fraction of a second (issue 17 §4: {@code key} within
 * 1.5× of a bare JVM, {@code run -- true} within 3×) because they load only what they use. The
 * benchmark's startup phase measures the time; this test pins the reasons, as the classes each
 * command line loads ({@code -Xlog:class+load}) in {@code java -jar oncegate.jar}:
 * <ul>
 * <li>{@code --version} and {@code key} build no picocli model (its reflection over the
 *     annotations is most of a short command's own work) and load no jackson-databind;</li>
 * <li>{@code run -- true} and {@code inspect} on a plain (not TLS) connection never set up the
 *     JVM's default TLS context (every security provider and the whole CA trust store), which
 *     ZooKeeper's {@code X509Util} asks for when its class initialises, and load no
 *     jackson-databind.</li>
 * </ul>
 * The output of each is checked too: being lean must not change what it prints.
 */
class ShortCommandsLoadOnlyWhatTheyUseIT extends CliFixture {

    private static final String DATABIND = "com.fasterxml.jackson.databind.";
    /** picocli's command line and its model: a few of its exception types may load, never these. */
    private static final List<String> PICOCLI_MODEL = List.of("picocli.CommandLine", "picocli.CommandLine$Model$CommandSpec");
    /** The JVM's TLS context, which X509Util's static initialiser sets up (and the CA trust store it reads). */
    private static final List<String> TLS_CONTEXT = List.of("javax.net.ssl.SSLContext", "sun.security.ssl.SSLContextImpl",
            "sun.security.provider.JavaKeyStore");

    @Test
    void version_loadsNeitherPicocliNorDatabind() throws Exception {
        Loaded version = runLogged("--version");

        assertThat(version.stdout()).startsWith("oncegate ");
        assertThat(version.classes()).as("classes loaded by --version").doesNotContainAnyElementsOf(PICOCLI_MODEL);
        assertThat(version.packages(DATABIND)).as("jackson-databind classes loaded by --version").isEmpty();
    }

    @Test
    void key_loadsNeitherPicocliNorDatabind() throws Exception {
        Loaded printed = runLogged("key", "--dest", dest, "--file", content.toString());

        assertThat(Cli.JSON.readTree(printed.stdout()).get("key").asText()).isEqualTo(key.key());
        assertThat(printed.classes()).as("classes loaded by key").doesNotContainAnyElementsOf(PICOCLI_MODEL);
        assertThat(printed.packages(DATABIND)).as("jackson-databind classes loaded by key").isEmpty();
    }

    @Test
    void runTrue_onAPlainConnection_setsUpNoTlsAndLoadsNoDatabind() throws Exception {
        Loaded crossed = runLogged("run", "--connect", zk.connectString(), "--state-dir", dir.resolve("state").toString(),
                "--dest", dest, "--file", content.toString(), "--", "true");

        assertThat(crossed.exit()).as(crossed.stderr()).isEqualTo(ExitCode.SENT_VERIFIED);
        assertThat(crossed.classes()).as("classes loaded by run").doesNotContainAnyElementsOf(TLS_CONTEXT);
        assertThat(crossed.packages(DATABIND)).as("jackson-databind classes loaded by run").isEmpty();
    }

    @Test
    void inspect_onAPlainConnection_setsUpNoTlsAndLoadsNoDatabind() throws Exception {
        Loaded inspected = runLogged("inspect", "--connect", zk.connectString(), "--state-dir",
                dir.resolve("state").toString(), "--dest", dest, "--file", content.toString());

        assertThat(inspected.exit()).as(inspected.stderr()).isEqualTo(ExitCode.OK);
        assertThat(Cli.JSON.readTree(inspected.stdout()).get("key").asText()).isEqualTo(key.key());
        assertThat(inspected.classes()).as("classes loaded by inspect").doesNotContainAnyElementsOf(TLS_CONTEXT);
        assertThat(inspected.packages(DATABIND)).as("jackson-databind classes loaded by inspect").isEmpty();
    }

    /** What one command line printed and which classes its JVM loaded. */
    private record Loaded(int exit, String stdout, String stderr, List<String> classes) {

        List<String> packages(String prefix) {
            return classes.stream().filter(name -> name.startsWith(prefix)).toList();
        }
    }

    /** {@code java -Xlog:class+load… -jar oncegate.jar ARGS} in this test's directory. */
    private Loaded runLogged(String... args) throws IOException, InterruptedException {
        Path log = dir.resolve("class-load.log");
        Path out = dir.resolve("stdout.txt");
        Path err = dir.resolve("stderr.txt");
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xlog:class+load=info:file=" + log + ":none", "-Djava.net.preferIPv4Stack=true", "-jar",
                Cli.jar().toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile())
                .redirectOutput(out.toFile()).redirectError(err.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
        builder.environment().keySet().removeIf(name -> name.startsWith("ONCEGATE_"));
        Process process = builder.start();
        if (!process.waitFor(dev.oncegate.testing.Timing.PROCESS.toMillis(), TimeUnit.MILLISECONDS)) {
            ProcessTree.kill(process, java.time.Duration.ZERO);
            throw new AssertionError(String.join(" ", args) + " did not finish in " + dev.oncegate.testing.Timing.PROCESS);
        }
        if (!Files.exists(log)) {
            throw new AssertionError(String.join(" ", command) + " logged no classes; it exited " + process.exitValue()
                    + ": " + Files.readString(err, StandardCharsets.UTF_8));
        }
        List<String> classes = new ArrayList<>();
        for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
            int space = line.indexOf(' ');
            classes.add(space < 0 ? line : line.substring(0, space));
        }
        return new Loaded(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8), classes);
    }
}
