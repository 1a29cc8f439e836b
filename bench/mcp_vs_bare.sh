#!/usr/bin/env bash
# toolgate's MCP server against a bare rmcp server exposing the same calls, in the same run
# (issues 3 and 18). Usage: bench/mcp_vs_bare.sh [PASSES]   (default 3)
#
# One command: builds what it needs (release), runs every workload on both sides, alternating,
# PASSES times, and prints one table of medians with the ratio toolgate / bare and the issue-18
# target of each row, then the load averages it ran under. Raw results (one JSON object per
# measurement) stay in target/bench-mcp/results-*.jsonl.
#
# Sides (each started fresh for every measurement, pinned to core 1 with taskset; mcp-load on
# core 0):
#   bare      rmcp-bare (rmcp 3.11.0, `rmcp-peer`): `echo {text}` and `read_file {path}` as
#             plain rmcp tools, no pipeline, no audit; HTTP with --nodelay (toolgate always
#             sets TCP_NODELAY, so both do)
#   toolgate  the release `toolgate serve` binary with its defaults: built-in tools, default
#             policy, approvals sent to the client, audit records to the SQLite store
#             (<workspace>/.toolgate/toolgate.db), results past the cap spilled to the same
#             store; Host/Origin checks, body cap, TCP_NODELAY on; `--no-token`, because
#             mcp-load sends no Authorization header. `read_file` rows run this binary; `echo`
#             rows run examples/serve_echo.rs: the same server with one more read-only tool,
#             `echo`, since the built-in registry has none.
#
# Workloads (WORKLOADS, space-separated, default "read2 read32k read64k stdio-echo startup"):
#   read2       read_file of a 2-byte file over streamable HTTP (2025-11-25, one session,
#               C_HTTP keep-alive connections, default 16)
#   read32k     the same, a 32 KiB file (source-like lines, quotes and tabs included)
#   read64k     the same, a 64 KiB file: read_file's defaults return its first 48 KiB of lines
#               (with `truncated` and `next_offset`), cut further when past the 64 KiB cap
#   http-echo   echo over streamable HTTP
#   stdio-echo  echo over stdio, one call at a time (the shared bench's harness)
#   stdio-read  read_file of the 2-byte file over stdio, one call at a time
#   startup     spawn to the `initialize` answer over stdio, STARTUP_RUNS times
# CPU per call is the server's utime + stime (/proc/PID/stat) over the measured calls divided
# by the calls; peak RSS is the server's VmHWM at the end of an HTTP run (mcp-load reads both).
# Each pass runs every workload on both sides back to back, alternating which goes first; the
# load average is read before each pair. Rows give medians over passes; the ratio is the median
# of the per-pass ratios (each pass's ratios in brackets).
#
# Environment: MCP_BENCH_DIR (the mcp-load and rmcp-bare sources, default bench/ext in the
# repository), N_HTTP, N_STDIO, WARMUP, C_HTTP, STARTUP_RUNS, BENCH_OUT, WORKLOADS;
# NO_BUILD=1 runs the binaries already built; TOOLGATE_BIN and TOOLGATE_ECHO_BIN run other
# builds of toolgate (a copy of an earlier commit's binaries, to compare before and after).
set -euo pipefail

PASSES=${1:-3}
REPO=$(cd "$(dirname "$0")/.." && pwd)
SRC=${MCP_BENCH_DIR:-$REPO/bench/ext}
OUT=${BENCH_OUT:-$REPO/target/bench-mcp}
N_HTTP=${N_HTTP:-20000}
N_STDIO=${N_STDIO:-10000}
WARMUP=${WARMUP:-1000}
C_HTTP=${C_HTTP:-16}
STARTUP_RUNS=${STARTUP_RUNS:-40}
WORKLOADS=${WORKLOADS:-read2 read32k read64k stdio-echo startup}
mkdir -p "$OUT"

if [[ -z ${NO_BUILD:-} ]]; then
    echo "== building (release)" >&2
    cargo build -q --release --manifest-path "$SRC/mcp-load/Cargo.toml" --target-dir "$OUT/ext/mcp-load"
    cargo build -q --release --manifest-path "$SRC/rmcp-bare/Cargo.toml" --target-dir "$OUT/ext/rmcp-bare"
    (cd "$REPO" && cargo build -q --release -p toolgate-cli --bin toolgate --example serve_echo)
fi
LOAD=$OUT/ext/mcp-load/release/mcp-load
BARE=$OUT/ext/rmcp-bare/release/rmcp-peer
TG=${TOOLGATE_BIN:-$REPO/target/release/toolgate}
TG_ECHO=${TOOLGATE_ECHO_BIN:-$REPO/target/release/examples/serve_echo}
for bin in "$LOAD" "$BARE" "$TG" "$TG_ECHO"; do
    [[ -x $bin ]] || { echo "missing $bin (run without NO_BUILD=1)" >&2; exit 1; }
done

ROOT=$(mktemp -d)
LOGS=$(mktemp -d)
SERVER_PID=
cleanup() {
    if [[ -n $SERVER_PID ]]; then kill "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$ROOT" "$LOGS"
}
trap cleanup EXIT

# The files read_file reads: 2 bytes, and 32 KiB and 64 KiB of source-like lines (4 to 96
# bytes, some with quotes, backslashes and tabs), the same bytes on every run.
printf 'x\n' >"$ROOT/data2.txt"
python3 - "$ROOT" <<'EOF'
import sys
words = ["let", "value", "fn", "self", "match", "return", "Some(x)", "\"quoted\"", "map",
         "iter()", "&mut", "=>", "{", "}", "\\n", "\tindent", "0x1f", "Result<T>", "//", "é"]
def text(size):
    out, i, seed = [], 0, 12345
    total = 0
    while total < size:
        seed = (seed * 1103515245 + 12345) % (1 << 31)
        n = 1 + seed % 14
        line = "    " * (seed % 3) + " ".join(words[(seed >> (4 + k)) % len(words)] for k in range(n))
        line = line[:96] + "\n"
        out.append(line)
        total += len(line.encode())
    data = "".join(out).encode()[: size - 1] + b"\n"
    # a cut may split "é": keep the file valid UTF-8
    while True:
        try:
            data.decode()
            return data
        except UnicodeDecodeError:
            data = data[:-2] + b"\n"
for name, size in [("data32k.txt", 32 << 10), ("data64k.txt", 64 << 10)]:
    data = text(size)
    data += b"x" * (size - len(data) - 1) + b"\n" if len(data) < size else b""
    open(f"{sys.argv[1]}/{name}", "wb").write(data)
EOF
[[ $(wc -c <"$ROOT/data2.txt") -eq 2 && $(wc -c <"$ROOT/data32k.txt") -eq 32768 &&
    $(wc -c <"$ROOT/data64k.txt") -eq 65536 ]] || { echo "data files of the wrong size" >&2; exit 1; }

ECHO_ARGS='{"text":"hi"}'
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
    local bin="$TG serve"
    [[ $tool == echo ]] && bin=$TG_ECHO
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

# http_run SIDE WORKLOAD TOOL ARGS PASS LOADAVG
http_run() {
    local side=$1 workload=$2 tool=$3 args=$4 pass=$5 load=$6 cmd url=
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
    taskset -c 0 "$LOAD" http --url "$url" --tool "$tool" --args "$args" -n "$N_HTTP" -c "$C_HTTP" \
        --warmup "$WARMUP" --server-pid "$SERVER_PID" --label "$side" --json 2>>"$LOGS/load.err" |
        record "$side" "$workload" "$pass" "$load"
    kill "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
}

# stdio_run SIDE WORKLOAD TOOL ARGS PASS LOADAVG
stdio_run() {
    local cmd
    cmd=$(server_cmd "$1" "$3" stdio)
    taskset -c 0 "$LOAD" stdio --cmd "taskset -c 1 $cmd" --tool "$3" --args "$4" -n "$N_STDIO" \
        -c 1 --warmup "$WARMUP" --label "$1" --json 2>>"$LOGS/load.err" |
        record "$1" "$2" "$5" "$6"
}

# startup_run SIDE PASS LOADAVG (toolgate: the `toolgate serve` binary)
startup_run() {
    local cmd
    cmd=$(server_cmd "$1" read_file stdio)
    taskset -c 0 "$LOAD" startup --cmd "taskset -c 1 $cmd" -r "$STARTUP_RUNS" --label "$1" \
        --json 2>>"$LOGS/load.err" | record "$1" startup "$2" "$3"
}

echo "== toolgate: $TG ($(cd "$REPO" && git describe --always --dirty 2>/dev/null || echo '?'))" >&2
for pass in $(seq "$PASSES"); do
    if ((pass % 2)); then order="bare toolgate"; else order="toolgate bare"; fi
    echo "== pass $pass of $PASSES ($order), load average $(loadavg)" >&2
    for w in $WORKLOADS; do
        load=$(loadavg)
        for side in $order; do
            case $w in
            read2) http_run "$side" "$w" read_file '{"path":"data2.txt"}' "$pass" "$load" ;;
            read32k) http_run "$side" "$w" read_file '{"path":"data32k.txt"}' "$pass" "$load" ;;
            read64k) http_run "$side" "$w" read_file '{"path":"data64k.txt"}' "$pass" "$load" ;;
            http-echo) http_run "$side" "$w" echo "$ECHO_ARGS" "$pass" "$load" ;;
            stdio-echo) stdio_run "$side" "$w" echo "$ECHO_ARGS" "$pass" "$load" ;;
            stdio-read) stdio_run "$side" "$w" read_file '{"path":"data2.txt"}' "$pass" "$load" ;;
            startup) startup_run "$side" "$pass" "$load" ;;
            *) echo "unknown workload $w" >&2; exit 1 ;;
            esac
        done
    done
done

echo "== results: $RESULTS" >&2
python3 - "$RESULTS" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = statistics.median
passes = sorted({r["pass"] for r in rows})
names = {
    "read2": "HTTP read_file 2 B, 16 clients",
    "read32k": "HTTP read_file 32 KiB, 16 clients",
    "read64k": "HTTP read_file 64 KiB, 16 clients",
    "http-echo": "HTTP echo, 16 clients",
    "stdio-echo": "stdio echo, sequential",
    "stdio-read": "stdio read_file 2 B, sequential",
}
# issue 18's targets: toolgate calls/s at least this share of the bare server's
targets = {"read2": 0.9, "read32k": 0.8, "read64k": 0.7, "stdio-echo": 0.95}
def one(w, side, p):
    rs = [r for r in rows if r["workload"] == w and r["side"] == side and r["pass"] == p]
    return rs[0] if rs else None
def ratios(w, key, invert=False):
    out = []
    for p in passes:
        b, t = one(w, "bare", p), one(w, "toolgate", p)
        if b and t and b.get(key) and t.get(key):
            out.append(b[key] / t[key] if invert else t[key] / b[key])
    return out
def fmt_ratios(xs):
    return f"{med(xs):.2f} ({', '.join(f'{x:.2f}' for x in xs)})" if xs else "-"
def medof(w, side, key):
    xs = [r[key] for r in rows if r["workload"] == w and r["side"] == side and r.get(key) is not None]
    return med(xs) if xs else None
errors = sum(r.get("errors", 0) + (r.get("warmup_errors") or 0) for r in rows if r["workload"] != "startup")
print("| workload | bare calls/s | toolgate calls/s | toolgate / bare (passes) | target | "
      "CPU µs/call bare | CPU µs/call toolgate | p50 µs bare / toolgate | peak RSS MiB bare / toolgate |")
print("|---|---|---|---|---|---|---|---|---|")
for w in names:
    if not any(r["workload"] == w for r in rows):
        continue
    rs = ratios(w, "calls_per_s")
    tgt = targets.get(w)
    verdict = "-" if tgt is None or not rs else (f"≥ {tgt}: " + ("met" if med(rs) >= tgt else "NOT met"))
    def n(v, f="{:,.0f}"):
        return "-" if v is None else f.format(v)
    rss = [max((r.get("server_peak_rss_kb") or 0) for r in rows if r["workload"] == w and r["side"] == s) / 1024
           for s in ("bare", "toolgate")]
    print(f"| {names[w]} | {n(medof(w, 'bare', 'calls_per_s'))} | {n(medof(w, 'toolgate', 'calls_per_s'))} | "
          f"{fmt_ratios(rs)} | {verdict} | {n(medof(w, 'bare', 'server_cpu_us_per_call'))} | "
          f"{n(medof(w, 'toolgate', 'server_cpu_us_per_call'))} | {n(medof(w, 'bare', 'p50_us'))} / "
          f"{n(medof(w, 'toolgate', 'p50_us'))} | {rss[0]:.1f} / {rss[1]:.1f} |")
print()
if any(r["workload"] == "startup" for r in rows):
    rs = ratios("startup", "median_ms")
    print("| stdio start-up to the initialize answer | bare ms | toolgate ms | toolgate / bare (passes) | target |")
    print("|---|---|---|---|---|")
    verdict = "≤ 2: " + ("met" if rs and med(rs) <= 2 else "NOT met")
    print(f"| median of the pass medians | {medof('startup', 'bare', 'median_ms'):.1f} | "
          f"{medof('startup', 'toolgate', 'median_ms'):.1f} | {fmt_ratios(rs)} | {verdict} |")
    print()
http = [r for r in rows if r["side"] == "toolgate" and r["workload"] in ("read2", "read32k", "read64k", "http-echo")]
if http:
    peak = max((r.get("server_peak_rss_kb") or 0) for r in http) / 1024
    print(f"toolgate peak RSS under HTTP load: {peak:.1f} MiB (target ≤ 24 MiB: {'met' if peak <= 24 else 'NOT met'})")
print(f"errors (every answer checked by mcp-load): {errors}")
print("load averages (1, 5, 15 min) before each pair, by pass:")
for p in passes:
    loads = {}
    for r in rows:
        if r["pass"] == p:
            loads[r["workload"]] = r["loadavg"]
    print(f"  pass {p}: " + "; ".join(f"{w}: {l}" for w, l in loads.items()))
EOF
