#!/usr/bin/env bash
# toolgate's MCP server against a bare rmcp server exposing the same calls, in the same run
# (issue 3). Usage: bench/mcp_vs_bare.sh [PASSES]   (default 3)
#
# Sides (each started fresh for every measurement, pinned to core 1; mcp-load on core 0):
#   bare      rmcp-bare (rmcp 3.11.0, `rmcp-peer`): `echo {text}` and `read_file {path}` as
#             plain rmcp tools, no pipeline, no audit; HTTP with --nodelay (toolgate always
#             sets TCP_NODELAY, so both do)
#   toolgate  the release `toolgate serve` binary with its defaults: built-in tools, default
#             policy, approvals sent to the client, audit records to the SQLite store
#             (<workspace>/.toolgate/toolgate.db); Host/Origin checks, body cap, TCP_NODELAY on;
#             `--no-token`, because mcp-load sends no Authorization header. `read_file` rows
#             run this binary; `echo` rows run examples/serve_echo.rs: the same server with
#             one more read-only tool, `echo`, since the built-in registry has none.
# Workloads: tools/call over streamable HTTP (2025-11-25, one session, 32 keep-alive
# connections), over stdio (sequential), stdio start-up to the initialize response.
# Each pass runs every workload on both sides back to back, alternating which goes first;
# `uptime` load averages are recorded before each pair. The table gives medians over passes;
# the ratio column is the median of the per-pass ratios toolgate / bare.
#
# Environment: MCP_BENCH_DIR (the mcp-load and rmcp-bare sources, default ../shared/bench
# next to the repository), N_HTTP, N_STDIO, WARMUP, STARTUP_RUNS, BENCH_OUT; NO_BUILD=1 runs
# the binaries already built.
set -euo pipefail

PASSES=${1:-3}
REPO=$(cd "$(dirname "$0")/.." && pwd)
SRC=${MCP_BENCH_DIR:-$REPO/../shared/bench}
OUT=${BENCH_OUT:-$REPO/target/bench-mcp}
N_HTTP=${N_HTTP:-20000}
N_STDIO=${N_STDIO:-10000}
WARMUP=${WARMUP:-1000}
STARTUP_RUNS=${STARTUP_RUNS:-40}
mkdir -p "$OUT"

if [[ -z ${NO_BUILD:-} ]]; then
    echo "== building (release)" >&2
    cargo build -q --release --manifest-path "$SRC/mcp-load/Cargo.toml" --target-dir "$OUT/ext/mcp-load"
    cargo build -q --release --manifest-path "$SRC/rmcp-bare/Cargo.toml" --target-dir "$OUT/ext/rmcp-bare"
    (cd "$REPO" && cargo build -q --release -p toolgate-cli --bin toolgate --example serve_echo)
fi
LOAD=$OUT/ext/mcp-load/release/mcp-load
BARE=$OUT/ext/rmcp-bare/release/rmcp-peer
TG=$REPO/target/release/toolgate
TG_ECHO=$REPO/target/release/examples/serve_echo

ROOT=$(mktemp -d)
LOGS=$(mktemp -d)
SERVER_PID=
cleanup() {
    if [[ -n $SERVER_PID ]]; then kill "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$ROOT" "$LOGS"
}
trap cleanup EXIT
# a 64-byte, one-line file for read_file
printf '%s\n' 'a small file for read_file: sixty-four bytes, one line, no more' >"$ROOT/small.txt"
[[ $(wc -c <"$ROOT/small.txt") -eq 64 ]] || { echo "small.txt is not 64 bytes" >&2; exit 1; }

ECHO_ARGS='{"text":"hi"}'
READ_ARGS='{"path":"small.txt"}'
RESULTS=$OUT/results-$(date -u +%Y%m%dT%H%M%SZ).jsonl
: >"$RESULTS"

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# server_cmd SIDE TOOL TRANSPORT: the command line of one side's server
server_cmd() {
    local side=$1 tool=$2 transport=$3
    if [[ $side == bare ]]; then
        if [[ $transport == http ]]; then
            echo "$BARE http --root $ROOT --port 0 --nodelay"
        else
            echo "$BARE stdio --root $ROOT"
        fi
        return
    fi
    local bin=$TG
    [[ $tool == echo ]] && bin=$TG_ECHO
    if [[ $bin == "$TG" ]]; then bin="$TG serve"; fi
    if [[ $transport == http ]]; then
        echo "$bin --workspace $ROOT --http 127.0.0.1:0 --no-token"
    else
        echo "$bin --workspace $ROOT"
    fi
}

# record SIDE WORKLOAD PASS LOADAVG: appends mcp-load's JSON (stdin) with the run's labels
record() {
    jq -c --arg side "$1" --arg workload "$2" --argjson pass "$3" --arg load "$4" \
        '. + {side: $side, workload: $workload, pass: $pass, loadavg: $load}' >>"$RESULTS"
}

# http_run SIDE TOOL ARGS PASS LOADAVG
http_run() {
    local side=$1 tool=$2 args=$3 pass=$4 load=$5 cmd url=
    cmd=$(server_cmd "$side" "$tool" http)
    : >"$LOGS/server.err"
    # shellcheck disable=SC2086
    taskset -c 1 $cmd 2>"$LOGS/server.err" &
    SERVER_PID=$!
    for _ in $(seq 400); do
        url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$LOGS/server.err" | head -1 || true)
        [[ -n $url ]] && break
        sleep 0.025
    done
    [[ -n $url ]] || { echo "$side did not start: $(cat "$LOGS/server.err")" >&2; exit 1; }
    taskset -c 0 "$LOAD" http --url "$url" --tool "$tool" --args "$args" -n "$N_HTTP" -c 32 \
        --warmup "$WARMUP" --server-pid "$SERVER_PID" --label "$side" --json 2>>"$LOGS/load.err" |
        record "$side" "http $tool" "$pass" "$load"
    kill "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
}

# stdio_run SIDE TOOL ARGS PASS LOADAVG
stdio_run() {
    local cmd
    cmd=$(server_cmd "$1" "$2" stdio)
    taskset -c 0 "$LOAD" stdio --cmd "taskset -c 1 $cmd" --tool "$2" --args "$3" -n "$N_STDIO" \
        -c 1 --warmup "$WARMUP" --label "$1" --json 2>>"$LOGS/load.err" |
        record "$1" "stdio $2" "$4" "$5"
}

# startup_run SIDE PASS LOADAVG (toolgate: the `toolgate serve` binary)
startup_run() {
    local cmd
    cmd=$(server_cmd "$1" read_file stdio)
    taskset -c 0 "$LOAD" startup --cmd "taskset -c 1 $cmd" -r "$STARTUP_RUNS" --label "$1" \
        --json 2>>"$LOGS/load.err" | record "$1" "startup" "$2" "$3"
}

for pass in $(seq "$PASSES"); do
    if ((pass % 2)); then order="bare toolgate"; else order="toolgate bare"; fi
    echo "== pass $pass of $PASSES ($order), load average $(loadavg)" >&2
    for w in "http echo" "http read_file" "stdio echo" "stdio read_file" "startup"; do
        load=$(loadavg)
        for side in $order; do
            case $w in
            "http echo") http_run "$side" echo "$ECHO_ARGS" "$pass" "$load" ;;
            "http read_file") http_run "$side" read_file "$READ_ARGS" "$pass" "$load" ;;
            "stdio echo") stdio_run "$side" echo "$ECHO_ARGS" "$pass" "$load" ;;
            "stdio read_file") stdio_run "$side" read_file "$READ_ARGS" "$pass" "$load" ;;
            startup) startup_run "$side" "$pass" "$load" ;;
            esac
        done
    done
done

echo "== results: $RESULTS" >&2
python3 - "$RESULTS" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = statistics.median
def pick(w, side):
    return [r for r in rows if r["workload"] == w and r["side"] == side]
print("| workload | side | calls/s | p50 µs | p95 µs | p99 µs | peak RSS MiB | server CPU µs/call | errors | toolgate / bare |")
print("|---|---|---|---|---|---|---|---|---|---|")
for w in ["http echo", "http read_file", "stdio echo", "stdio read_file"]:
    ratios = []
    for p in sorted({r["pass"] for r in rows}):
        b = [r for r in pick(w, "bare") if r["pass"] == p]
        t = [r for r in pick(w, "toolgate") if r["pass"] == p]
        if b and t and b[0]["calls_per_s"]:
            ratios.append(t[0]["calls_per_s"] / b[0]["calls_per_s"])
    for side in ["bare", "toolgate"]:
        rs = pick(w, side)
        if not rs:
            continue
        rss = max((r.get("server_peak_rss_kb") or 0) for r in rs) / 1024
        err = sum(r.get("errors", 0) + (r.get("warmup_errors") or 0) for r in rs)
        ratio = f"{med(ratios):.2f} ({', '.join(f'{x:.2f}' for x in ratios)})" if side == "toolgate" and ratios else ""
        print(f"| {w} | {side} | {med(r['calls_per_s'] for r in rs):,.0f} | {med(r['p50_us'] for r in rs):.0f} | "
              f"{med(r['p95_us'] for r in rs):.0f} | {med(r['p99_us'] for r in rs):.0f} | {rss:.1f} | "
              f"{med(r['server_cpu_us_per_call'] or 0 for r in rs):.0f} | {err} | {ratio} |")
print()
print("| start-up (stdio, spawn to initialize response) | median of medians ms | min ms | max ms | RSS after init MiB |")
print("|---|---|---|---|---|")
for side in ["bare", "toolgate"]:
    rs = pick("startup", side)
    if rs:
        print(f"| {side} | {med(r['median_ms'] for r in rs):.1f} | {min(r['min_ms'] for r in rs):.1f} | "
              f"{max(r['max_ms'] for r in rs):.1f} | {med(r['rss_after_init_kb_median'] for r in rs) / 1024:.1f} |")
print()
print("load averages (1, 5, 15 min) before each pair, by pass:")
for p in sorted({r["pass"] for r in rows}):
    loads = {}
    for r in rows:
        if r["pass"] == p:
            loads[r["workload"]] = r["loadavg"]
    print(f"  pass {p}: " + "; ".join(f"{w}: {l}" for w, l in loads.items()))
EOF
