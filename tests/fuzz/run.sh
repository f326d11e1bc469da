#!/usr/bin/env bash
# Build and run the fuzz targets (docs/reliability.md).
#   tests/fuzz/run.sh test [RUNS]     replay tests/fuzz/regressions, then RUNS inputs
#                                     per target from the committed corpus, seed 1
#                                     (make test-fuzz; deterministic, seconds)
#   tests/fuzz/run.sh fuzz [SECONDS]  SECONDS per target, new inputs kept in
#                                     build/fuzz/corpus/<binary> across runs (make fuzz)
# A crash leaves its input in build/fuzz/crashes/; once fixed, it belongs in
# tests/fuzz/regressions/<target>/ so every `make test` replays it.
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=${1:-test}
build=build/fuzz

cmake -S tests/fuzz -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang >/dev/null
cmake --build "$build" >/dev/null
mkdir -p "$build/crashes"

# binary:corpus (the API target runs against each run-to-completion model)
targets="fuzz_app:app fuzz_api_fifo:api fuzz_api_priority:api fuzz_api_stack:api fuzz_simcfg:simcfg fuzz_lowpan:lowpan fuzz_remote:remote fuzz_cc2420_rx:cc2420_rx fuzz_migrate:migrate"

for t in $targets; do
    bin=${t%%:*}
    name=${t##*:}
    exe="$build/$bin"
    regressions=(tests/fuzz/regressions/"$name"/*)
    if [ -e "${regressions[0]}" ]; then
        "$exe" "${regressions[@]}" >"$build/$bin.regressions.log" 2>&1 ||
            { cat "$build/$bin.regressions.log"; echo "$bin: a regression input fails"; exit 1; }
    fi
    if [ "$mode" = test ]; then
        work="$build/test-corpus/$bin"
        rm -rf "$work"
        limit=(-runs="${2:-20000}" -seed=1)
    else
        work="$build/corpus/$bin"
        limit=(-max_total_time="${2:-60}")
    fi
    mkdir -p "$work"
    start=$(date +%s.%N)
    if ! "$exe" "${limit[@]}" -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$build/crashes/$bin-" "$work" "tests/fuzz/corpus/$name" \
        >"$build/$bin.log" 2>&1; then
        tail -n 40 "$build/$bin.log"
        echo "$bin: crash, input in $build/crashes/ (log $build/$bin.log)"
        exit 1
    fi
    end=$(date +%s.%N)
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/$bin.log")
    cov=$(grep -E '^#[0-9]+.*(DONE|INITED)' "$build/$bin.log" | tail -n 1 | sed -E 's/.*cov: ([0-9]+) ft: ([0-9]+).*/cov \1, ft \2/')
    printf '%-18s %8s inputs  %-18s %5.1f s  regressions: %d\n' "$bin" "$runs" "$cov" \
        "$(awk "BEGIN { print $end - $start }")" "$(ls tests/fuzz/regressions/"$name" 2>/dev/null | wc -l)"
done
