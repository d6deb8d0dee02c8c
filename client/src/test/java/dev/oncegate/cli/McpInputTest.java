package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

/**
 * {@code oncegate mcp}'s stdin as the SDK reads it ({@link McpCommand.WithoutRootsChanges}): the
 * client's roots/list_changed notifications are left out, every other byte passes as it came.
 */
class McpInputTest {

    private static final String ROOTS = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/roots/list_changed\"}\n";

    private static String through(String input, int readSize) throws IOException {
        InputStream in = new McpCommand.WithoutRootsChanges(new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)),
                null);
        StringBuilder out = new StringBuilder();
        byte[] buffer = new byte[readSize];
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        for (int n = in.read(buffer, 0, buffer.length); n >= 0; n = in.read(buffer, 0, buffer.length)) {
            bytes.write(buffer, 0, n);
        }
        out.append(bytes.toString(StandardCharsets.UTF_8));
        return out.toString();
    }

    @Test
    void rootsListChanged_isLeftOut_andEverythingElsePassesAsItCame() throws IOException {
        String call = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"inspect_effect\"}}\n";
        String sameMethodWithAnId = "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"notifications/roots/list_changed\"}\n";
        String notJson = "notifications/roots/list_changed but not JSON\n";
        String longLine = "{\"x\":\"" + "é".repeat(5000) + "notifications/roots/list_changed\"}\n";
        String last = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"; // no newline at the end

        for (int readSize : new int[] {1, 7, 8192}) {
            String out = through(call + ROOTS + sameMethodWithAnId + ROOTS.replace("{", " {") + notJson + longLine + last,
                    readSize);

            assertThat(out).as("read %d bytes at a time", readSize)
                    .isEqualTo(call + sameMethodWithAnId + notJson + longLine + last);
        }
    }

    @Test
    void onlyNotifications_endInNothing() throws IOException {
        assertThat(through(ROOTS + ROOTS, 64)).isEmpty();
        assertThat(through("", 64)).isEmpty();
    }

    @Test
    void everyToolsCallLineHandedOn_isCounted_forTheSessionsEndToWaitFor() throws Exception {
        McpTools.Calls calls = new McpTools.Calls(reactor.core.scheduler.Schedulers.immediate());
        String call = "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"record_outcome\"}}\n";
        String other = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}\n";

        InputStream none = new McpCommand.WithoutRootsChanges(new ByteArrayInputStream((other + ROOTS)
                .getBytes(StandardCharsets.UTF_8)), calls);
        none.readAllBytes();
        assertThat(calls.awaitReceived(java.time.Duration.ZERO)).as("no call handed on").isTrue();

        InputStream one = new McpCommand.WithoutRootsChanges(new ByteArrayInputStream((other + call)
                .getBytes(StandardCharsets.UTF_8)), calls);
        one.readAllBytes();
        assertThat(calls.awaitReceived(java.time.Duration.ofMillis(50))).as("a call handed on, not yet dispatched")
                .isFalse();
    }
}
