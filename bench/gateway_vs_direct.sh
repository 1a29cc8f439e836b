#!/usr/bin/env bash
# tools/call through toolgate's gateway to a stdio upstream against calling that upstream
# directly, with the same client in the same run (issue 15).
# Usage: bench/gateway_vs_direct.sh [PASSES]   (default 3)
#
# Sides (each started fresh for every measurement; mcp-load on core 0, the server side on
# core 1: the gateway side gets the same one core for toolgate and its upstream that the
# direct side gives the upstream alone):
#   direct   rmcp-bare (`rmcp-peer stdio`, rmcp 3.11.0) spawned by mcp-load: `echo {text}`
#   gateway  the release `toolgate serve` (stdio) with one [[upstreams]] entry running the same
#            rmcp-peer binary over stdio under run_shell's sandbox (the default), its tool
#            `bare__echo` allowed by a rule; the default policy, the audit to the SQLite store,
#            every stage of the pipeline. `[ledger] derived_key_window = "0s"`: echo has no
#            hints, so it is taken as side-effecting, and with derived keys the same arguments
#            would be answered from the ledger after the first call (a replay, not a forward);
#            the measured path is the forward.
# Workloads: echo, sequential (-c 1) and 8 in flight (-c 8); N calls after WARMUP.
# With TOOLGATE_TEST_NODE set (node under node_modules/node/bin, beside
# @modelcontextprotocol/server-everything, as the tests take it), two more rows, one call at a
# time, against server-everything's `echo` over stdio, which says readOnlyHint (and
# idempotent, not destructive, closed world):
#   ev-ro   the gateway's upstream `ev` with trust = ["read_only"]: the claim is taken, so the
#           call is read-only to toolgate: no committed intent, its record only queued
#   ev-se   the same server as upstream `evx` without trust: the claim is not taken, so the call
#           is side-effecting, as the bare echo is: intent and outcome each committed and waited
# Their direct side is server-everything's echo called directly.
# Each pass runs every workload on both sides back to back, alternating which goes first;
# load averages are recorded before each pair. The table gives medians over passes; the
# ratio column is the median of the per-pass ratios gateway / direct.
#
# Environment: MCP_BENCH_DIR (mcp-load and rmcp-bare sources, default bench/ext in the
# repository), N, WARMUP, BENCH_OUT; NO_BUILD=1 runs the binaries already built;
# TOOLGATE_TEST_NODE for the server-everything rows; TOOLGATE_BIN another toolgate binary
# (an earlier commit's, to compare).
set -euo pipefail

PASSES=${1:-3}
REPO=$(cd "$(dirname "$0")/.." && pwd)
SRC=${MCP_BENCH_DIR:-$REPO/bench/ext}
OUT=${BENCH_OUT:-$REPO/target/bench-mcp}
N=${N:-10000}
WARMUP=${WARMUP:-1000}
mkdir -p "$OUT"

if [[ -z ${NO_BUILD:-} ]]; then
    echo "== building (release)" >&2
    cargo build -q --release --manifest-path "$SRC/mcp-load/Cargo.toml" --target-dir "$OUT/ext/mcp-load"
    cargo build -q --release --manifest-path "$SRC/rmcp-bare/Cargo.toml" --target-dir "$OUT/ext/rmcp-bare"
    (cd "$REPO" && cargo build -q --release -p toolgate-cli --bin toolgate)
fi
LOAD=$OUT/ext/mcp-load/release/mcp-load
BARE=$OUT/ext/rmcp-bare/release/rmcp-peer
TG=${TOOLGATE_BIN:-$REPO/target/release/toolgate}

ROOT=$(mktemp -d)
LOGS=$(mktemp -d)
trap 'rm -rf "$ROOT" "$LOGS"' EXIT
cat >"$ROOT/toolgate.toml" <<TOML
[ledger]
derived_key_window = "0s"

[[rules]]
decision = "allow"
tool = "bare__echo"

[[upstreams]]
name = "bare"
command = "$BARE"
args = ["stdio", "--root", "$ROOT"]
TOML
NODE=${TOOLGATE_TEST_NODE:-}
EVERYTHING=
if [[ -n $NODE ]]; then
    EVERYTHING=$(dirname "$(dirname "$(dirname "$NODE")")")/@modelcontextprotocol/server-everything/dist/index.js
    [[ -f $EVERYTHING ]] || { echo "no server-everything at $EVERYTHING" >&2; exit 1; }
    # a workspace of its own: the bare rows' gateway starts no node servers
    mkdir "$ROOT/ev"
    cat >"$ROOT/ev/toolgate.toml" <<TOML
[ledger]
derived_key_window = "0s"

[[rules]]
decision = "allow"
tool = "ev__echo"

[[rules]]
decision = "allow"
tool = "evx__echo"

[[upstreams]]
name = "ev"
command = "$NODE"
args = ["$EVERYTHING", "stdio"]
trust = ["read_only"]
tools = { include = ["echo"] }
startup_timeout_ms = 30000

[[upstreams]]
name = "evx"
command = "$NODE"
args = ["$EVERYTHING", "stdio"]
tools = { include = ["echo"] }
startup_timeout_ms = 30000
TOML
fi
# the upstreams' tool definitions are pinned on the first start, before any measurement
"$TG" tools --workspace "$ROOT" >/dev/null
if [[ -n $NODE ]]; then "$TG" tools --workspace "$ROOT/ev" >/dev/null; fi

ARGS='{"text":"hi"}'
RESULTS=$OUT/gateway-$(date -u +%Y%m%dT%H%M%SZ).jsonl
: >"$RESULTS"
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# run SIDE INFLIGHT PASS LOADAVG [UPSTREAM]: UPSTREAM is bare (default), ev or evx
run() {
    local side=$1 c=$2 up=${5:-bare} cmd tool args=$ARGS workload="echo -c $2"
    if [[ $up != bare ]]; then
        args='{"message":"hi"}'
        workload="everything echo -c $c ($up)"
    fi
    if [[ $side == direct && $up == bare ]]; then
        cmd="$BARE stdio --root $ROOT"
        tool=echo
    elif [[ $side == direct ]]; then
        cmd="$NODE $EVERYTHING stdio"
        tool=echo
    elif [[ $up == bare ]]; then
        cmd="$TG serve --workspace $ROOT"
        tool=bare__echo
    else
        cmd="$TG serve --workspace $ROOT/ev"
        tool=${up}__echo
    fi
    taskset -c 0 "$LOAD" stdio --cmd "taskset -c 1 $cmd" --tool "$tool" --args "$args" -n "$N" \
        -c "$c" --warmup "$WARMUP" --label "$side" --json 2>>"$LOGS/load.err" |
        jq -c --arg side "$side" --arg workload "$workload" --argjson pass "$3" --arg load "$4" \
            '. + {side: $side, workload: $workload, pass: $pass, loadavg: $load}' >>"$RESULTS"
}

for pass in $(seq "$PASSES"); do
    if ((pass % 2)); then order="direct gateway"; else order="gateway direct"; fi
    echo "== pass $pass of $PASSES ($order), load average $(loadavg)" >&2
    for c in 1 8; do
        load=$(loadavg)
        for side in $order; do run "$side" "$c" "$pass" "$load"; done
    done
    if [[ -n $NODE ]]; then
        for up in ev evx; do
            load=$(loadavg)
            for side in $order; do run "$side" 1 "$pass" "$load" "$up"; done
        done
    fi
done

echo "== results: $RESULTS" >&2
python3 - "$RESULTS" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = statistics.median
print("| workload | side | calls/s | p50 µs | p95 µs | p99 µs | errors | gateway / direct |")
print("|---|---|---|---|---|---|---|---|")
for w in sorted({r["workload"] for r in rows}):
    ratios = []
    for p in sorted({r["pass"] for r in rows}):
        d = [r for r in rows if r["workload"] == w and r["side"] == "direct" and r["pass"] == p]
        g = [r for r in rows if r["workload"] == w and r["side"] == "gateway" and r["pass"] == p]
        if d and g and d[0]["calls_per_s"]:
            ratios.append(g[0]["calls_per_s"] / d[0]["calls_per_s"])
    for side in ["direct", "gateway"]:
        rs = [r for r in rows if r["workload"] == w and r["side"] == side]
        err = sum(r.get("errors", 0) + (r.get("warmup_errors") or 0) for r in rs)
        ratio = f"{med(ratios):.2f} ({', '.join(f'{x:.2f}' for x in ratios)})" if side == "gateway" and ratios else ""
        print(f"| {w} | {side} | {med(r['calls_per_s'] for r in rs):,.0f} | {med(r['p50_us'] for r in rs):.0f} | "
              f"{med(r['p95_us'] for r in rs):.0f} | {med(r['p99_us'] for r in rs):.0f} | {err} | {ratio} |")
print()
print("load averages (1, 5, 15 min) before each pair, by pass:")
for p in sorted({r["pass"] for r in rows}):
    print(f"  pass {p}: " + "; ".join(f"{r['workload']}: {r['loadavg']}" for r in rows if r["pass"] == p and r["side"] == "direct"))
PY
