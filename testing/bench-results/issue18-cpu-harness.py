"""Issue 18: CPU per effect through `oncegate sidecar`, by component (not the benchmark: a harness of its own).

`oncegate server` and `oncegate sidecar` as processes (127.0.0.1 only, a fresh data and state directory each
time), CLIENTS (default 16) Python processes running the benchmark's sidecar_agents.py; the agents start together
once all are up. Per run: effects/s, p50/p99 per effect, and CPU microseconds per effect of the sidecar
(/proc/PID/stat, and by thread name from /proc/PID/task, so the JIT compiler's share shows), of the server
(/proc/PID/stat) and of the Python agents (their own getrusage over the timed window, "python_us_window"; and
wait4's rusage with the interpreters' start-up, "python_us_rusage"). WARM untimed rounds of 4 s first.

usage: python3 issue18-cpu-harness.py JAR AGENTS_PY PYTHON_CLIENT_DIR RUNS SECONDS [MODE ...]
       MODE 3: enter, cross, outcome; 2: enter-and-cross, outcome (default); modes interleaved per run
env:   CLIENTS, WARM (default 4), ZKPORT (default 21899), PY (default /usr/bin/python3),
       JFR=FILE (a JFR recording of the sidecar over the timed runs; JFC=settings, default profile), SIDECAR_OPTS, KEEP
"""
import json, os, shutil, subprocess, sys, tempfile, time, resource, signal

jar, script, pyclient, runs, seconds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
modes = sys.argv[6:] or ["2"]
clients = int(os.environ.get("CLIENTS", "16"))
tick = os.sysconf("SC_CLK_TCK")
tmp = tempfile.mkdtemp(prefix="sh-")
java = shutil.which("java")
jfr = os.environ.get("JFR")

def cpu(pid):
    with open("/proc/%d/stat" % pid) as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / tick

def threads(pid):
    out = {}
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, t)) as f:
                head, rest = f.read().split(" (", 1)
            name, rest = rest.rsplit(")", 1)
            parts = rest.split()
            name = "".join("N" if c.isdigit() else c for c in name)
            out[name] = out.get(name, 0) + (int(parts[11]) + int(parts[12])) / tick
        except (OSError, ValueError):
            pass
    return out

def start(cmd, name):
    log = open(os.path.join(tmp, name + ".log"), "w")
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True,
                            env=dict(os.environ, XDG_STATE_HOME=os.path.join(tmp, "xdg"), ONCEGATE_STATE_DIR=os.path.join(tmp, "st")))

port = int(os.environ.get("ZKPORT", "21899"))
server = start([java, "-jar", jar, "server", "--port", str(port), "--data-dir", os.path.join(tmp, "zk"), "--bind", "127.0.0.1"], "server")
print(server.stdout.readline().strip()[:300], file=sys.stderr)
extra = os.environ.get("SIDECAR_OPTS", "").split()
sidecar = start([java, "-Xmx512m"] + extra + ["-jar", jar, "sidecar", "--connect", "127.0.0.1:%d" % port,
                 "--listen", "127.0.0.1:0", "--token-file", os.path.join(tmp, "sidecar.token"),
                 "--state-dir", os.path.join(tmp, "state"), "--handle-idle-timeout", "30m"], "sidecar")
try:
    line = sidecar.stdout.readline()
    while not line.startswith("{"):
        line = sidecar.stdout.readline()
    url = json.loads(line)["url"]
    env = dict(os.environ, ONCEGATE_SIDECAR_URL=url, ONCEGATE_SIDECAR_TOKEN_FILE=os.path.join(tmp, "sidecar.token"),
               PYTHONPATH=os.path.abspath(pyclient))
    def run(tag, mode, secs):
        args = [] if mode == "3" else ["enter-and-cross"]
        agents = [subprocess.Popen([os.environ.get("PY", "/usr/bin/python3"), script, "effects", str(secs), "%s-%d" % (tag, i)] + args,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env) for i in range(clients)]
        for a in agents:
            assert json.loads(a.stdout.readline())["ready"]
        load0 = os.getloadavg()[0]
        s0, z0 = cpu(sidecar.pid), cpu(server.pid)
        t0 = threads(sidecar.pid)
        for a in agents:
            a.stdin.write("\n"); a.stdin.flush()
        outs = [json.loads(a.stdout.read()) for a in agents]
        s1, z1 = cpu(sidecar.pid), cpu(server.pid)
        t1 = threads(sidecar.pid)
        py = 0.0
        for a in agents:
            _, status, ru = os.wait4(a.pid, 0)
            py += ru.ru_utime + ru.ru_stime
        n = sum(o["effects"] for o in outs)
        wall = max(o["seconds"] for o in outs)
        pyw = sum(o.get("cpu_s", float("nan")) for o in outs)
        lat = sorted(l for o in outs for l in o["latencies_ms"])
        us = lambda x: round(x * 1e6 / max(n, 1))
        return {"tag": tag, "mode": mode, "effects": n, "per_s": round(n / wall, 1), "p50": round(lat[len(lat)//2], 2) if lat else None,
                "p99": round(lat[int(len(lat)*0.99)], 2) if lat else None,
                "sidecar_us": us(s1 - s0), "server_us": us(z1 - z0), "python_us_rusage": us(py), "python_us_window": us(pyw),
                "undecided": sum(o["undecided"] for o in outs), "error": next((o["first_error"] for o in outs if o["first_error"]), None), "load": [round(load0, 2), round(os.getloadavg()[0], 2)],
                "sidecar_threads_us": {k: us(v - t0.get(k, 0)) for k, v in sorted(t1.items(), key=lambda kv: -(kv[1] - t0.get(kv[0], 0))) if v - t0.get(k, 0) > 0}}
    for w in range(int(os.environ.get("WARM", "4"))):
        r = run("warm%d" % w, modes[w % len(modes)], 4)
        print(json.dumps(dict(r, warmup=True)), flush=True)
    if jfr:
        subprocess.run(["jcmd", str(sidecar.pid), "JFR.start", "settings=" + os.environ.get("JFC", "profile")], stdout=subprocess.DEVNULL)
    for i in range(runs):
        for m in modes:
            print(json.dumps(run("run%d%s" % (i, m), m, seconds)), flush=True)
    if jfr:
        subprocess.run(["jcmd", str(sidecar.pid), "JFR.dump", "filename=" + jfr], stdout=subprocess.DEVNULL)
finally:
    sidecar.send_signal(signal.SIGTERM); sidecar.wait(60)
    server.send_signal(signal.SIGTERM); server.wait(60)
    if os.environ.get("KEEP"):
        print("kept", tmp, file=sys.stderr)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
