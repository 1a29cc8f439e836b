#!/usr/bin/env bash
# Measures toolgate's search_code against ripgrep on the same tree and the same queries, in
# the same run.
#
# toolgate's side is one search_code call through the whole pipeline (sanitize, decode, guard,
# authorize, budget, execute, finish, record), run by the `search` example of toolgate-tools;
# ripgrep's side is `rg -n --column` with the matching flags, its output sent to /dev/null.
# Both respect .gitignore/.ignore outside git repositories (rg: --no-require-git), skip hidden
# and binary files, and do not follow links. Before timing, each query's match count is
# compared (total_matches against the number of lines rg prints).
#
# usage: bench/search_vs_rg.sh [TREE] [RUNS]
#   TREE  directory to search (default: the cargo registry sources, ~/.cargo/registry/src/*)
#   RUNS  timed runs per command (default 20)
# needs: rg (apt-get install -y ripgrep); hyperfine if present (apt-get install -y hyperfine),
# otherwise a loop that alternates the two commands and reports the mean wall time.
set -euo pipefail

cd "$(dirname "$0")/.."
TREE=${1:-$(ls -d "$HOME"/.cargo/registry/src/*/ 2>/dev/null | head -n 1)}
RUNS=${2:-20}
if [ -z "$TREE" ] || [ ! -d "$TREE" ]; then
    echo "no tree to search: pass a directory" >&2
    exit 2
fi
command -v rg >/dev/null || { echo "rg is missing: apt-get install -y ripgrep" >&2; exit 2; }

cargo build --quiet --release -p toolgate-tools --example search
TARGET=${CARGO_TARGET_DIR:-target}
TG="$TARGET/release/examples/search"

echo "tree: $TREE"
echo "files: $(find "$TREE" -type f | wc -l), size: $(du -sh "$TREE" | cut -f1)"
echo "machine: $(nproc) cores; $(rg --version | head -n 1); $(command -v hyperfine >/dev/null && hyperfine --version || echo 'no hyperfine')"
echo

# name | toolgate flags | rg flags | pattern
QUERIES=(
    "literal|--literal|-F|fn main"
    "regex||-|impl\\s+\\w+\\s+for"
    "ignore-case|--ignore-case|-i|unsafe"
    "no-match|--literal|-F|ZZQX_NO_SUCH_TEXT_QXZZ"
    "dense||-|self"
)

mean_ms() { # command...: mean wall time in ms over $RUNS runs (used without hyperfine)
    local total=0 start end
    for _ in $(seq "$RUNS"); do
        start=$(date +%s%N)
        "$@" >/dev/null
        end=$(date +%s%N)
        total=$((total + (end - start) / 1000))
    done
    echo "$((total / RUNS / 1000))"
}

for q in "${QUERIES[@]}"; do
    IFS='|' read -r name tgflag rgflag pattern <<<"$q"
    tg_cmd=("$TG" "$TREE" "$pattern")
    rg_cmd=(rg -n --column --no-require-git)
    [ -n "$tgflag" ] && tg_cmd+=("$tgflag")
    [ "$rgflag" != "-" ] && rg_cmd+=("$rgflag")
    rg_cmd+=(-e "$pattern" "$TREE")

    tg_count=$("${tg_cmd[@]}" | cut -d' ' -f1)
    rg_count=$("${rg_cmd[@]}" | wc -l || true)
    echo "== $name: pattern '$pattern' matches: toolgate $tg_count, rg $rg_count"
    if [ "$tg_count" != "$rg_count" ]; then
        echo "   (counts differ)"
    fi
    if command -v hyperfine >/dev/null; then
        hyperfine -N -i --warmup 3 --runs "$RUNS" --style basic \
            -n toolgate "$(printf '%q ' "${tg_cmd[@]}")" \
            -n rg "$(printf '%q ' "${rg_cmd[@]}")" 2>&1 |
            grep -E 'Time|±|faster|Benchmark' || true
    else
        tg_ms=0 rg_ms=0
        for _ in 1 2; do # alternate: toolgate, rg, toolgate, rg
            tg_ms=$((tg_ms + $(mean_ms "${tg_cmd[@]}")))
            rg_ms=$((rg_ms + $(mean_ms "${rg_cmd[@]}")))
        done
        echo "   toolgate $((tg_ms / 2)) ms, rg $((rg_ms / 2)) ms (mean of $((2 * RUNS)) runs each)"
    fi
    echo
done
