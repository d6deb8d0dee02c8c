/**
 * oncegate: one intended external side effect, at most once across a fleet of workers,
 * coordinated through ZooKeeper. The public API is {@link dev.oncegate.Gate} (workers),
 * {@link dev.oncegate.Operator} (operators) and the values and exceptions they return; everything
 * else is package-private.
 *
 * <h2>Safety map</h2>
 * Each rule of SPEC §4, the write (or the reader's judgement) that enforces it, the stop a
 * contender gets when it would be broken, and the tests that prove it: the deterministic simulator
 * ({@code SimulationTest#seededHistories_holdEveryInvariant}, whose {@code SimChecker} holds the
 * rule after every simulated step, named here by the check that fails) and tests against real
 * ZooKeeper servers (coordinator unit tests, and the {@code testing} module's scenario tests,
 * package {@code dev.oncegate.testing}). A worker's writes are {@code ExecutorWrites}', an operator's
 * {@code OperatorWrites}'; readers ({@code ScopeReads}, and {@code DefaultOperator} for {@code inspect})
 * decode with {@code ScopeDecoder} and judge with {@code Custody}.
 *
 * <table>
 *   <caption>SPEC §4 rule → write → stop → tests</caption>
 *   <tr><th>Rule</th><th>Enforced by</th><th>Stop</th><th>Tests (simulated; real)</th></tr>
 *   <tr><td>1. One crossing per scope</td>
 *       <td>{@code ExecutorWrites.arm}: {@code multi(check genesis id, check election node, setData(scope, token),
 *           create KEY/n/armed, create armed/outcome)}; the create-once armed record is the barrier</td>
 *       <td>{@code stop_busy fenced}, or {@code stop_unknown} when the scope was armed by another</td>
 *       <td>SimChecker "two crossings of one scope";
 *           {@code SimultaneousContendersTest#twentySessionsEnterAtOnce_exactlyOneDeliversOthersStopSent},
 *           {@code IncarnationBindingTest#secondArming_ofOneScopeIncarnation_meetsTheArmedRecord_whateverTheScopeDataSays},
 *           {@code WorkerCredentialTest#armedRecordForgedOnAnOpenScope_theLeaseHolderCannotArm_andNobodyDelivers}</td></tr>
 *   <tr><td>2. Armed means consumed</td>
 *       <td>{@code Custody.judge} (armed record without outcome reads {@code ARMED}); {@code ExecutorWrites.recordOutcome}:
 *           {@code multi(check election node | own armed record, setData(armed/outcome, 0) [, create KEY/n+1])}, once</td>
 *       <td>{@code stop_unknown armed_without_outcome}, {@code stop_unknown send_status_unknown}</td>
 *       <td>SimChecker "scope … read (consumed) and now reads (open)";
 *           {@code ExecutorCrashTest#crashAfterArming_othersStopUnknownAndAtMostOneDelivery},
 *           {@code ExecutorCrashTest#armedWithoutOutcome_waiterWhoseWaitPassesThreeTtls_stopsUnknownNotWaitExpired},
 *           {@code ClockSkewTest#contenderClockAhead_cannotTakeOverAnArmedScope}</td></tr>
 *   <tr><td>3. {@code not_sent} needs proof</td>
 *       <td>{@code DefaultAttempt.invokeAndRecord} ({@code not_sent} only when never invoked or on
 *           {@link dev.oncegate.ProvenNotSentException}); the outcome reveals the secret the armed record
 *           committed to ({@code Custody.checkNotSent})</td>
 *       <td>a forged {@code not_sent}: {@code stop_unavailable unreadable_record}</td>
 *       <td>SimChecker "reads not_sent but …";
 *           {@code WorkerCredentialTest#forgedNotSentOutcome_onAScopeBeingDelivered_opensNothing_andReadsUnreadableNotNotSent},
 *           {@code ArmingInterruptedInFlightTest#interruptWhileTheArmIsInFlight_armedButNeverInvoked_recordsNotSent_andTheKeyStaysFree},
 *           {@code UnreadableHistoryTest#garbageOutcomeRecord_stopsUnavailableNotSentOrProceed}</td></tr>
 *   <tr><td>4. Fail closed</td>
 *       <td>{@code DefaultAttempt.failClosed}; {@code ScopeDecoder.Decoded#orThrow} (first contradiction);
 *           the arming multi sent once, a lost reply counting as armed</td>
 *       <td>{@code stop_unavailable}: {@code connection_lost}, {@code unreadable_record}, {@code permission_denied},
 *           {@code write_result_unknown}, {@code zookeeper_unreachable}</td>
 *       <td>SimChecker (lost replies, connection losses, expiry: no second crossing);
 *           {@code ArmingUnderConnectionLossTest#armingReplyLost_crossingRefusedWriteResultUnknownAndActionNeverInvoked},
 *           {@code ZooKeeperDownTest#serverStoppedAfterProceed_crossingRefusedActionNeverInvoked},
 *           {@code UnreadableHistoryTest#garbageScopeRecord_stopsUnavailableUnreadable},
 *           {@code PermissionDeniedTest#scopeNodeReadableOnlyByOperator_unauthenticatedContenderStopsPermissionDenied}</td></tr>
 *   <tr><td>5. Re-check near the boundary</td>
 *       <td>{@code ExecutorWrites.writeLease} at every checkpoint: {@code multi(check election node, setData(scope, token))};
 *           the arming multi's version check; the session must be the lease's ({@code DefaultAttempt.connectionStop})</td>
 *       <td>{@code stop_busy fenced}, {@code stop_unavailable connection_lost}</td>
 *       <td>SimChecker (pauses, expiry and takeovers between checkpoints);
 *           {@code HungExecutorFencingTest#leaseLapsed_hungExecutorsCheckpointAfterTakeoverIsRefusedAndItCannotCross},
 *           {@code SessionExpiryTest#expiredAfterProceedBeforeCheckpoint_checkpointStopsConnectionLostAndAnotherDeliversOnce},
 *           {@code SessionExpiryTest#expiredImmediatelyBeforeCross_crossingRefusedWhetherOrNotTheClientNoticed}</td></tr>
 *   <tr><td>6. Fencing</td>
 *       <td>every executor write conditional on the scope znode's version and bound to its incarnation (election
 *           node, genesis id, own armed record); scope znodes never deleted by the protocol</td>
 *       <td>{@code stop_busy fenced}; the election node gone: {@code stop_unavailable connection_lost}</td>
 *       <td>SimChecker (crashes, expiry, gc and recreated keys: no second crossing, no outcome in a new scope);
 *           {@code HungExecutorFencingTest#leaseLapsed_takeoverFencesHungExecutorsCrossing},
 *           {@code IncarnationBindingTest#leaseCas_decidedOnAReadOfTheOldIncarnation_failsOnTheNewOneEvenAtTheSameVersion},
 *           {@code RecreatedZnodeTest#keyDeletedWhileItsExecutorDelivers_itsOutcomeIsNotWrittenIntoTheNewExecutorsScope},
 *           {@code ElectionNodeBindingTest#executorWhoseElectionNodeWasDeleted_isStoppedAtItsCheckpoint_andNeverArms}</td></tr>
 *   <tr><td>7. Lost data never looks like a fresh start</td>
 *       <td>{@code OperatorWrites.createGenesis} once; {@code ExecutorWrites.createKey} and {@code arm} check the genesis id; every
 *           lease write's zxid against the rollback witness ({@code ZxidMarks}); a reader's {@code Custody.judge}: a scope
 *           whose data says armed without its armed record (a deleteall under way) is unreadable</td>
 *       <td>{@code stop_unavailable namespace_not_initialised}, {@code namespace_replaced}, {@code zookeeper_rolled_back},
 *           {@code unreadable_record}</td>
 *       <td>{@code NamespaceGenesisTest#uninitialisedNamespace_stopsUnavailableAndWritesNothing},
 *           {@code NamespaceGenesisTest#genesisDeletedBetweenProceedAndCross_crossingRefusedActionNeverRuns},
 *           {@code IncarnationBindingTest#arming_afterTheNamespaceWasReinitialised_isRefusedAtTheGenesisId},
 *           {@code RollbackDetectionTest#restoredFromAnOlderSnapshot_aWitnessedHostStopsBeforeArming},
 *           {@code CustodyJudgesTheRecordsTest#scopeWhoseArmingFlagOutlivedItsArmedRecord_isUnreadable_notOpen};
 *           simulated: the wipe ({@code SimWorld}) and the genesis-at-arming rule ({@code SimChecker}),
 *           {@code SimulationRegressionTest} seeds 180, 3805, 5746</td></tr>
 *   <tr><td>8. Redelivery is a new intent</td>
 *       <td>{@code OperatorWrites.authorize}: {@code create KEY/authorizations/after-n} (operators only);
 *           {@code openAuthorizedScope}: {@code multi(check after-n, setData(scope n, v), create KEY/n+1)};
 *           {@code ContentionRules} honour it only for scope n, created after n was armed</td>
 *       <td>none for the new scope's executor (it passes every check above); others as rule 1</td>
 *       <td>SimChecker "possibly delivered … times with … allowed" (deliveries ≤ 1 + authorizations);
 *           {@code InformedRedeliveryTest#authorizationOnUnknownKey_exactlyOneOfManyContendersRedeliversOnce},
 *           {@code AuthorizationBindingTest#authorizationForAnEarlierScope_isNeverHonouredForALaterOne},
 *           {@code AuthorizationBindingTest#recipePastedTwice_orAnOldStyleRecord_opensOneScopeOnly},
 *           {@code ContentionRulesTest#consumed_authorizationCreatedBeforeArming_isNeverHonoured}</td></tr>
 *   <tr><td>9. Readers never trust a mutable field</td>
 *       <td>{@code ScopeDecoder} and {@code Custody.judge}: armed, outcome and reconciliation from immutable
 *           records; {@code Custody.opening}/{@code requireOpened}: the chain of custody of scope n &gt; 0; the
 *           backlog index ({@code BacklogIndex}), which the worker credential may bend, is read by no decision,
 *           and every key an operator's answer takes from it is confirmed by its records</td>
 *       <td>{@code stop_unavailable unreadable_record}</td>
 *       <td>SimChecker with its rogue holding the worker credential;
 *           {@code RogueWorkerTest#rogueWithTheWorkerCredential_makesHonestContendersStopAtWorst_neverDeliverAgain},
 *           {@code WorkerCredentialTest#scopeOpenedByHand_onADeliveredKey_stopsTheNextWorker_andNothingIsDeliveredAgain},
 *           {@code WorkerCredentialTest#scopeUnarmedByHand_whileTheExecutorDelivers_theNextWorkerStops_andTheExecutorsOutcomeIsRecorded},
 *           {@code WorkerCredentialTest#authorizationForgedUnderAWorldWritableAuthorizationsZnode_isNotHonoured},
 *           {@code BacklogIndexTest#forgedEntries_showNothing_andCannotStopAnArming},
 *           {@code BacklogIndexTest#aRemovedEntry_hidesTheKeyFromTheIndexOnly_theWalkFindsAndRestoresIt}</td></tr>
 *   <tr><td>10. Operator actions and retention decided by ZooKeeper</td>
 *       <td>{@code OperatorWrites.reconcile}: {@code multi(check(scope n, v), setData(armed/outcome, 0) | check(armed/outcome, 1),
 *           create reconciled-n)} meets the outcome's {@code setData(armed/outcome, 0)}; gc dates keys by a probe
 *           znode's server time and deletes with {@code OperatorWrites.deleteKey}'s version check</td>
 *       <td>the loser of the race is refused (an executor's outcome: logged, the scope reads reconciled)</td>
 *       <td>SimChecker "was removed although …" (gc only past retention by the server's clock);
 *           {@code ReconcileRaceTest#reconciliationLandsFirst_theExecutorsLateNotSentIsNotRecorded_andNothingReopens},
 *           {@code ReconcileRaceTest#notSentLandsAfterTheOperatorRead_theReconciliationIsRefused_andTheKeyStaysOpenInScopeOne},
 *           {@code RetentionTest#operatorHostClockJumpsForward_gcRemovesNothingFresh},
 *           {@code RetentionTest#workerClockFortyDaysBehind_theNightlyGcKeepsItsFreshKey_andASiblingStops}</td></tr>
 * </table>
 */
package dev.oncegate;
