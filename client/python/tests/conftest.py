"""Fixtures: a real `oncegate sidecar` (the built jar) against the real ZooKeeper the Java test started.

Needs $ONCEGATE_JAR (client/target/oncegate.jar) and $ONCEGATE_CONNECT (a server with /oncegate initialised):
PythonClientIT sets both and runs this suite under `mvn verify`.
"""
import json
import os
import signal
import subprocess
import sys
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)
sys.path.insert(0, PACKAGE)

import oncegate  # noqa: E402


def _required(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail("$%s is not set: run this suite through PythonClientIT (`mvn verify`), which starts ZooKeeper"
                    " and builds the jar" % name)
    return value


class Sidecar(object):
    """A running sidecar process: its URL, token file and environment for agents."""

    def __init__(self, tmp, name, extra=(), jvm=()):
        self.dir = os.path.join(str(tmp), name)
        os.makedirs(self.dir)
        self.token_file = os.path.join(self.dir, "sidecar.token")
        self.stderr = open(os.path.join(self.dir, "stderr.txt"), "w+")
        java = os.path.join(os.environ.get("JAVA_HOME", ""), "bin", "java") if os.environ.get("JAVA_HOME") else "java"
        command = [java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"] + list(jvm) + ["-jar", _required("ONCEGATE_JAR"), "sidecar",
                   "--connect", _required("ONCEGATE_CONNECT"), "--listen", "127.0.0.1:0",
                   "--token-file", self.token_file, "--state-dir", os.path.join(self.dir, "state"),
                   "--session-timeout", "6s"] + list(extra)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ONCEGATE_")}
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self.stderr, env=env, text=True)
        line = self.process.stdout.readline()
        if not line:
            self.stderr.seek(0)
            raise AssertionError("the sidecar did not start: " + self.stderr.read())
        self.started = json.loads(line)
        self.url = self.started["url"]

    def gate(self, **kwargs):
        return oncegate.Gate(url=self.url, token_file=self.token_file, **kwargs)

    def env(self):
        env = dict(os.environ)
        env["PYTHONPATH"] = PACKAGE + os.pathsep + env.get("PYTHONPATH", "")
        env["ONCEGATE_SIDECAR_URL"] = self.url
        env["ONCEGATE_SIDECAR_TOKEN_FILE"] = self.token_file
        return env

    def stop(self, sig=signal.SIGTERM):
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process.stdout.close()
        self.stderr.close()
        return self.process.returncode


@pytest.fixture(scope="session")
def sidecar(tmp_path_factory):
    s = Sidecar(tmp_path_factory.mktemp("sidecar"), "main")
    yield s
    s.stop()


@pytest.fixture
def effect(tmp_path):
    """A fresh effect (destination and content) and a ledger file for its deliveries."""
    return {"destination": "mail:ops-%s@example.com" % uuid.uuid4(), "content": "report %s" % uuid.uuid4(),
            "ledger": str(tmp_path / "ledger")}


def ledger_lines(effect):
    if not os.path.exists(effect["ledger"]):
        return []
    with open(effect["ledger"]) as f:
        return [line for line in f.read().splitlines() if line]


def start_agent(sidecar, mode, effect, task, wait=0):
    return subprocess.Popen([sys.executable, os.path.join(HERE, "agent.py"), mode, effect["destination"],
                             effect["content"], task, effect["ledger"], str(wait)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=sidecar.env(), text=True)


def finish_agent(process, timeout=120):
    out, err = process.communicate(timeout=timeout)
    lines = [line for line in out.splitlines() if line.startswith("{")]
    assert lines, "the agent printed no result; stderr:\n" + err
    return json.loads(lines[-1])
