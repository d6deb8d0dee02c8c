"""The benchmark's Python agents (oncegate-bench's sidecar phase), through the oncegate Python client.

usage: sidecar_agents.py effects SECONDS PREFIX [enter-and-cross]
                                                  new keys one after another until SECONDS pass: enter, cross,
                                                  report sent_verified (three calls; with enter-and-cross two: the
                                                  enter arms, as for an agent with no checkpoint); prints
                                                  {"effects", "latencies_ms", ...}; it first prints {"ready": true}
                                                  once its interpreter is up and its connection open, and starts
                                                  when a line arrives on stdin, so that the 16 agents' start-up
                                                  (interpreter, imports) falls outside the timed window
       sidecar_agents.py handles N PREFIX         enters N new keys and holds them (no crossing); prints {"open": N}
                                                  once all are open, then waits until stdin closes
The sidecar's URL and token file come from $ONCEGATE_SIDECAR_URL and $ONCEGATE_SIDECAR_TOKEN_FILE.
"""
import json
import resource
import sys
import time

import oncegate


def effects(seconds, prefix, cross_at_enter=False):
    gate = oncegate.Gate()
    gate.health()  # opens the connection the effects then keep
    print(json.dumps({"ready": True}), flush=True)
    sys.stdin.readline()
    latencies, undecided, first_error = [], 0, None
    deadline = time.perf_counter() + seconds
    n = 0
    started = time.perf_counter()
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    while time.perf_counter() < deadline:
        n += 1
        t0 = time.perf_counter()
        try:
            with gate.effect(destination="bench:sidecar", content=("%s-%d" % (prefix, n)).encode(),
                             cross=cross_at_enter) as effect:
                if not effect.decision.proceed:
                    raise oncegate.Stopped(effect.decision)
                with effect.crossing() as crossing:
                    crossing.sent_verified(evidence="bench")
        except oncegate.OncegateError as e:
            undecided += 1
            first_error = first_error or str(e)
            continue
        latencies.append((time.perf_counter() - t0) * 1000.0)
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = cpu1.ru_utime - cpu0.ru_utime + cpu1.ru_stime - cpu0.ru_stime
    print(json.dumps({"effects": len(latencies), "seconds": time.perf_counter() - started, "latencies_ms": latencies,
                      "undecided": undecided, "first_error": first_error, "cpu_s": cpu}), flush=True)


def handles(count, prefix):
    gate = oncegate.Gate()
    held = []
    for n in range(count):
        effect = gate.effect(destination="bench:handles", content=("%s-%d" % (prefix, n)).encode())
        effect.__enter__()
        held.append(effect)
    print(json.dumps({"open": sum(1 for e in held if e.decision.proceed)}), flush=True)
    sys.stdin.read()
    for effect in held:
        effect.__exit__(None, None, None)


if __name__ == "__main__":
    mode, amount, prefix = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "effects":
        effects(float(amount), prefix, cross_at_enter=sys.argv[4:] == ["enter-and-cross"])
    else:
        handles(int(amount), prefix)
