"""The Python client against a real sidecar and a real ZooKeeper server: what the fleet's records say afterwards."""
import json
import select
import socket
import urllib.parse
import time
import signal

import pytest

import oncegate
from conftest import Sidecar, finish_agent, ledger_lines, start_agent


def _enter_once(sidecar, effect, task):
    """Enters the effect in this process and leaves at once: the decision a new agent would get."""
    with sidecar.gate().effect(destination=effect["destination"], content=effect["content"].encode(), task=task) as e:
        return e.decision


def test_sixteenProcessesRace_oneDelivers(sidecar, effect):
    # Given / When: 16 agent processes race for one effect, each willing to wait for the others' final decision
    agents = [start_agent(sidecar, "deliver", effect, "agent-%d" % i, wait=60) for i in range(16)]
    results = [finish_agent(a) for a in agents]

    # Then: one delivery on the ledger; one agent proceeded, every other stopped on its sent_verified
    assert len(ledger_lines(effect)) == 1
    decisions = sorted(r.get("decision") for r in results)
    assert decisions.count("proceed") == 1, results
    assert set(decisions) == {"proceed", "stop_sent"}, results


def test_resumedTask_stopsOnTheConsumedKey(sidecar, effect):
    # Given: task-7 delivered yesterday
    assert finish_agent(start_agent(sidecar, "deliver", effect, "task-7"))["outcome"]["reads_as"] == "sent_verified"

    # When: the same task resumes overnight and tries again
    resumed = finish_agent(start_agent(sidecar, "deliver", effect, "task-7"))

    # Then: it stops on the consumed key, and nothing more is delivered
    assert resumed["decision"] == "stop_sent"
    assert len(ledger_lines(effect)) == 1


def test_agentKilledAfterCrossing_leavesTheKeyUnknown(sidecar, effect):
    # Given: an agent armed the scope (it wrote "armed" to the ledger) and is acting
    agent = start_agent(sidecar, "hang", effect, "doomed")
    assert json.loads(agent.stdout.readline())["decision"] == "proceed"

    # When: it is killed with SIGKILL
    agent.send_signal(signal.SIGKILL)
    agent.wait()
    agent.stdout.close()
    agent.stderr.close()

    # Then: every later agent stops unknown, and nothing is delivered twice
    later = finish_agent(start_agent(sidecar, "deliver", effect, "later"))
    assert later["decision"] == "stop_unknown"
    assert ledger_lines(effect) == ["armed doomed"]


def test_notSentWithEvidence_letsTheNextAgentDeliver(sidecar, effect):
    # Given: the first agent proves its provider refused before accepting anything
    first = finish_agent(start_agent(sidecar, "not_sent", effect, "first"))
    assert first["outcome"]["reads_as"] == "not_sent"

    # When: the next agent comes
    second = finish_agent(start_agent(sidecar, "deliver", effect, "second"))

    # Then: it delivers, in scope 1 with another idempotency key
    assert second["outcome"]["reads_as"] == "sent_verified"
    assert second["outcome"]["scope"] == 1
    assert second["idempotency_key"] != first["idempotency_key"]
    assert len(ledger_lines(effect)) == 1


def test_exceptionInsideTheCrossing_recordsUnknownNeverNotSent(sidecar, effect):
    # When: the agent's send raises after the request may have gone out
    result = finish_agent(start_agent(sidecar, "raise", effect, "flaky"))

    # Then: the outcome is send_status_unknown, and the next agent stops on it
    assert "raised" in result
    history = sidecar.gate().inspect(oncegate.effect_key(destination=effect["destination"],
                                                         content=effect["content"].encode()))
    assert history["state"] == "send_status_unknown"
    assert "RuntimeError" in history["scopes"][0]["outcome"]["detail"]
    assert _enter_once(sidecar, effect, "next").kind == "stop_unknown"


def test_sidecarKilledMidCrossing_itsAgentsFailClosed(sidecar, effect, tmp_path):
    # Given: through a sidecar of their own, agent A has crossed and agent B holds the lease of another effect
    doomed = Sidecar(tmp_path, "doomed")
    other = dict(effect, destination=effect["destination"] + ".b")
    a = doomed.gate().effect(destination=effect["destination"], content=effect["content"].encode(), task="a")
    b = doomed.gate().effect(destination=other["destination"], content=other["content"].encode(), task="b")
    with a, b:
        assert a.decision.proceed and b.decision.proceed
        with pytest.raises(oncegate.Unavailable):
            with a.crossing():
                # When: the sidecar is killed while A acts
                doomed.stop(signal.SIGKILL)
                # (leaving the block reports unknown, which cannot reach the sidecar: Unavailable)
        # Then: B cannot cross, so it never acts
        with pytest.raises(oncegate.Unavailable):
            with b.crossing():
                open(effect["ledger"], "a").write("B acted\n")
    assert ledger_lines(effect) == []
    # and A's key reads unknown to every agent of the fleet
    assert _enter_once(sidecar, effect, "after").kind == "stop_unknown"


def test_sigtermMidCrossing_recordsUnknown(sidecar, effect, tmp_path):
    # Given: an agent crossed through a sidecar that is being stopped
    stopping = Sidecar(tmp_path, "stopping", ["--shutdown-grace", "2s"])
    with stopping.gate().effect(destination=effect["destination"], content=effect["content"].encode(), task="t") as e:
        with pytest.raises(oncegate.Unavailable):
            with e.crossing():
                # When: the sidecar gets SIGTERM before the agent reports
                code = stopping.stop(signal.SIGTERM)
    # Then: it recorded send_status_unknown and exited 0
    assert code == 0
    history = sidecar.gate().inspect(oncegate.effect_key(destination=effect["destination"],
                                                         content=effect["content"].encode()))
    assert history["state"] == "send_status_unknown"


def test_wrongToken_changesNothing(sidecar, effect):
    # When: an agent calls with another token
    with pytest.raises(oncegate.SidecarError) as refused:
        with sidecar.gate(token="not-the-token").effect(destination=effect["destination"],
                                                        content=effect["content"].encode()):
            pass

    # Then: 401 naming Authorization, and the key was never created
    assert refused.value.status == 401
    assert refused.value.field == "Authorization"
    history = sidecar.gate().inspect(oncegate.effect_key(destination=effect["destination"],
                                                         content=effect["content"].encode()))
    assert history["exists"] is False


def test_crossAtEnter_armsInOneCall_andTheNextAgentStops(sidecar, effect):
    # Given: an agent with no checkpoint enters and arms in one call
    gate = sidecar.gate()
    content = effect["content"].encode()
    with gate.effect(destination=effect["destination"], content=content, task="quick", cross=True) as quick:
        assert quick.decision.proceed
        # When: it acts inside the crossing (already armed: no further call) and reports
        with quick.crossing() as crossing:
            assert crossing.armed and len(crossing.idempotency_key) == 32
            result = crossing.sent_verified(evidence="msg-1")

    # Then: the outcome is on record, and the next agent (same call) stops on it without arming
    assert result["reads_as"] == "sent_verified"
    with gate.effect(destination=effect["destination"], content=content, task="late", cross=True) as late:
        assert late.decision.kind == "stop_sent"
        with pytest.raises(oncegate.Stopped):
            late.crossing()


def test_crossAtEnter_leftWithoutItsCrossing_recordsUnknown(sidecar, effect):
    # Given: an agent armed at enter
    gate = sidecar.gate()
    content = effect["content"].encode()

    # When: its code raises before it enters the crossing, and it had asked for a checkpoint (refused: armed)
    with pytest.raises(RuntimeError):
        with gate.effect(destination=effect["destination"], content=content, task="early", cross=True) as e:
            with pytest.raises(oncegate.OncegateError):
                e.checkpoint("picker")
            raise RuntimeError("the agent's own bug")

    # Then: armed means consumed: send_status_unknown is recorded at once, never not_sent
    history = gate.inspect(oncegate.effect_key(destination=effect["destination"], content=content))
    assert history["state"] == "send_status_unknown"
    assert "RuntimeError" in json.dumps(history)


def test_aCrossingLongerThanTheServersIdleTimeout_recordsItsVerifiedOutcome(tmp_path, effect, monkeypatch):
    # Given: a sidecar that closes connections idle for 2 s (the JDK's default is 30 s), and a client that
    # reconnects after 1 s of idleness
    monkeypatch.setattr(oncegate, "IDLE_RECONNECT_SECONDS", 1.0, raising=False)
    quick = Sidecar(tmp_path, "idle", jvm=["-Dsun.net.httpserver.idleInterval=2", "-Dsun.net.httpserver.clockTick=200"])
    try:
        # When: the agent crosses, and its delivery takes longer than that before it reports
        with quick.gate().effect(destination=effect["destination"], content=effect["content"].encode(),
                                 task="slow") as e:
            assert e.decision.kind == "proceed"
            with e.crossing() as c:
                time.sleep(4)
                c.sent_verified("msg-123")

        # Then: the verified outcome is recorded, not turned into send_status_unknown by a stale connection
        history = quick.gate().inspect(oncegate.effect_key(destination=effect["destination"],
                                                           content=effect["content"].encode()))
        assert history["state"] == "sent_verified"
    finally:
        quick.stop()


def _closed_by_the_sidecar(gate):
    """Waits until the sidecar's close of this thread's kept connection has reached this host (it is readable)."""
    kept = gate._local.conn.sock
    deadline = time.monotonic() + 30
    while not select.select([kept], [], [], 0.1)[0]:
        assert time.monotonic() < deadline, "the sidecar did not close the connection"


def test_aKeptConnectionTheSidecarClosedBecauseOthersIdled_isNotReused_andTheVerifiedOutcomeIsRecorded(tmp_path, effect):
    # Given: a sidecar that keeps at most 2 idle connections (the JDK's default is 200) and closes, silently, one
    # that would be more once its answer is sent; and two other local clients idle on it
    few = Sidecar(tmp_path, "few-idle", jvm=["-Dsun.net.httpserver.maxIdleConnections=2"])
    parts = urllib.parse.urlsplit(few.url)
    idle = []
    try:
        for _ in range(2):
            s = socket.create_connection((parts.hostname, parts.port))
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: sidecar\r\n\r\n")
            answer = b""
            while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
                answer += s.recv(4096)
            idle.append(s)
        # When: the agent enters, crosses, delivers and reports, each answer followed by the sidecar's close of the
        # connection it came on
        gate = few.gate()
        with gate.effect(destination=effect["destination"], content=effect["content"].encode(), task="agent") as e:
            assert e.decision.kind == "proceed"
            _closed_by_the_sidecar(gate)
            with e.crossing() as c:
                assert c.armed
                _closed_by_the_sidecar(gate)
                c.sent_verified("msg-42")

        # Then: each call went over a new connection, and the delivery is recorded as verified, not unknown
        history = few.gate().inspect(oncegate.effect_key(destination=effect["destination"],
                                                         content=effect["content"].encode()))
        assert history["state"] == "sent_verified"
    finally:
        for s in idle:
            s.close()
        few.stop()


def test_aReceiptLongerThanTheSidecarKeeps_isCutToFit_andTheVerifiedOutcomeIsRecorded(sidecar, effect):
    # Given: a provider whose receipt is longer than the 2,048 characters the sidecar keeps (counted as Java
    # counts them: a character outside the BMP is two), with such characters at the cut
    receipt = "receipt " + "x" * 2030 + "\U0001F4E8" * 20 + " and more" * 300

    # When: the agent delivers and reports it
    with sidecar.gate().effect(destination=effect["destination"], content=effect["content"].encode(),
                               task="verbose") as e:
        assert e.decision.kind == "proceed"
        with e.crossing() as c:
            result = c.sent_verified(receipt)

    # Then: the delivery is recorded as verified (never turned into send_status_unknown by a 400), with the
    # receipt's head and a note of how much was cut
    assert result["reads_as"] == "sent_verified"
    history = sidecar.gate().inspect(oncegate.effect_key(destination=effect["destination"],
                                                         content=effect["content"].encode()))
    assert history["state"] == "sent_verified"
    kept = history["scopes"][0]["outcome"]["detail"]
    assert kept.startswith("receipt xxx")
    assert "characters cut" in kept
    assert len(kept.encode("utf-16-le")) // 2 <= oncegate.MAX_EVIDENCE
