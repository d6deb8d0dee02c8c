package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A gate's attempts, one decision after another, against a real server (the coordinator's own view
 * of the scenarios the testing module runs at length): who proceeds, in which scope and with which
 * token, what the action is told, what each outcome records and what the next contender then
 * decides, with its evidence. Every action counts its invocations: a test asserts how many
 * deliveries happened, never only that nothing threw. The gates share one meter registry: what the
 * metrics say of each decision is checked beside it.
 */
class AttemptDecidesOnARealServerTest extends OneServerPerClass {

    String ns;
    EffectKey key;
    String keyPath;
    final List<Gate> gates = new ArrayList<>();
    /** How many times any action of this test was invoked. */
    final AtomicInteger deliveries = new AtomicInteger();
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @BeforeEach
    void freshNamespaceAndKey() throws Exception {
        ns = "/attempts-" + UUID.randomUUID();
        Gate.initialize(client, ns);
        key = EffectKey.of(Destination.stable("slack", "C1"), UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8));
        keyPath = Layout.keyPath(ns, key.key());
    }

    @AfterEach
    void closeGates() {
        gates.forEach(Gate::close);
    }

    Gate gate(String task) {
        return gate(Gate.builder(client).namespace(ns).taskId(task).meterRegistry(registry));
    }

    /** The sum of the counters {@code name} with {@code tags} (key, value, …) across this test's gates. */
    double count(String name, String... tags) {
        return registry.find(name).tags(tags).counters().stream().mapToDouble(Counter::count).sum();
    }

    /** Executors active now, across this test's gates. */
    double active() {
        return registry.find(GateMetrics.ACTIVE).gauges().stream().mapToDouble(Gauge::value).sum();
    }

    Gate gate(Gate.Builder builder) {
        Gate g = builder.build();
        gates.add(g);
        return g;
    }

    BoundaryAction delivers(String receipt, AtomicReference<BoundaryAction.Context> told) {
        return ctx -> {
            deliveries.incrementAndGet();
            told.set(ctx);
            return ActionResult.verified(receipt);
        };
    }

    BoundaryAction provesNotSent(String evidence) {
        return ctx -> {
            deliveries.incrementAndGet();
            throw new ProvenNotSentException(evidence);
        };
    }

    Stat stat(String path) throws Exception {
        return client.checkExists().forPath(path);
    }

    static Decision.Stop stopOf(Attempt a) {
        assertThat(a.decision()).as("decision").isInstanceOf(Decision.Stop.class);
        return (Decision.Stop) a.decision();
    }

    @Test
    void freshKey_proceedsInScopeZero_withTheLeaseVersionAsToken_crossesVerified_andALateContenderStopsSent()
            throws Exception {
        AtomicReference<BoundaryAction.Context> told = new AtomicReference<>();
        try (Attempt a = gate("a").enter(key)) {
            // Given the first contender of a new key
            Decision.Proceed proceed = (Decision.Proceed) a.decision();
            String scope0 = Layout.scope(keyPath, 0);
            assertThat(proceed.scope()).isZero();
            assertThat(proceed.token()).isEqualTo(new FencingToken(stat(scope0).getVersion(), stat(scope0).getMzxid()));

            assertThat(active()).isEqualTo(1);

            // When it passes a checkpoint and crosses
            Decision.Proceed renewed = (Decision.Proceed) a.checkpoint("picker-open");
            assertThat(renewed.token().version()).isEqualTo(proceed.token().version() + 1);
            Crossing crossing = a.cross(delivers("receipt-1", told));

            // Then it delivered once, told the action its scope, token and the key's incarnation, and recorded it
            assertThat(crossing).isEqualTo(new Crossing.Crossed(Outcome.SENT_VERIFIED, 0, renewed.token(), "receipt-1", true));
            assertThat(told.get().scope()).isZero();
            assertThat(told.get().token()).isEqualTo(renewed.token());
            assertThat(told.get().keyZxid()).isEqualTo(stat(keyPath).getCzxid());
            Records.ArmedData armed = Records.decodeArmed("armed", client.getData().forPath(Layout.armed(scope0)));
            assertThat(armed.armed().checkpoints()).containsExactly("picker-open");
            assertThat(armed.armed().token()).isEqualTo(renewed.token());
            assertThat(armed.armed().by().task()).isEqualTo("a");
            assertThat(active()).isZero();
            assertThat(count(GateMetrics.OUTCOMES, "outcome", "sent_verified", "recorded", "true")).isEqualTo(1);
            assertThat(registry.find(GateMetrics.BOUNDARY).tag("outcome", "sent_verified").timer().count()).isEqualTo(1);
        }
        // and a late contender stops: consumed, verified, on the outcome record
        try (Attempt late = gate("b").enter(key)) {
            Decision.Stop stop = stopOf(late);
            assertThat(stop).isInstanceOf(Decision.StopSent.class);
            assertThat(stop.evidence().path()).isEqualTo(Layout.outcome(Layout.scope(keyPath, 0)));
            assertThat(stop.evidence().task()).isEqualTo("a");
            assertThat(stop.evidence().detail()).contains("receipt-1");
        }
        assertThat(deliveries).hasValue(1);
    }

    @Test
    void provenNotSent_opensScopeOne_whereTheNextContenderProceedsAndDelivers() throws Exception {
        AtomicReference<BoundaryAction.Context> told = new AtomicReference<>();
        try (Attempt a = gate("a").enter(key)) {
            Crossing crossing = a.cross(provesNotSent("quota exceeded, nothing sent"));
            assertThat(crossing).isInstanceOfSatisfying(Crossing.Crossed.class, c -> {
                assertThat(c.outcome()).isEqualTo(Outcome.NOT_SENT);
                assertThat(c.detail()).isEqualTo("quota exceeded, nothing sent");
                assertThat(c.recorded()).isTrue();
            });
        }
        assertThat(stat(Layout.scope(keyPath, 1))).as("scope 1, opened with the not_sent").isNotNull();

        try (Attempt b = gate("b").enter(key)) {
            assertThat(b.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isEqualTo(1));
            assertThat(b.cross(delivers("receipt-2", told))).isInstanceOfSatisfying(Crossing.Crossed.class,
                    c -> assertThat(c.scope()).isEqualTo(1));
        }
        assertThat(told.get().scope()).isEqualTo(1);
        assertThat(told.get().keyZxid()).isEqualTo(stat(keyPath).getCzxid());
        try (Attempt c = gate("c").enter(key)) {
            assertThat(stopOf(c)).isInstanceOf(Decision.StopSent.class);
            assertThat(stopOf(c).evidence().scope()).isEqualTo(1);
        }
        assertThat(deliveries).hasValue(2);
    }

    @Test
    void unconfirmedFailedOrNullResults_recordUnknown_andConsumeTheKey() throws Exception {
        List<BoundaryAction> actions = List.of(
                ctx -> {
                    deliveries.incrementAndGet();
                    return ActionResult.unconfirmed("timeout after send");
                },
                ctx -> {
                    deliveries.incrementAndGet();
                    throw new IllegalStateException("socket closed");
                },
                ctx -> {
                    deliveries.incrementAndGet();
                    return null;
                });
        List<String> details = List.of("timeout after send", "the action failed: java.lang.IllegalStateException: socket closed",
                "the action returned null instead of an ActionResult");
        for (int i = 0; i < actions.size(); i++) {
            EffectKey k = EffectKey.of(Destination.stable("slack", "C" + i), ("unknown " + i).getBytes(StandardCharsets.UTF_8));
            try (Attempt a = gate("a" + i).enter(k)) {
                assertThat(a.cross(actions.get(i))).isInstanceOfSatisfying(Crossing.Crossed.class, c -> {
                    assertThat(c.outcome()).isEqualTo(Outcome.SEND_STATUS_UNKNOWN);
                    assertThat(c.recorded()).isTrue();
                });
            }
            try (Attempt late = gate("late" + i).enter(k)) {
                assertThat(stopOf(late)).isInstanceOf(Decision.StopUnknown.class);
                assertThat(stopOf(late).evidence().detail()).contains(details.get(i));
            }
        }
        assertThat(deliveries).hasValue(3);
        assertThat(count(GateMetrics.OUTCOMES, "outcome", "send_status_unknown", "recorded", "true")).isEqualTo(3);
    }

    @Test
    void executorActive_aContenderThatWillNotWaitStopsBusy_oneThatWaitsGetsTheExecutorsFinalDecision() throws Exception {
        AtomicReference<BoundaryAction.Context> told = new AtomicReference<>();
        try (Attempt a = gate("a").enter(key)) {
            assertThat(a.decision()).isInstanceOf(Decision.Proceed.class);
            // Given A holds the lease: B, not waiting, stops busy on A's lease
            try (Attempt b = gate("b").enter(key)) {
                assertThat(stopOf(b)).isInstanceOf(Decision.StopBusy.class);
                assertThat(stopOf(b).evidence().task()).isEqualTo("a");
            }
            // When C waits, and A then proves not_sent
            Gate c = gate("c");
            CompletableFuture<Attempt> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return c.enter(key, Duration.ofSeconds(30));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            });
            org.awaitility.Awaitility.await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(5))
                    .until(() -> !waiting.isDone());
            a.cross(provesNotSent("never sent"));
            // Then C proceeds in scope 1, which A's not_sent opened, and delivers there
            try (Attempt waited = waiting.get(30, TimeUnit.SECONDS)) {
                assertThat(waited.decision()).isInstanceOfSatisfying(Decision.Proceed.class,
                        p -> assertThat(p.scope()).isEqualTo(1));
                assertThat(waited.cross(delivers("receipt-c", told))).isInstanceOf(Crossing.Crossed.class);
            }
        }
        assertThat(told.get().scope()).isEqualTo(1);
        assertThat(deliveries).hasValue(2);
    }

    @Test
    void redeliveryAuthorized_afterAnUnknownScope_opensScopeOneForOneExecutor_andIsUsedOnce() throws Exception {
        AtomicReference<BoundaryAction.Context> told = new AtomicReference<>();
        try (Attempt a = gate("a").enter(key)) {
            a.cross(ctx -> {
                deliveries.incrementAndGet();
                return ActionResult.unconfirmed("no receipt");
            });
        }
        Gate operatorGate = gate("ops");
        Operator.Authorized authorized = operatorGate.operator().authorize(key.key(), 0, "alice", "the customer lost it");
        assertThat(authorized.created()).isTrue();

        try (Attempt b = gate("b").enter(key)) {
            assertThat(b.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isEqualTo(1));
            assertThat(Records.decodeScope("scope", client.getData().forPath(Layout.scope(keyPath, 1))).opened())
                    .isEqualTo("after-0");
            b.checkpoint("resend");
            b.cross(delivers("receipt-2", told));
        }
        assertThat(told.get().scope()).isEqualTo(1);
        try (Attempt c = gate("c").enter(key)) {
            assertThat(stopOf(c)).isInstanceOf(Decision.StopSent.class);
            assertThat(stopOf(c).evidence().scope()).isEqualTo(1);
        }
        assertThat(stat(Layout.scope(keyPath, 2))).isNull();
        assertThat(deliveries).hasValue(2);
    }

    @Test
    void leaseWrittenByAnotherSinceTheDecision_theCheckpointStopsFenced_andCrossInvokesNothing() throws Exception {
        try (Attempt a = gate("a").enter(key)) {
            assertThat(a.decision()).isInstanceOf(Decision.Proceed.class);
            // Given someone wrote scope 0 since A took its lease (a takeover: the version moved)
            String scope0 = Layout.scope(keyPath, 0);
            client.setData().forPath(scope0, client.getData().forPath(scope0));

            // When A reaches a checkpoint, Then it stops, fenced (the scope is open again: busy), and can cross nothing
            Decision d = a.checkpoint("picker-open");
            assertThat(d).isInstanceOf(Decision.StopBusy.class);
            assertThat(((Decision.Stop) d).reason()).isEqualTo(StopReason.FENCED);
            assertThat(((Decision.Stop) d).evidence().detail()).contains("fenced during checkpoint picker-open");
            assertThat(a.checkpoint("again")).isSameAs(d);
            assertThat(count(GateMetrics.FENCED, "operation", "checkpoint")).isEqualTo(1);
            assertThat(active()).isZero();
            assertThatThrownBy(() -> a.cross(delivers("never", new AtomicReference<>())))
                    .isInstanceOf(IllegalStateException.class);
        }
        assertThat(stat(Layout.armed(Layout.scope(keyPath, 0)))).isNull();
        assertThat(deliveries).hasValue(0);
    }

    @Test
    void leaseWrittenByAnotherBeforeArming_theCrossingIsRefusedFenced_andTheActionNeverRuns() throws Exception {
        try (Attempt a = gate("a").enter(key)) {
            String scope0 = Layout.scope(keyPath, 0);
            client.setData().forPath(scope0, client.getData().forPath(scope0));

            Crossing crossing = a.cross(delivers("never", new AtomicReference<>()));

            assertThat(crossing).isInstanceOfSatisfying(Crossing.Refused.class, r -> {
                assertThat(r.stop().reason()).isEqualTo(StopReason.FENCED);
                assertThat(r.stop().evidence().path()).isEqualTo(scope0);
            });
            assertThat(a.decision()).isSameAs(((Crossing.Refused) crossing).stop());
            assertThat(count(GateMetrics.FENCED, "operation", "arm")).isEqualTo(1);
            assertThat(active()).isZero();
        }
        assertThat(stat(Layout.armed(Layout.scope(keyPath, 0)))).isNull();
        assertThat(deliveries).hasValue(0);
    }

    @Test
    void forgedArmedRecord_beforeTheExecutorArms_refusesItsArming_andNobodyProceedsAfterwards() throws Exception {
        String armed = Layout.armed(Layout.scope(keyPath, 0));
        try (Attempt a = gate("a").enter(key)) {
            // Given a worker credential created scope 0's armed record by hand
            client.create().forPath(armed, "forged".getBytes(StandardCharsets.UTF_8));

            Crossing crossing = a.cross(delivers("never", new AtomicReference<>()));

            // Then the arming meets it (the create barrier), and what superseded A cannot be read: fail closed on it
            assertThat(crossing).isInstanceOfSatisfying(Crossing.Refused.class, r -> {
                assertThat(r.stop().reason()).isEqualTo(StopReason.UNREADABLE_RECORD);
                assertThat(r.stop().evidence().path()).isEqualTo(armed);
            });
            assertThat(count(GateMetrics.FENCED, "operation", "arm")).isEqualTo(1);
        }
        try (Attempt b = gate("b").enter(key)) {
            assertThat(stopOf(b)).isInstanceOf(Decision.StopUnavailable.class);
            assertThat(stopOf(b).reason()).isEqualTo(StopReason.UNREADABLE_RECORD);
        }
        assertThat(deliveries).hasValue(0);
    }

    @Test
    void interruptedBeforeArming_nothingIsArmed_theLeaseIsReleased_andTheNextContenderProceedsInScopeZero()
            throws Exception {
        try (Attempt a = gate("a").enter(key)) {
            Thread.currentThread().interrupt();
            assertThatThrownBy(() -> a.cross(delivers("never", new AtomicReference<>())))
                    .isInstanceOf(InterruptedException.class).hasMessageContaining("nothing was armed");
            assertThat(Thread.interrupted()).as("the interrupt flag is restored").isTrue();
            assertThat(stopOf(a).reason()).isEqualTo(StopReason.INTERRUPTED);
        }
        try (Attempt b = gate("b").enter(key)) {
            assertThat(b.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isZero());
        }
        assertThat(deliveries).hasValue(0);
    }

    @Test
    void leaseLandingBelowAZxidTheWitnessSawAlready_stopsRolledBack_beforeAnythingIsArmed() throws Exception {
        // Given a witness that saw this namespace far ahead of where the ensemble is (a restore from an old snapshot)
        ZxidMarks marks = ZxidMarks.inMemory();
        String genesisId = Records.decodeGenesis("genesis", client.getData().forPath(Layout.genesis(ns))).id();
        marks.observe(ns, genesisId, 1L << 40);

        try (Attempt a = gate(Gate.builder(client).namespace(ns).taskId("a").zxidMarks(marks)).enter(key)) {
            Decision.Stop stop = stopOf(a);
            assertThat(stop.reason()).isEqualTo(StopReason.ZOOKEEPER_ROLLED_BACK);
            assertThat(stop.evidence().detail()).contains("was already seen");
        }
        assertThat(Records.decodeScope("scope", client.getData().forPath(Layout.scope(keyPath, 0))).lease())
                .as("the lease was released").isNull();
    }

    @Test
    void holderWhoseLeaseLapsed_isTakenOverByTheNextContender_andCanNoLongerArm() throws Exception {
        AtomicReference<BoundaryAction.Context> told = new AtomicReference<>();
        try (Attempt a = gate("a").enter(key)) {
            Decision.Proceed aProceeds = (Decision.Proceed) a.decision();
            // Given A hangs after its decision; B's clock is past A's lease (30 s)
            Gate late = gate(Gate.builder(client).namespace(ns).taskId("b").meterRegistry(registry)
                    .clock(java.time.Clock.offset(java.time.Clock.systemUTC(), Duration.ofMinutes(5))));

            // When B enters, Then it takes the lapsed lease over, fencing A, and delivers
            try (Attempt b = late.enter(key, Duration.ofSeconds(20))) {
                Decision.Proceed bProceeds = (Decision.Proceed) b.decision();
                assertThat(bProceeds.scope()).isZero();
                assertThat(bProceeds.token().version()).isGreaterThan(aProceeds.token().version());
                KeyHistory.Lease lease = Records.decodeScope("scope", client.getData().forPath(Layout.scope(keyPath, 0))).lease();
                assertThat(lease.holder().task()).isEqualTo("b");
                assertThat(lease.takeover().cause()).isEqualTo("lapsed");
                assertThat(lease.takeover().from().task()).isEqualTo("a");
                assertThat(count(GateMetrics.TAKEOVERS, "cause", "lapsed")).isEqualTo(1);

                assertThat(a.cross(delivers("too late", new AtomicReference<>()))).isInstanceOf(Crossing.Refused.class);
                assertThat(b.cross(delivers("receipt-b", told))).isInstanceOf(Crossing.Crossed.class);
            }
        }
        assertThat(told.get().token().version()).isGreaterThan(1);
        assertThat(deliveries).hasValue(1);
    }

    @Test
    void checkpointNames_upToTheLimit_pass_andAfterTheCrossingACheckpointIsMisuse() throws Exception {
        try (Attempt a = gate("a").enter(key)) {
            assertThat(a.checkpoint("x".repeat(128))).isInstanceOf(Decision.Proceed.class);
            assertThatThrownBy(() -> a.checkpoint("x".repeat(129))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("name:");
            a.cross(delivers("receipt", new AtomicReference<>()));
            assertThatThrownBy(() -> a.checkpoint("late")).isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("checkpoint: this attempt is done");
        }
        assertThat(deliveries).hasValue(1);
    }

    @Test
    void gateClosedBeforeTheCrossing_refusesIt_andTheActionNeverRuns() throws Exception {
        Gate g = gate("a");
        try (Attempt a = g.enter(key)) {
            g.close();

            assertThat(a.cross(delivers("never", new AtomicReference<>()))).isInstanceOfSatisfying(Crossing.Refused.class,
                    r -> assertThat(r.stop().reason()).isEqualTo(StopReason.CONNECTION_LOST));
        }
        assertThat(deliveries).hasValue(0);
    }

    @Test
    void actionThatInterruptsItsThread_isRecorded_andTheInterruptIsKeptForTheCaller() throws Exception {
        try (Attempt a = gate("a").enter(key)) {
            Crossing crossing = a.cross(ctx -> {
                deliveries.incrementAndGet();
                Thread.currentThread().interrupt();
                return ActionResult.verified("receipt");
            });

            assertThat(Thread.interrupted()).as("the interrupt is the caller's to see").isTrue();
            assertThat(crossing).isInstanceOfSatisfying(Crossing.Crossed.class, c -> assertThat(c.recorded()).isTrue());
        }
        assertThat(deliveries).hasValue(1);
    }

    @Test
    void outcomeAfterAnOperatorReconciledTheArmedScope_isNotRecorded_andCountsAsFenced() throws Exception {
        Operator operator = Operator.builder(client).namespace(ns).build();
        try (Attempt a = gate("a").enter(key)) {
            // Given an operator reconciles the armed scope as delivered while the action runs
            Crossing crossing = a.cross(ctx -> {
                deliveries.incrementAndGet();
                operator.reconcile(key.key(), "alice", "seen in the channel");
                return ActionResult.verified("receipt");
            });

            // Then the executor's outcome finds the reconciliation's and is not written
            assertThat(crossing).isInstanceOfSatisfying(Crossing.Crossed.class, c -> assertThat(c.recorded()).isFalse());
            assertThat(count(GateMetrics.FENCED, "operation", "outcome")).isEqualTo(1);
            assertThat(count(GateMetrics.OUTCOMES, "outcome", "sent_verified", "recorded", "false")).isEqualTo(1);
        }
        assertThat(deliveries).hasValue(1);
    }

    @Test
    void attemptThatStopsOrEnds_releasesItsLeaseAndLeavesTheElection() throws Exception {
        String scope0 = Layout.scope(keyPath, 0);
        try (Attempt a = gate("a").enter(key)) {
            Thread.currentThread().interrupt();
            assertThatThrownBy(() -> a.cross(delivers("never", new AtomicReference<>()))).isInstanceOf(InterruptedException.class);
            Thread.interrupted();
            // stopped before arming: its lease is released and its election node gone, before close
            assertThat(Records.decodeScope("scope", client.getData().forPath(scope0)).lease()).isNull();
            awaitNoElectionNode(scope0);
        }
        try (Attempt b = gate("b").enter(key)) {
            b.cross(delivers("receipt", new AtomicReference<>()));
            // done: its election node goes before close (a latch leaves in the background)
            awaitNoElectionNode(scope0);
        }
        try (Attempt c = gate("c").enter(key)) {
            // stopped (consumed): it left the election
            assertThat(stopOf(c)).isInstanceOf(Decision.StopSent.class);
            awaitNoElectionNode(scope0);
        }
        assertThat(deliveries).hasValue(1);
    }

    @Test
    void executorStoppedAfterAnotherWroteItsScope_releasesNothing_andCountsTheReleaseFenced() throws Exception {
        String scope0 = Layout.scope(keyPath, 0);
        try (Attempt a = gate("a").enter(key)) {
            // Given someone wrote scope 0 since A took its lease (a takeover: the version moved)
            client.setData().forPath(scope0, client.getData().forPath(scope0));
            int moved = stat(scope0).getVersion();

            // When A stops before arming (interrupted), Then its release CAS misses, is counted fenced, writes nothing
            Thread.currentThread().interrupt();
            assertThatThrownBy(() -> a.cross(delivers("never", new AtomicReference<>()))).isInstanceOf(InterruptedException.class);
            assertThat(Thread.interrupted()).isTrue();
            assertThat(count(GateMetrics.FENCED, "operation", "release")).isEqualTo(1);
            assertThat(stat(scope0).getVersion()).as("the other writer's scope, untouched").isEqualTo(moved);
        }
        assertThat(stat(Layout.armed(scope0))).isNull();
        assertThat(deliveries).hasValue(0);
    }

    @Test
    void markFile_holdsEachZxidTheExecutorReachedBeforeItsNextStep() throws Exception {
        // Given a gate whose rollback witness is this host's marks file
        java.nio.file.Path file = serverDir.resolve("marks-" + UUID.randomUUID() + ".json");
        ZxidMarks marks = ZxidMarks.file(file, "test");
        String scope0 = Layout.scope(keyPath, 0);
        AtomicReference<Long> onFileWhileCrossing = new AtomicReference<>();
        try (Attempt a = gate(Gate.builder(client).namespace(ns).taskId("a").zxidMarks(marks)).enter(key)) {
            // Then after the lease, after a checkpoint, before the action and after the crossing, the file has the zxid
            assertThat(onFile(file)).isGreaterThanOrEqualTo(((Decision.Proceed) a.decision()).token().zxid());
            Decision.Proceed renewed = (Decision.Proceed) a.checkpoint("picker-open");
            assertThat(onFile(file)).isGreaterThanOrEqualTo(renewed.token().zxid());
            a.cross(ctx -> {
                deliveries.incrementAndGet();
                onFileWhileCrossing.set(onFile(file));
                return ActionResult.verified("receipt");
            });
        }
        assertThat(onFileWhileCrossing.get()).as("the arming's zxid, before the action")
                .isGreaterThanOrEqualTo(client.checkExists().forPath(Layout.armed(scope0)).getCzxid());
        assertThat(onFile(file)).as("the outcome's zxid, before cross returned")
                .isGreaterThanOrEqualTo(client.checkExists().forPath(Layout.outcome(scope0)).getMzxid());
        assertThat(deliveries).hasValue(1);
    }

    @Test
    void keyDeletedWhileTheActionRuns_theOutcomeIsNotRecorded_andCountsAsFenced() throws Exception {
        try (Attempt a = gate("a").enter(key)) {
            // Given an admin deletes the key, its whole history, while the action runs
            Crossing crossing = a.cross(ctx -> {
                deliveries.incrementAndGet();
                client.delete().deletingChildrenIfNeeded().forPath(keyPath);
                return ActionResult.verified("receipt");
            });

            // Then the outcome meets its armed record gone: written nowhere, and counted fenced (SPEC §8)
            assertThat(crossing).isInstanceOfSatisfying(Crossing.Crossed.class, c -> {
                assertThat(c.outcome()).isEqualTo(Outcome.SENT_VERIFIED);
                assertThat(c.recorded()).isFalse();
            });
            assertThat(count(GateMetrics.FENCED, "operation", "outcome")).isEqualTo(1);
            assertThat(count(GateMetrics.OUTCOMES, "outcome", "sent_verified", "recorded", "false")).isEqualTo(1);
        }
        assertThat(stat(keyPath)).as("the outcome recreated nothing").isNull();
        assertThat(deliveries).hasValue(1);
    }

    @Test
    void electionWhoseLeaderNeverActs_aContenderThatWillNotWait_takesTheOpenScopeOverAfterOneTtl_andCountsIt()
            throws Exception {
        // Given scope 0 open (its creator left without crossing), and its election led by a member that never acts
        try (Attempt first = gate("creator").enter(key)) {
            assertThat(first.decision()).isInstanceOf(Decision.Proceed.class);
        }
        String scope0 = Layout.scope(keyPath, 0);
        String idleLeader = client.create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                .forPath(Layout.latch(scope0) + "/_c_" + UUID.randomUUID() + "-latch-");
        try {
            // When B, whose lease TTL is one second, enters without waiting
            Gate b = gate(Gate.builder(client).namespace(ns).taskId("b").meterRegistry(registry).leaseTtl(Duration.ofSeconds(1)));
            try (Attempt attempt = b.enter(key)) {
                // Then it stays for its election (a contender that will not wait still gives an open scope's election
                // its time), and once the scope is unchanged for a TTL it takes it over, from no holder, and counts it
                assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isZero());
                KeyHistory.Lease lease = Records.decodeScope(scope0, client.getData().forPath(scope0)).lease();
                assertThat(lease.holder().task()).isEqualTo("b");
                assertThat(lease.takeover().cause()).isEqualTo("stalled_election");
                assertThat(lease.takeover().from()).as("nobody held the scope").isNull();
                assertThat(count(GateMetrics.TAKEOVERS, "cause", "stalled_election")).isEqualTo(1);
                assertThat(attempt.cross(delivers("receipt-b", new AtomicReference<>()))).isInstanceOf(Crossing.Crossed.class);
            }
        } finally {
            client.delete().forPath(idleLeader);
        }
        assertThat(deliveries).hasValue(1);
    }

    /** Waits (while the attempt is still open) until no election node is left under the scope's latch. */
    void awaitNoElectionNode(String scopePath) {
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() ->
                client.checkExists().forPath(Layout.latch(scopePath)) == null
                        || client.getChildren().forPath(Layout.latch(scopePath)).isEmpty());
    }

    /** The highest zxid the marks file holds for this namespace, as another process would read it now. */
    long onFile(java.nio.file.Path file) {
        return ZxidMarks.read(file).stream().filter(m -> m.namespace().equals(ns)).mapToLong(ZxidMarks.Mark::zxid)
                .max().orElse(0);
    }
}
