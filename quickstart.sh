#!/usr/bin/env bash
# oncegate quick start: an embedded ZooKeeper (nothing to install), three sibling workers racing
# to deliver the same file, then a task resumed "overnight". Exactly one delivery must happen.
# Usage: ./quickstart.sh   (after `mvn -B -q package -DskipTests`, which builds client/target/oncegate.jar)
set -euo pipefail
cd "$(dirname "$0")"
jar=client/target/oncegate.jar
[ -f "$jar" ] || { echo "missing $jar: run 'mvn -B -q package -DskipTests' first" >&2; exit 2; }

work=$(mktemp -d -t oncegate-quickstart.XXXXXX)
# This run's own host state (zxid marks), not the user's ~/.local/state/oncegate.
export ONCEGATE_STATE_DIR="$work/state"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

# A free port on 127.0.0.1.
port=""
for _ in $(seq 1 50); do
  candidate=$(( 20000 + RANDOM % 20000 ))
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then port=$candidate; break; fi
done
[ -n "$port" ] || { echo "no free port found" >&2; exit 1; }
connect="127.0.0.1:$port"

echo "== starting an embedded ZooKeeper on $connect (data in $work/zk)"
java -jar "$jar" server --port "$port" --data-dir "$work/zk" >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
for _ in $(seq 1 120); do
  grep -q '"started"' "$work/server.out" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.err" >&2; exit 1; }
  sleep 0.5
done
cat "$work/server.out"

printf 'Quarterly report, final\n' >"$work/report.txt"
echo "== the effect's identity (destination + SHA-256 of the bytes; no path, no worker)"
java -jar "$jar" key --dest slack:C024BE91L --file "$work/report.txt"

deliver='echo "delivered scope=$ONCEGATE_SCOPE token=$ONCEGATE_FENCING_TOKEN zxid=$ONCEGATE_FENCING_ZXID" >>"$LEDGER"'
export LEDGER="$work/deliveries.log"
: >"$LEDGER"

echo "== three sibling workers race to send the same file"
pids=()
for i in 1 2 3; do
  java -jar "$jar" run --connect "$connect" --dest slack:C024BE91L --file "$work/report.txt" \
    --task-id "sibling-$i" --wait 30s -- sh -c "$deliver" 2>"$work/sibling-$i.json" &
  pids+=($!)
done
codes=()
for i in 0 1 2; do
  set +e; wait "${pids[$i]}"; codes+=($?); set -e
done
for i in 1 2 3; do echo "sibling-$i exit ${codes[$((i-1))]}: $(tail -n 1 "$work/sibling-$i.json")"; done

echo "== a task resumed overnight asks again"
set +e
java -jar "$jar" run --connect "$connect" --dest slack:C024BE91L --file "$work/report.txt" \
  --task-id "sibling-1" -- sh -c "$deliver" 2>"$work/resumed.json"
resumed=$?
set -e
echo "resumed exit $resumed: $(tail -n 1 "$work/resumed.json")"

echo "== what ZooKeeper recorded"
java -jar "$jar" inspect --connect "$connect" --dest slack:C024BE91L --file "$work/report.txt"

deliveries=$(wc -l <"$LEDGER")
echo "== deliveries: $deliveries (expected 1)"
cat "$LEDGER"
zeros=0; for c in "${codes[@]}"; do [ "$c" -eq 0 ] && zeros=$((zeros+1)); done
if [ "$deliveries" -eq 1 ] && [ "$zeros" -eq 1 ] && [ "$resumed" -eq 10 ]; then
  echo "OK: one delivery; the other workers stopped with exit 10 (already sent)"
else
  echo "UNEXPECTED: deliveries=$deliveries exit codes=${codes[*]} resumed=$resumed" >&2
  exit 1
fi
