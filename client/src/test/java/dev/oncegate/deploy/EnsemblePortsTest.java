package dev.oncegate.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/ensemble.sh's port offsets: any two it accepts give two ensembles no port in common, and
 * one that could collide with another (31000 beside 32000: one's election port is the other's
 * quorum port) is refused with a message that says why, before anything starts.
 */
class EnsemblePortsTest {

    @TempDir
    Path dir;

    record Result(int exit, String output) {
    }

    private Result ensemble(String offset, String command) throws Exception {
        Path out = dir.resolve("out-" + offset + "-" + command);
        ProcessBuilder builder = new ProcessBuilder("bash", RepoFiles.path("deploy/ensemble.sh").toString(), command)
                .redirectErrorStream(true).redirectOutput(out.toFile());
        builder.environment().put("ONCEGATE_ENSEMBLE_PORT_OFFSET", offset);
        builder.environment().put("ONCEGATE_ENSEMBLE_DIR", dir.resolve("ensemble").toString());
        Process p = builder.start();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
    }

    @Test
    void everyTwoAcceptedOffsets_shareNoPort() throws Exception {
        List<Set<Integer>> ensembles = new ArrayList<>();
        for (int offset = 0; offset <= 55_000; offset += 5_000) {
            Result ports = ensemble(Integer.toString(offset), "ports");
            assertThat(ports.exit()).as(ports.output()).isZero();
            Set<Integer> set = new HashSet<>();
            ports.output().lines().forEach(l -> set.add(Integer.parseInt(l.strip())));
            assertThat(set).as("offset " + offset).hasSize(12).allMatch(p -> p > 0 && p < 65_536);
            for (Set<Integer> other : ensembles) {
                assertThat(set).as("offset " + offset).doesNotContainAnyElementsOf(other);
            }
            ensembles.add(set);
        }
        assertThat(ensemble("0", "ports").output().lines().toList()).contains("2181", "2888", "3890");
    }

    @Test
    void offsetsThatCouldCollide_areRefused_beforeAnythingStarts() throws Exception {
        for (String offset : List.of("31000", "32000", "1", "60000")) {
            Result start = ensemble(offset, "start");

            assertThat(start.exit()).as(start.output()).isEqualTo(2);
            assertThat(start.output()).contains("must be a multiple of 5000 from 0 to 55000, got " + offset)
                    .contains("election port the other's quorum port");
            assertThat(dir.resolve("ensemble")).doesNotExist();
        }
    }
}
