#!/bin/sh
# Model-check the task migrator's Promela model (kernel/migrate.pml) with
# Spin: make test-spin. The protocol as built must pass every check; each
# seeded bug must be caught, or this fails. docs/migration.md explains the
# configurations. Usage: tests/spin/run.sh [work directory]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
model=$root/kernel/migrate.pml
mkdir -p "${1:-$root/build/spin}"
work=$(cd "${1:-$root/build/spin}" && pwd)
command -v spin >/dev/null || { echo "test-spin: spin is not installed (make apt)"; exit 1; }

rm -f "$work"/*.line
# check <name> <expect: pass|fail> <pan flags> <cc flags> <spin -D flags...>
# Each check has its own directory (spin writes pan.c where it runs), so
# that the long one runs beside the others on a second core. pan.c takes
# longer to compile with -O2 than a small search takes: -O2 only for the
# long search (CC_OPT).
check() {
    name=$1 expect=$2 pan_flags=$3 cc_flags=$4
    shift 4
    mkdir -p "$work/$name"
    cd "$work/$name"
    # in a subshell, whose `times` then gives the CPU time of spin, cc and
    # pan: comparable from one machine to another, unlike wall time
    (
        spin "$@" -a "$model" >"$name.spin" 2>&1 || exit 1
        cc ${CC_OPT:--O0} -w -DMEMLIM=4096 -DCOLLAPSE $cc_flags -o "pan_$name" pan.c
        # pan's exit status does not tell errors apart: read its report
        "./pan_$name" -m200000 $pan_flags >"$name.out" 2>&1 || true
        times >"$name.times"
    ) || { cat "$name.spin"; exit 1; }
    errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' "$name.out")
    states=$(sed -n 's/^ *\([0-9][0-9.e+]*\) states, stored.*/\1/p' "$name.out")
    secs=$(sed -n 2p "$name.times" | awk 'function t(x, a) { sub(/s$/, "", x); split(x, a, "m");
        return a[1] * 60 + a[2] } { printf "%.1f", t($1) + t($2) }')
    what=$(grep -m1 -E "assertion violated|acceptance cycle|invalid end state" "$name.out" || true)
    if grep -q -E "max search depth too small|out of memory|Search not completed" "$name.out" &&
        [ "$expect" = pass ]; then
        errors=incomplete
    fi
    if [ "$expect" = pass ] && [ "$errors" = 0 ]; then
        verdict=ok
    elif [ "$expect" = fail ] && [ -n "$errors" ] && [ "$errors" != 0 ] && [ -n "$what" ]; then
        verdict="ok (caught: $what)"
    else
        verdict="FAILED (expected $expect, errors=${errors:-?}) see $work/$name/$name.out"
    fi
    printf '%-20s %-30s %10s states %6ss CPU  %s\n' "$name" "$*" "${states:-?}" "$secs" "$verdict" \
        >"$work/$name.line"
}

echo "Spin: kernel/migrate.pml (3 processors, a sender on each; K messages per sender)"
# safety: assertions (never on two processors, order, no loss or duplicate,
# timer once) and invalid end states (nobody stuck), every interleaving
CC_OPT=-O2 check safety_k2 pass "" -DNOCLAIM -DK=2 -DNO_TIMER &
long=$!
check safety_k1_timer pass "" -DNOCLAIM -DK=1
# liveness: the protocol terminates on every run (no cycle avoids Final)
check terminates_k1 pass "-a" "" -DK=1
# seeded bugs the checker must catch
check bug_unfreeze_first fail "" -DNOCLAIM -DK=1 -DBUG_UNFREEZE_FIRST
check bug_no_wait fail "" -DNOCLAIM -DK=1 -DBUG_NO_WAIT
check bug_no_held fail "" -DNOCLAIM -DK=1 -DBUG_NO_HELD
# a processor dies at any moment: the living give up by their deadlines
# and agree; a timeout shorter than the exchange (spurious) still never
# puts the task on two processors, unless the source resumes after STATE
check crash_k1 pass "" -DNOCLAIM -DCRASH -DK=1 -DNO_TIMER
check spurious_k1 pass "" -DNOCLAIM -DSPURIOUS -DK=1 -DNO_TIMER
check bug_sent_resumes fail "" -DNOCLAIM -DSPURIOUS -DK=1 -DNO_TIMER -DBUG_SENT_RESUMES
wait $long
for n in safety_k2 safety_k1_timer terminates_k1 bug_unfreeze_first bug_no_wait bug_no_held \
    crash_k1 spurious_k1 bug_sent_resumes; do
    cat "$work/$n.line"
done
! grep -q FAILED "$work"/*.line
