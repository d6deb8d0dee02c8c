package dev.oncegate.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

import dev.oncegate.testing.Scratch;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The distribution as a user gets it: {@code target/oncegate-VERSION.tar.gz}, built by
 * {@code mvn package}, unpacked into a directory of its own; its launcher against a real
 * ZooKeeper, its class-data sharing archive (made on first use, in the cache directory), its
 * man pages and completion script; and the
 * slimmed runnable jar inside it (DemoIT runs the demo from that jar).
 */
class DistributionIT extends CliFixture {

    /** A class named in a class file (a class reference or a descriptor) in the packages the slimming touches. */
    private static final Pattern CLASS_REFERENCE = Pattern.compile(
            "(?:dev/oncegate|org/apache/curator/test|org/junit|com/google/common)(?:/[a-z0-9_]+)*/[A-Z][A-Za-z0-9_$]*");

    /** The vector of AsciiLocaleIT: a display name outside ASCII, keyed under an ASCII locale. */
    private static final String DEST_NAME = "desktop-chat:Équipe Finance – Q3 📊";
    private static final String DEST_NAME_KEY = "aeb5f572755ad880115d25d9425727cd594aed3c8e4c11f0b298f3312fe016ea";

    @TempDir
    static Path unpackedInto;
    /** The launchers' cache directory ($XDG_CACHE_HOME), shared by the tests: never the user's. */
    @TempDir
    static Path cache;
    /** The unpacked distribution, {@code oncegate-VERSION/}. */
    static Path home;

    /** The JDK running these tests: the one that built the archive at {@code package}. */
    final String javaHome = System.getProperty("java.home");

    @BeforeAll
    static void unpackTheTarball() throws Exception {
        Path tarball = Path.of(property("oncegate.dist.tarball"));
        assertThat(tarball).as("`mvn package` builds it").isRegularFile();
        Process tar = new ProcessBuilder("tar", "-xzf", tarball.toString(), "-C", unpackedInto.toString())
                .redirectErrorStream(true).start();
        String output = new String(tar.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(tar.waitFor()).as(output).isZero();
        home = unpackedInto.resolve(Path.of(property("oncegate.dist.home")).getFileName());
        assertThat(home.resolve("bin/oncegate")).isExecutable();
    }

    @BeforeEach
    void throughTheLauncher() {
        cli = launcher(home, Map.of("LC_ALL", "C"));
    }

    @Test
    void unpackedTarball_keyAndRun_againstZooKeeper() throws Exception {
        Path report = Files.writeString(dir.resolve("report"), "quarterly report");

        Cli.Result keyed = cli.run("key", "--dest-name", DEST_NAME, "--file", report.toString());
        Cli.Result first = run(LEDGER_LINE + " && printf %s \"$LC_ALL\" > locale");
        Cli.Result second = run(LEDGER_LINE);

        assertThat(keyed.exit()).as(keyed.toString()).isZero();
        assertThat(keyed.stdoutJson().get("key").asText()).isEqualTo(DEST_NAME_KEY);
        assertThat(keyed.stdoutJson().get("destination").asText()).isEqualTo("Équipe Finance – Q3 📊");
        // Silent, though this first use makes the installation's class-data sharing archive.
        assertThat(stderrLines(keyed)).isEmpty();
        assertThat(first.exit()).as(first.toString()).isEqualTo(ExitCode.SENT_VERIFIED);
        assertThat(first.runJson().get("outcome").asText()).isEqualTo("sent_verified");
        assertThat(second.exit()).as(second.toString()).isEqualTo(ExitCode.STOP_SENT);
        assertThat(second.runJson().get("decision").asText()).isEqualTo("stop_sent");
        assertThat(ledgerLines()).singleElement().asString().startsWith(key.key() + " 0 ");
        // An ASCII LC_ALL becomes a UTF-8 one, for the JVM and so for COMMAND.
        assertThat(Files.readString(dir.resolve("locale"))).isEqualTo("C.UTF-8");
    }

    @Test
    void launcher_findsJavaOnThePath_throughASymlink_andRefusesABrokenJavaHome() throws Exception {
        Path report = Files.writeString(dir.resolve("report"), "quarterly report");
        Path linked = Files.createDirectories(dir.resolve("usr/local/bin")).resolve("oncegate");
        Files.createSymbolicLink(linked, home.resolve("bin/oncegate"));
        Map<String, String> onThePath = Map.of("JAVA_HOME", "", "XDG_CACHE_HOME", cache.toString(),
                "PATH", Path.of(javaHome, "bin") + ":" + System.getenv("PATH"));

        Cli.Result found = new Cli(dir, onThePath, linked).run("key", "--dest-name", DEST_NAME, "--file", report.toString());
        Cli.Result broken = launcher(home, Map.of("JAVA_HOME", dir.resolve("no-such-jdk").toString()))
                .run("key", "--dest-name", DEST_NAME, "--file", report.toString());

        assertThat(found.exit()).as(found.toString()).isZero();
        assertThat(found.stdoutJson().get("key").asText()).isEqualTo(DEST_NAME_KEY);
        assertThat(broken.exit()).as(broken.toString()).isEqualTo(ExitCode.USAGE);
        assertThat(broken.stderr()).contains("JAVA_HOME", "no-such-jdk");
        assertThat(broken.stdout()).isEmpty();
    }

    @Test
    void movedInstallation_makesItsArchiveOnFirstUse_andMapsItsClassesFromIt() throws Exception {
        Path installation = copyOfTheInstallation("moved");
        Path ownCache = dir.resolve("cache");

        Cli.Result first = launcher(installation, Map.of("XDG_CACHE_HOME", ownCache.toString()))
                .run("key", "--dest", dest, "--file", content.toString());
        Cli.Result keyed = loggingClassLoads(installation, ownCache).run("key", "--dest", dest, "--file", content.toString());

        assertThat(first.exit()).as(first.toString()).isZero();
        assertThat(stderrLines(first)).isEmpty();
        assertThat(archives(ownCache)).singleElement().asString().matches(".*/oncegate-[^/]+-[0-9]+\\.jsa");
        assertThat(keyed.exit()).as(keyed.toString()).isZero();
        assertThat(keyed.stdoutJson().get("key").asText()).isEqualTo(key.key());
        assertThat(stderrLines(keyed)).isEmpty();
        assertThat(loadedFromTheArchive("dev.oncegate.cli.Main")).isTrue();
        assertThat(loadedFromTheArchive("dev.oncegate.EffectKey")).isTrue();
    }

    @Test
    void runAndInspect_loadNoClassFromTheJar_everyOneIsMappedFromTheArchive() throws Exception {
        // The unpacked tarball and the tests' shared cache: its archive is made once, by whichever test comes first.
        String[] connect = {"--connect", zk.connectString(), "--state-dir", dir.resolve("state").toString()};
        String[] effect = {"--dest", dest, "--file", content.toString()};
        String jar = home.resolve("lib/oncegate.jar").toString();

        for (String[] command : List.of(join(join(new String[] {"run"}, connect), join(effect, new String[] {"--", "true"})),
                join(join(new String[] {"inspect"}, connect), effect))) {
            Cli.Result result = loggingClassLoads(home, cache).run(command);
            List<String> fromTheJar = Files.readAllLines(dir.resolve("classes.log")).stream()
                    .filter(line -> line.contains("source: file:" + jar)).toList();

            assertThat(result.exit()).as(result.toString())
                    .isEqualTo(command[0].equals("run") ? ExitCode.SENT_VERIFIED : ExitCode.OK);
            // Each would open the 15,000-entry jar, and be read and verified on every start: picocli's
            // Java 5 classes once left out of the archive (Main's handlers), ZooKeeper's client classes
            // in its server package once filtered out of the class list.
            assertThat(fromTheJar).as(command[0]).isEmpty();
        }
    }

    private static String[] join(String[] a, String[] b) {
        String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    @Test
    void anotherInstallation_getsAnArchiveOfItsOwn_andTheFirstKeepsIts() throws Exception {
        Path ownCache = dir.resolve("cache");
        Path one = copyOfTheInstallation("one");
        Path two = copyOfTheInstallation("two");

        Cli.Result first = launcher(one, Map.of("XDG_CACHE_HOME", ownCache.toString())).run("--version");
        List<Path> afterOne = archives(ownCache);
        Cli.Result second = launcher(two, Map.of("XDG_CACHE_HOME", ownCache.toString())).run("--version");
        Cli.Result keyed = loggingClassLoads(one, ownCache).run("key", "--dest", dest, "--file", content.toString());

        assertThat(first.exit()).as(first.toString()).isZero();
        assertThat(second.exit()).as(second.toString()).isZero();
        assertThat(afterOne).hasSize(1);
        assertThat(archives(ownCache)).hasSize(2).containsAll(afterOne);
        assertThat(keyed.exit()).as(keyed.toString()).isZero();
        assertThat(loadedFromTheArchive("dev.oncegate.cli.Main")).isTrue();
    }

    /**
     * The cache does not grow with every installation there ever was: making an archive removes
     * those of installations or Javas that are gone, or of installations replaced since (an upgrade
     * in place under a new version), and those an earlier launcher made without saying whose they are.
     */
    @Test
    void makingAnArchive_removesThoseOfInstallationsGoneOrReplaced_andKeepsTheOthers() throws Exception {
        Path ownCache = dir.resolve("cache");
        Path gone = copyOfTheInstallation("gone");
        Path replaced = copyOfTheInstallation("replaced-later");
        Path kept = copyOfTheInstallation("kept");
        for (Path installation : List.of(gone, replaced, kept)) {
            Cli.Result made = launcher(installation, Map.of("XDG_CACHE_HOME", ownCache.toString())).run("--version");
            assertThat(made.exit()).as(made.toString()).isZero();
        }
        Path otherJava = Files.createDirectories(dir.resolve("other-jdk/bin"));
        Files.createSymbolicLink(otherJava.resolve("java"), Path.of(javaHome, "bin", "java"));
        Cli.Result withOtherJava = launcher(kept, Map.of("XDG_CACHE_HOME", ownCache.toString(),
                "JAVA_HOME", otherJava.getParent().toString())).run("--version");
        assertThat(withOtherJava.exit()).as(withOtherJava.toString()).isZero();
        List<Path> before = archives(ownCache);
        Path keptArchive = before.get(archiveIndex(before, kept));
        Path earlierLaunchers = Files.writeString(ownCache.resolve("oncegate/oncegate-0.0.9-4149260183.jsa"), "old");
        Files.writeString(ownCache.resolve("oncegate/oncegate-0.0.9-4149260183.jsa.failed"), "exit 1");
        Scratch.delete(gone);
        Scratch.delete(otherJava.getParent());
        Path jar = replaced.resolve("lib/oncegate.jar");
        Files.setLastModifiedTime(jar, FileTime.from(Instant.now().plusSeconds(5)));

        Cli.Result newcomer = launcher(copyOfTheInstallation("new"), Map.of("XDG_CACHE_HOME", ownCache.toString()))
                .run("--version");

        assertThat(newcomer.exit()).as(newcomer.toString()).isZero();
        assertThat(before).hasSize(4);
        List<Path> after = archives(ownCache);
        assertThat(after).hasSize(2).contains(keptArchive);
        assertThat(after).doesNotContain(earlierLaunchers);
        try (var files = Files.list(ownCache.resolve("oncegate"))) {
            assertThat(files.map(f -> f.getFileName().toString()))
                    .as("no file of a removed archive is left").noneMatch(name -> name.startsWith("oncegate-0.0.9-"))
                    .filteredOn(name -> name.endsWith(".home")).hasSize(2);
        }
    }

    /**
     * What else the prune after a make must get right: the failure mark of an installation that is
     * still there stays (else its make is tried again after every make elsewhere), and the partial
     * archive of a maker that was killed mid-dump goes, once old (one of a live maker stays).
     */
    @Test
    void makingAnArchive_keepsTheFailureMarkOfAnInstallationStillThere_andRemovesAKilledMakersPartialArchive()
            throws Exception {
        Path ownCache = dir.resolve("cache");
        // An archive this java cannot map under the user's options (made with compressed oops, mapped without)
        Path failing = copyOfTheInstallation("failing");
        Cli.Result failed = launcher(failing, Map.of("XDG_CACHE_HOME", ownCache.toString(),
                "ONCEGATE_JAVA_OPTS", "-XX:-UseCompressedOops")).run("--version");
        assertThat(failed.exit()).as(failed.toString()).isZero();
        List<Path> marks = filesEndingIn(ownCache, ".jsa.failed");
        assertThat(marks).hasSize(1);
        Process dead = new ProcessBuilder("true").start();
        dead.waitFor();
        FileTime old = FileTime.from(Instant.now().minus(Duration.ofMinutes(11)));
        Path killed = Files.writeString(ownCache.resolve("oncegate/oncegate-0.1.0-1.jsa." + dead.pid() + ".tmp"), "half");
        Path live = Files.writeString(ownCache.resolve("oncegate/oncegate-0.1.0-2.jsa." + ProcessHandle.current().pid()
                + ".tmp"), "being written");
        Files.setLastModifiedTime(killed, old);
        Files.setLastModifiedTime(live, old);

        Cli.Result newcomer = launcher(copyOfTheInstallation("new"), Map.of("XDG_CACHE_HOME", ownCache.toString()))
                .run("--version");

        assertThat(newcomer.exit()).as(newcomer.toString()).isZero();
        assertThat(archives(ownCache)).hasSize(1);
        assertThat(filesEndingIn(ownCache, ".jsa.failed")).isEqualTo(marks);
        assertThat(killed).doesNotExist();
        assertThat(live).exists();
    }

    private static List<Path> filesEndingIn(Path cache, String suffix) throws IOException {
        try (var files = Files.list(cache.resolve("oncegate"))) {
            return files.filter(f -> f.getFileName().toString().endsWith(suffix)).sorted().toList();
        }
    }

    /** Which of {@code archives} belongs to {@code installation} and this JDK's java, by its {@code .home} file. */
    private int archiveIndex(List<Path> archives, Path installation) throws IOException {
        List<String> wanted = List.of(installation.toString(), Path.of(javaHome, "bin", "java").toString());
        for (int i = 0; i < archives.size(); i++) {
            Path home = archives.get(i).resolveSibling(archives.get(i).getFileName() + ".home");
            if (Files.readAllLines(home).equals(wanted)) {
                return i;
            }
        }
        throw new AssertionError("no archive names " + installation + " as its installation: " + archives);
    }

    @Test
    void anArchiveTheJvmRejects_isSetAside_andMadeAgainOnTheNextStart() throws Exception {
        Path installation = copyOfTheInstallation("replaced");
        Path ownCache = dir.resolve("cache");
        Cli plain = launcher(installation, Map.of("XDG_CACHE_HOME", ownCache.toString()));
        Cli.Result first = plain.run("--version");
        Path archive = archives(ownCache).get(0);
        // Another jar under the same name, with a time older than the archive's (a tarball unpacked
        // over the installation keeps its files' times): the launcher's checks pass, the JVM's do not.
        Path jar = installation.resolve("lib/oncegate.jar");
        try (var zip = java.nio.file.FileSystems.newFileSystem(jar)) {
            Files.writeString(zip.getPath("another-build.txt"), "not the jar the archive was made for");
        }
        Files.setLastModifiedTime(jar, java.nio.file.attribute.FileTime.from(java.time.Instant.parse("2020-01-01T00:00:00Z")));

        Cli.Result rejected = loggingClassLoads(installation, ownCache).run("key", "--dest", dest, "--file", content.toString());
        boolean mappedWhenRejected = loadedFromTheArchive("dev.oncegate.cli.Main");
        Path setAside = archive.resolveSibling(archive.getFileName() + ".rejected");
        boolean wasSetAside = Files.exists(setAside) && !Files.exists(archive);
        Cli.Result remade = plain.run("--version");
        Cli.Result keyed = loggingClassLoads(installation, ownCache).run("key", "--dest", dest, "--file", content.toString());

        assertThat(first.exit()).as(first.toString()).isZero();
        assertThat(rejected.exit()).as(rejected.toString()).isZero();
        assertThat(rejected.stdoutJson().get("key").asText()).isEqualTo(key.key());
        assertThat(stderrLines(rejected)).isEmpty();
        assertThat(mappedWhenRejected).isFalse();
        assertThat(wasSetAside).as("the archive, set aside as " + setAside).isTrue();
        assertThat(remade.exit()).as(remade.toString()).isZero();
        assertThat(archives(ownCache)).containsExactly(archive);
        assertThat(setAside).doesNotExist();
        assertThat(keyed.exit()).as(keyed.toString()).isZero();
        assertThat(loadedFromTheArchive("dev.oncegate.cli.Main")).isTrue();
    }

    @Test
    void cacheThatCannotBeWritten_neverFailsTheCommand_silently() throws Exception {
        Path notADirectory = Files.writeString(dir.resolve("not-a-directory"), "");

        Cli.Result keyed = launcher(copyOfTheInstallation("unwritable"),
                Map.of("XDG_CACHE_HOME", notADirectory.resolve("cache").toString()))
                .run("key", "--dest", dest, "--file", content.toString());

        assertThat(keyed.exit()).as(keyed.toString()).isZero();
        assertThat(keyed.stdoutJson().get("key").asText()).isEqualTo(key.key());
        assertThat(stderrLines(keyed)).isEmpty();
    }

    @Test
    void oncegateCds_makesTheArchiveAgain_andSaysWhere() throws Exception {
        Path installation = copyOfTheInstallation("moved");
        Path ownCache = dir.resolve("cache");

        // On a host whose fleet settings are in its environment: none of them is the archive's
        Path hostState = dir.resolve("host-state");
        Path hostTextfile = dir.resolve("host-metrics.prom");
        Map<String, String> host = Map.of("JAVA_HOME", javaHome, "XDG_STATE_HOME", hostState.toString(),
                "XDG_CACHE_HOME", ownCache.toString(), "ONCEGATE_METRICS_TEXTFILE", hostTextfile.toString(),
                "ONCEGATE_ZK_CLIENT_CONFIG", dir.resolve("tls-client.properties").toString());
        Cli.Result made = new Cli(dir, host, installation.resolve("bin/oncegate-cds")).run();
        Cli.Result keyed = loggingClassLoads(installation, ownCache).run("key", "--dest", dest, "--file", content.toString());

        assertThat(made.exit()).as(made.toString()).isZero();
        assertThat(hostState).as("the host's zxid marks").doesNotExist();
        assertThat(hostTextfile).as("the host's metrics textfile").doesNotExist();
        assertThat(made.stderr()).contains("made " + archives(ownCache).get(0) + " for " + installation.toRealPath());
        assertThat(keyed.exit()).as(keyed.toString()).isZero();
        assertThat(loadedFromTheArchive("dev.oncegate.cli.Main")).isTrue();
    }

    @Test
    void manPagesAndCompletion_coverEveryCommandAndOption() throws Exception {
        Path man = home.resolve("share/man/man1");
        String rootPage = Files.readString(man.resolve("oncegate.1"));
        String completion = Files.readString(home.resolve("share/bash-completion/completions/oncegate"));
        List<CommandLine> subcommands = Main.commandLine().getSubcommands().values().stream().distinct()
                .filter(sub -> !sub.getCommandSpec().usageMessage().hidden()).toList();

        Cli.Result generated = cli.run("generate-completion");

        assertThat(subcommands).extracting(CommandLine::getCommandName).contains("init", "key", "run", "inspect",
                "list", "authorize", "server", "demo", "generate-completion");
        for (CommandLine sub : subcommands) {
            String name = sub.getCommandName();
            Path page = man.resolve("oncegate-" + name + ".1");
            assertThat(page).as("man page of " + name).isRegularFile();
            String text = Files.readString(page);
            assertThat(text).contains(".SH SYNOPSIS", "oncegate " + DistributionDocs.escape(name));
            sub.getCommandSpec().options().stream().filter(option -> !option.hidden()).forEach(option ->
                    assertThat(text).as(name + " " + option.longestName()).contains(DistributionDocs.escape(option.longestName())));
            assertThat(rootPage).contains("\\fB" + DistributionDocs.escape(name) + "\\fR");
            assertThat(completion).contains(name);
        }
        assertThat(generated.exit()).as(generated.toString()).isZero();
        assertThat(generated.stdout()).isEqualToIgnoringNewLines(completion);
    }

    @Test
    void runnableJar_leavesOutJUnitGuavaOpenSslAndTestHelpers_andNothingItRefersTo() throws IOException {
        try (ZipFile jar = new ZipFile(home.resolve("lib/oncegate.jar").toFile())) {
            Set<String> entries = jar.stream().map(ZipEntry::getName).collect(Collectors.toSet());
            List<String> leftOut = new ArrayList<>();
            for (String entry : entries) {
                if (entry.endsWith(".class") && (entry.startsWith("dev/oncegate/") || entry.startsWith("org/apache/curator/test/"))) {
                    String bytes = new String(jar.getInputStream(jar.getEntry(entry)).readAllBytes(), StandardCharsets.ISO_8859_1);
                    Matcher reference = CLASS_REFERENCE.matcher(bytes);
                    while (reference.find()) {
                        boolean shaded = bytes.startsWith("shaded/", reference.start() - "shaded/".length());
                        if (!shaded && !entries.contains(reference.group() + ".class")) {
                            leftOut.add(entry + " -> " + reference.group());
                        }
                    }
                }
            }

            assertThat(leftOut).as("classes the jar refers to but leaves out (client/pom.xml's shade filters)").isEmpty();
            assertThat(entries).contains("dev/oncegate/cli/Main.class", "dev/oncegate/testing/ChaosRun.class",
                    "org/apache/curator/test/TestingCluster.class");
            assertThat(entries).noneMatch(n -> n.startsWith("org/junit/") || n.startsWith("com/google/common/")
                    || n.startsWith("dev/oncegate/bench/") || n.startsWith("dev/oncegate/testing/ZooKeeperExtension")
                    || n.startsWith("dev/oncegate/testing/CrossingInFlight") || n.contains("netty_tcnative"));
        }
    }

    /** The launcher of {@code installation}, with this JDK, the tests' cache directory and {@code env}. */
    private Cli launcher(Path installation, Map<String, String> env) {
        Map<String, String> all = new HashMap<>(Map.of("JAVA_HOME", javaHome, "XDG_CACHE_HOME", cache.toString()));
        all.putAll(env);
        return new Cli(dir, all, installation.resolve("bin/oncegate"));
    }

    /**
     * The launcher of {@code installation} with the cache directory {@code cacheHome}, its JVM
     * logging where each class came from into {@code dir/classes.log}.
     */
    private Cli loggingClassLoads(Path installation, Path cacheHome) {
        return launcher(installation, Map.of("XDG_CACHE_HOME", cacheHome.toString(),
                "ONCEGATE_JAVA_OPTS", "-Xlog:class+load=info:file=" + dir.resolve("classes.log")));
    }

    /** The archives in {@code cacheHome}'s oncegate directory. */
    private static List<Path> archives(Path cacheHome) throws IOException {
        try (var files = Files.list(cacheHome.resolve("oncegate"))) {
            return files.filter(f -> f.toString().endsWith(".jsa")).sorted().toList();
        }
    }

    /** stderr, line by line, less the JVM's echo of a JAVA_TOOL_OPTIONS that the tests themselves run with. */
    private static List<String> stderrLines(Cli.Result result) {
        return result.stderr().lines().filter(line -> !line.startsWith("Picked up JAVA_TOOL_OPTIONS")).toList();
    }

    private boolean loadedFromTheArchive(String className) throws IOException {
        return Files.readAllLines(dir.resolve("classes.log")).stream()
                .anyMatch(line -> line.contains(" " + className + " source: shared objects file"));
    }

    /** The launchers, the jar and the class list of the unpacked distribution, copied to {@code dir/NAME}. */
    private Path copyOfTheInstallation(String name) throws IOException {
        Path copy = dir.resolve(name);
        for (String file : List.of("bin/oncegate", "bin/oncegate-cds", "lib/oncegate.jar", "lib/oncegate.classlist",
                "lib/oncegate-quick.classlist")) {
            Files.createDirectories(copy.resolve(file).getParent());
            Files.copy(home.resolve(file), copy.resolve(file), StandardCopyOption.COPY_ATTRIBUTES);
        }
        return copy;
    }

    private static String property(String name) {
        String value = System.getProperty(name);
        if (value == null) {
            throw new IllegalStateException("system property " + name + " is not set: run the *IT tests with `mvn verify`");
        }
        return value;
    }
}
