#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Record host results: build the 32-bit (main) and 64-bit tools, run each
# twice, compare the two runs' medians, plot run 1. Writes to results/:
#   host-<cpu>.json, host-<cpu>-run2.json    i386, runs 1 and 2
#   host-<cpu>.md                            i386 run 1 as a Markdown table
#   host-<cpu>.svg                           i386 run 1, plotted
#   host-<cpu>-x86_64.json, ...-x86_64.md    64-bit subset
#   host-<cpu>-compare.txt                   run 1 against run 2
# On a host that cannot run the i386 build, the x86_64 build takes the
# main place: host-<cpu>-x86_64.json, -x86_64-run2.json, .md, .svg, ...
#
# usage: tools/segbench/record.sh [RESULTS_DIR]
#
# Other jobs on the host inflate medians (a shared core, a busy SMT
# sibling, a hypervisor's stolen time). SB_QUIET=LOAD makes the script
# wait, up to SB_QUIET_WAIT seconds (default 900), for the one-minute load
# average to drop below LOAD before each run.

set -eu
src=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$src/../.." && pwd)
out=${1:-$top/results}
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT

make -s -C "$src" ARCH=i386 O="$build/i386"
make -s -C "$src" ARCH=x86_64 O="$build/x86_64"
sb=$build/i386/segbench

# <cpu>: vendor + model family/number, e.g. intel-xeon-f6m207
model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
fam=$(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo | head -1)
num=$(sed -n 's/^model[[:space:]]*: //p' /proc/cpuinfo | head -1)
slug=$(printf '%s' "$model" | tr '[:upper:]' '[:lower:]' |
	sed 's/([rR]\|(tm)//g; s/processor\|cpu\|@.*//g; s/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')
slug=${slug}-f${fam}m${num}
base=$out/host-$slug
mkdir -p "$out"

quiet() {
	[ -n "${SB_QUIET:-}" ] || return 0
	waited=0
	while [ "$waited" -lt "${SB_QUIET_WAIT:-900}" ] &&
	      awk -v max="$SB_QUIET" '{ exit !($1 >= max) }' /proc/loadavg; do
		sleep 10
		waited=$((waited + 10))
	done
}

# A host without IA32 emulation cannot run the i386 build: record the
# x86_64 build twice instead, under host-<cpu>-x86_64*.  PDA_HOST_I386=no
# forces that, as it does for make check and make bench.
case ${PDA_HOST_I386:-} in
no*) why="PDA_HOST_I386=$PDA_HOST_I386" ;;
*) why=$("$sb" --list 2>&1 >/dev/null) && why= || why=${why:-exit $?} ;;
esac
if [ -n "$why" ]; then
	echo "record.sh: the i386 build does not run here ($why);" \
	     "recording the x86_64 build only" >&2
	sb=$build/x86_64/segbench
	base=$base-x86_64
fi

"$sb" --check > "$base-check.tap"
quiet
"$sb" --json -o "$base.json"
quiet
"$sb" --json -o "$base-run2.json"
if [ -z "$why" ]; then
	quiet
	"$build/x86_64/segbench" --json -o "$base-x86_64.json"
	python3 "$src/table.py" "$base-x86_64.json" > "$base-x86_64.md"
fi
python3 "$src/table.py" "$base.json" > "$base.md"
python3 "$src/compare.py" "$base.json" "$base-run2.json" > "$base-compare.txt" || true
python3 "$src/plot.py" "$base.json" "$base.svg" >/dev/null
tail -1 "$base-compare.txt"
echo "$base.*"
