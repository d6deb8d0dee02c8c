package dev.oncegate.cli;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import dev.oncegate.ActionResult;
import dev.oncegate.Attempt;
import dev.oncegate.Decision;
import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.testing.EmbeddedZooKeeper;
import org.apache.curator.framework.CuratorFramework;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A worker process for {@link GateLogLinesTest}: two gates of one process on a namespace without
 * ACLs, one delivering (its action logs a line of its own), one stopped, one attempt left
 * before crossing. Arguments: connect string, namespace, a unique text for the keys. Logs on
 * stderr through the CLI's logging backend; prints the two keys on stdout.
 */
final class LoggingProbe {

    private static final Logger USER = LoggerFactory.getLogger("user.Upload");

    private LoggingProbe() {
    }

    public static void main(String[] args) throws Exception {
        String connect = args[0];
        String namespace = args[1];
        EffectKey delivered = EffectKey.of(Destination.stable("slack", "C-" + args[2]),
                "report".getBytes(StandardCharsets.UTF_8));
        EffectKey left = EffectKey.of(Destination.stable("slack", "C-" + args[2]),
                "draft".getBytes(StandardCharsets.UTF_8));
        try (CuratorFramework clientA = EmbeddedZooKeeper.newClient(connect, Duration.ofSeconds(10));
             CuratorFramework clientB = EmbeddedZooKeeper.newClient(connect, Duration.ofSeconds(10));
             Gate a = Gate.builder(clientA).namespace(namespace).taskId("task-a").build();
             Gate b = Gate.builder(clientB).namespace(namespace).taskId("task-b").build()) {
            try (Attempt attempt = a.enter(delivered)) {
                require(attempt.decision() instanceof Decision.Proceed, attempt.decision());
                attempt.cross(ctx -> {
                    USER.info("user line inside the action, idempotency key {}", ctx.idempotencyKey());
                    return ActionResult.verified("msg-1");
                });
            }
            try (Attempt attempt = b.enter(delivered)) {
                require(attempt.decision() instanceof Decision.StopSent, attempt.decision());
            }
            try (Attempt attempt = a.enter(left)) {
                require(attempt.decision() instanceof Decision.Proceed, attempt.decision());
                // left without crossing: the lease is released on close
            }
        }
        System.out.println(delivered.key() + " " + left.key());
    }

    private static void require(boolean condition, Decision decision) {
        if (!condition) {
            throw new IllegalStateException("unexpected decision " + decision);
        }
    }
}
