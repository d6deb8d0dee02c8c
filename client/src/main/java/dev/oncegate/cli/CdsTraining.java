package dev.oncegate.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import dev.oncegate.testing.EmbeddedZooKeeper;

/**
 * The workload recorded in the distribution's class-data sharing archive. {@code bin/oncegate-cds}
 * runs it once under {@code -XX:ArchiveClassesAtExit}, so that the classes the common commands
 * load are mapped from {@code lib/oncegate.jsa} at every later start instead of being read,
 * parsed and verified from the jar. Not a subcommand.
 *
 * <p>In this one JVM, against an embedded ZooKeeper that it starts and removes, with a state
 * directory of its own (the host's zxid marks are not touched), it runs what
 * workers and operators run most: {@code key}, {@code init}, {@code run} (proceeding, then
 * stopped on the consumed key), {@code inspect}, {@code list} and the usage help. It exits 1
 * when a command does not end as expected, so that a change that breaks the workload fails the
 * build instead of silently shrinking the archive.
 */
public final class CdsTraining {

    private CdsTraining() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length == 1 && args[0].equals("quick")) {
            System.exit(quick());
        }
        Main.configureLogging(args);
        Path dir = Files.createTempDirectory("oncegate-cds-");
        List<String> failures = new ArrayList<>();
        try (EmbeddedZooKeeper zk = EmbeddedZooKeeper.start()) {
            Path file = Files.writeString(dir.resolve("report.txt"), "oncegate class-data sharing workload\n",
                    StandardCharsets.UTF_8);
            String[] connect = {"--connect", zk.connectString(), "--state-dir", dir.resolve("state").toString()};
            String[] effect = {"--dest", "cds:workload", "--file", file.toString()};
            expect(failures, ExitCode.OK, join(List.of("key"), effect));
            expect(failures, ExitCode.OK, join(List.of("init"), connect));
            expect(failures, ExitCode.SENT_VERIFIED, join(List.of("run"), connect, effect, new String[] {"--", "true"}));
            expect(failures, ExitCode.STOP_SENT, join(List.of("run"), connect, effect, new String[] {"--", "true"}));
            expect(failures, ExitCode.OK, join(List.of("inspect"), connect, effect));
            expect(failures, ExitCode.OK, join(List.of("list"), connect));
            expect(failures, ExitCode.OK, "--help");
            expect(failures, ExitCode.OK, "run", "--help");
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(f);
                }
            }
        }
        if (!failures.isEmpty()) {
            System.err.println("oncegate CDS workload: " + String.join("; ", failures));
            System.exit(1);
        }
        System.exit(0);
    }

    /**
     * The quick workload: {@code --version} and a plain {@code key}, the commands answered without
     * picocli or ZooKeeper ({@link QuickCommands}). Its archive holds a fifth of the classes of the
     * full one, and the JVM maps an archive at an address of its own choosing (it relocates every
     * pointer in it): a smaller archive starts these commands about 15 ms sooner.
     */
    private static int quick() throws IOException {
        Path dir = Files.createTempDirectory("oncegate-cds-");
        List<String> failures = new ArrayList<>();
        try {
            Path file = Files.writeString(dir.resolve("report.txt"), "oncegate class-data sharing workload\n",
                    StandardCharsets.UTF_8);
            expect(failures, ExitCode.OK, "--version");
            expect(failures, ExitCode.OK, "key", "--dest", "cds:workload", "--file", file.toString());
            expect(failures, ExitCode.OK, "key", "--dest-name=cds:Workload", "--file=" + file, "--namespace", "/oncegate");
        } finally {
            Files.deleteIfExists(dir.resolve("report.txt"));
            Files.delete(dir);
        }
        if (!failures.isEmpty()) {
            System.err.println("oncegate CDS quick workload: " + String.join("; ", failures));
            return 1;
        }
        return 0;
    }

    private static void expect(List<String> failures, int exit, String... args) {
        int actual = Main.run(args); // as main runs it: logging, the arguments' text, the command
        ClassDataArchive.setAsideIfRejected();
        if (actual != exit) {
            failures.add("`oncegate " + String.join(" ", args) + "` exited " + actual + ", expected " + exit);
        }
    }

    private static String[] join(List<String> first, String[]... rest) {
        List<String> all = new ArrayList<>(first);
        for (String[] part : rest) {
            all.addAll(List.of(part));
        }
        return all.toArray(String[]::new);
    }
}
