#!/usr/bin/env bash
# A three-server ZooKeeper ensemble on this machine's loopback, from deploy/zookeeper/zoo{1,2,3}.cfg.
#
#   deploy/ensemble.sh start [N…]   start the servers (all three by default) that are not running,
#                                   and wait until each serves requests as leader or follower
#   deploy/ensemble.sh stop [N…]    stop them (SIGTERM, then SIGKILL after 15 s)
#   deploy/ensemble.sh status       one line a server: id, pid, client port, mode (leader/follower/down)
#   deploy/ensemble.sh leader       the id of the current leader (exit 1 when there is none)
#   deploy/ensemble.sh connect      the connect string: 127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183
#   deploy/ensemble.sh ports        every port the ensemble uses (client, quorum, election, metrics)
#
# Environment:
#   ONCEGATE_ENSEMBLE_DIR          where data, logs, pid files and the generated configs live
#                                  (default: /var/tmp/oncegate-ensemble-$USER)
#   ONCEGATE_ENSEMBLE_PORT_OFFSET  added to every port of the shipped configs (default 0), so that
#                                  several ensembles (tests) can run side by side: a multiple of 5000
#                                  up to 55000. The shipped ports span 2181 to 7003, so two such
#                                  offsets never give two ensembles a port in common (with offsets
#                                  31000 and 32000, one's election port would be the other's quorum
#                                  port, and neither would find a quorum)
#   ZOOKEEPER_CLASSPATH            the server's classpath; default: Debian's `zookeeper` package
#                                  (/usr/share/java/zookeeper.jar, whose manifest names its
#                                  dependencies). An Apache release works too: "/opt/zookeeper/lib/*".
#   JAVA                           the java binary (default: java on PATH)
#   ZOOKEEPER_HEAP                 -Xmx of each server (default 512m)
#
# The Prometheus metrics provider lines of the configs (commented out with "#metrics# ", since
# Debian's zookeeper 3.8 package does not ship the provider) are turned on when the classpath has
# the provider (an Apache release's lib/ does), and left out with a warning otherwise. The servers run in their own sessions (setsid), so they
# outlive the shell that started them; `stop` ends them.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
configs="$here/zookeeper"
dir="${ONCEGATE_ENSEMBLE_DIR:-/var/tmp/oncegate-ensemble-${USER:-$(id -un)}}"
offset="${ONCEGATE_ENSEMBLE_PORT_OFFSET:-0}"
java="${JAVA:-java}"
heap="${ZOOKEEPER_HEAP:-512m}"
provider_class="org/apache/zookeeper/metrics/prometheus/PrometheusMetricsProvider"

die() { echo "ensemble.sh: $*" >&2; exit 2; }

port_step=5000
[[ "$offset" =~ ^[0-9]+$ ]] || die "ONCEGATE_ENSEMBLE_PORT_OFFSET must be a number, got '$offset'"
if (( offset % port_step != 0 || offset > 55000 )); then
  die "ONCEGATE_ENSEMBLE_PORT_OFFSET must be a multiple of $port_step from 0 to 55000, got $offset: the shipped ports span 2181 to 7003, so offsets less than $port_step apart would give two ensembles common ports (one's election port the other's quorum port, say) and neither would find a quorum"
fi

classpath() {
  if [[ -n "${ZOOKEEPER_CLASSPATH:-}" ]]; then
    echo "$ZOOKEEPER_CLASSPATH"
  elif [[ -f /usr/share/java/zookeeper.jar ]]; then
    local cp="/usr/share/java/zookeeper.jar"
    # Debian's zookeeper.jar lists its dependencies in its manifest but no logging binding.
    [[ -f /usr/share/java/slf4j-simple.jar ]] && cp="$cp:/usr/share/java/slf4j-simple.jar"
    echo "$cp"
  else
    die "no ZooKeeper: install Debian's package (apt-get install -y zookeeper) or set ZOOKEEPER_CLASSPATH"
  fi
}

# Whether a jar or directory of the classpath holds the Prometheus metrics provider. Zip files keep
# entry names uncompressed, so grep finds the class name in a jar.
has_metrics_provider() {
  local entry file
  IFS=':' read -r -a entries <<< "$1"
  for entry in "${entries[@]}"; do
    for file in $entry; do   # expands "lib/*"
      if [[ -d "$file" && -f "$file/$provider_class.class" ]]; then return 0; fi
      if [[ -f "$file" ]] && grep -qa "$provider_class" "$file"; then return 0; fi
    done
  done
  return 1
}

port() { echo $(( $1 + offset )); }

client_port() { port $(( 2180 + $1 )); }

# The shipped config with this run's data directory and ports.
generate_config() {
  local n=$1 metrics=$2 out="$dir/zk$1/zoo.cfg"
  awk -v off="$offset" -v data="$dir/zk$n/data" -v metrics="$metrics" '
    /^dataDir=/ { print "dataDir=" data; next }
    /^clientPort=/ { split($0, kv, "="); print "clientPort=" kv[2] + off; next }
    /^#metrics# metricsProvider\./ {
      if (metrics != "yes") next
      sub(/^#metrics# /, "")
      if ($0 ~ /^metricsProvider\.httpPort=/) { split($0, kv, "="); print "metricsProvider.httpPort=" kv[2] + off; next }
      print; next
    }
    /^server\.[0-9]+=/ {
      split($0, kv, "="); split(kv[2], p, ":")
      print kv[1] "=" p[1] ":" p[2] + off ":" p[3] + off; next
    }
    { print }
  ' "$configs/zoo$n.cfg" > "$out"
}

pid_of() {
  local file="$dir/zk$1/pid"
  [[ -f "$file" ]] || return 1
  local pid
  pid="$(cat "$file")"
  kill -0 "$pid" 2>/dev/null || return 1
  # A killed server whose new parent does not reap it stays a zombie, which kill -0 still finds.
  if [[ -r "/proc/$pid/stat" && "$(sed 's/.*) //' "/proc/$pid/stat" | cut -d' ' -f1)" == Z ]]; then
    return 1
  fi
  echo "$pid"
}

# A four-letter word to server n; empty when it does not answer.
fourlw() {
  local port
  port="$(client_port "$1")"
  ( exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 0
    printf '%s' "$2" >&3
    timeout 5 cat <&3 ) 2>/dev/null || true
}

mode_of() {
  local mode
  mode="$(fourlw "$1" srvr | sed -n 's/^Mode: //p')"
  echo "${mode:-down}"
}

servers() { if (( $# == 0 )); then echo 1 2 3; else echo "$@"; fi; }

start() {
  local cp metrics=yes n
  cp="$(classpath)"
  if ! has_metrics_provider "$cp"; then
    metrics=no
    echo "ensemble.sh: the Prometheus metrics provider is not on the classpath (Debian's zookeeper package does not ship it): metrics left out" >&2
  fi
  for n in $(servers "$@"); do
    [[ "$n" =~ ^[123]$ ]] || die "no server $n (1, 2 or 3)"
    if pid="$(pid_of "$n")"; then
      echo "server $n already running (pid $pid)"
      continue
    fi
    mkdir -p "$dir/zk$n/data"
    echo "$n" > "$dir/zk$n/data/myid"
    generate_config "$n" "$metrics"
    setsid "$java" -Xms64m -Xmx"$heap" -XX:+UseSerialGC -Djava.net.preferIPv4Stack=true \
      -Dzookeeper.jmx.log4j.disable=true -Dorg.slf4j.simpleLogger.showDateTime=true \
      -cp "$cp" org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zk$n/zoo.cfg" \
      >> "$dir/zk$n/server.log" 2>&1 < /dev/null &
    echo $! > "$dir/zk$n/pid"
    echo "server $n started (pid $!, client port $(client_port "$n"), log $dir/zk$n/server.log)"
  done
  # Wait until each started server serves requests (needs a quorum: two of three).
  local deadline=$(( SECONDS + ${ONCEGATE_ENSEMBLE_START_TIMEOUT:-90} ))
  for n in $(servers "$@"); do
    until [[ "$(mode_of "$n")" =~ ^(leader|follower|standalone)$ ]]; do
      pid_of "$n" > /dev/null || die "server $n exited; see $dir/zk$n/server.log"
      (( SECONDS < deadline )) || die "server $n does not serve requests (no quorum?); see $dir/zk$n/server.log"
      sleep 0.5
    done
  done
}

stop() {
  local n pid
  for n in $(servers "$@"); do
    if pid="$(pid_of "$n")"; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      kill -KILL "$pid" 2>/dev/null || true
      echo "server $n stopped"
    fi
    rm -f "$dir/zk$n/pid"
  done
}

status() {
  local n pid
  for n in 1 2 3; do
    pid="$(pid_of "$n" || echo -)"
    printf 'server %s  pid %-8s  client 127.0.0.1:%s  %s\n' "$n" "$pid" "$(client_port "$n")" "$(mode_of "$n")"
  done
}

leader() {
  local n
  for n in 1 2 3; do
    if [[ "$(mode_of "$n")" == leader ]]; then echo "$n"; return 0; fi
  done
  return 1
}

connect() {
  echo "127.0.0.1:$(client_port 1),127.0.0.1:$(client_port 2),127.0.0.1:$(client_port 3)"
}

ports() {
  local n
  for n in 1 2 3; do
    sed -n -e 's/^clientPort=//p' -e 's/^#metrics# metricsProvider.httpPort=//p' "$configs/zoo$n.cfg"
  done
  sed -n 's/^server\.[0-9]*=[^:]*:\([0-9]*\):\([0-9]*\).*/\1\n\2/p' "$configs/zoo1.cfg"
}

command="${1:-}"
shift || true
case "$command" in
  start) start "$@" ;;
  stop) stop "$@" ;;
  status) status ;;
  leader) leader ;;
  connect) connect ;;
  ports) for p in $(ports | sort -n); do port "$p"; done ;;
  *) die "usage: ensemble.sh start|stop [N…] | status | leader | connect | ports" ;;
esac
