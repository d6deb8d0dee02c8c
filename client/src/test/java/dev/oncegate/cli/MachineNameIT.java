package dev.oncegate.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The machine's name in the records: {@code --host} or {@code ONCEGATE_HOST} when given; else
 * the local host name, which when it does not resolve (no DNS or /etc/hosts entry: a JVM whose
 * hosts file is empty here) is taken as the kernel has it, instead of failing with a stack trace
 * that tells the user to call a builder method.
 */
class MachineNameIT extends CliFixture {

    @Test
    void unresolvableLocalName_runDelivers_recordingTheKernelsName() throws Exception {
        Path emptyHosts = Files.writeString(dir.resolve("hosts"), "");
        cli = new Cli(dir, Map.of("JAVA_TOOL_OPTIONS", "-Djdk.net.hosts.file=" + emptyHosts));
        String kernelName = Files.readString(Path.of("/proc/sys/kernel/hostname")).strip();

        Cli.Result result = run(LEDGER_LINE);

        assertThat(result.exit()).as(result.toString()).isEqualTo(ExitCode.SENT_VERIFIED);
        assertThat(result.stderr()).doesNotContain("Exception", "Builder.host()");
        assertThat(armedBy().get("host").asText()).isEqualTo(kernelName);
        assertThat(ledgerLines()).hasSize(1);
    }

    @Test
    void hostOption_andVariable_nameTheMachine_andTheDefaultTaskId() throws Exception {
        Cli.Result byOption = run(LEDGER_LINE, "--host", "worker-7.example");
        JsonNode armed = armedBy();
        cli = new Cli(dir, Map.of("ONCEGATE_HOST", "worker-8.example"));
        Cli.Result inspected = cli.run("inspect", "--connect", zk.connectString(), "--key", key.key());

        assertThat(byOption.exit()).as(byOption.toString()).isEqualTo(ExitCode.SENT_VERIFIED);
        assertThat(armed.get("host").asText()).isEqualTo("worker-7.example");
        assertThat(armed.get("task").asText()).startsWith("worker-7.example:");
        assertThat(inspected.exit()).as(inspected.toString()).isZero();
    }

    /** Who armed scope 0, as inspect prints it. */
    private JsonNode armedBy() {
        Cli.Result inspected = new Cli(dir, Map.of()).run("inspect", "--connect", zk.connectString(), "--key", key.key());
        assertThat(inspected.exit()).as(inspected.toString()).isZero();
        return inspected.stdoutJson().get("scopes").get(0).get("armed").get("by");
    }
}
