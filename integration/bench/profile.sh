#!/usr/bin/env bash
# Where erdma-cni's time goes, as root: one ADD and one DEL (after warm-ups,
# in the benchmark's private topology) under callgrind, strace and perf stat.
#   integration/bench/profile.sh [--plugin PATH] [--mode move|none|macvlan]
#   (default: build-bench/erdma-cni/erdma-cni, move mode; none is with SMC-R)
# Writes build/bench/profile/ and prints a summary: user-space instructions
# by object and by top-level phase, syscall time, page faults, and where the
# CPU time goes (kernel included) over 100 ADDs and DELs (perf record).
set -euo pipefail

cd "$(dirname "$0")/../.."
plugin_args=()
mode=move
while [[ $# -gt 0 ]]; do
  case "$1" in
    --plugin) plugin_args=(--plugin "$(realpath "$2")") ;;
    --mode) mode="$2" ;;
    *) echo "usage: $0 [--plugin PATH] [--mode move|none|macvlan]" >&2; exit 2 ;;
  esac
  shift 2
done
out=build/bench/profile
mkdir -p "$out"
rm -f "$out"/*

for p in valgrind strace; do
  command -v "$p" >/dev/null || { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p" >/dev/null; }
done
cmake -S integration/bench -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench -j"$(nproc)" --target erdma-bench >/dev/null
bench=(build-bench/erdma-bench "${plugin_args[@]}" --parallel "" --profile-mode "$mode")

"${bench[@]}" --profile "valgrind --tool=callgrind --callgrind-out-file=$PWD/$out/callgrind.%c" 2>"$out/callgrind.log" >/dev/null
"${bench[@]}" --profile "strace -f -c -w -o $PWD/$out/strace.%c" 2>"$out/strace.log" >/dev/null
if perf stat -e task-clock true >/dev/null 2>&1; then
  "${bench[@]}" --profile "perf stat -e task-clock,page-faults,context-switches -o $PWD/$out/perfstat.%c" \
    2>"$out/perfstat.log" >/dev/null
fi

# Self cost summed per object (ld.so's inlined helpers have no object name).
by_object() {
  callgrind_annotate --threshold=100 --inclusive=no "$1" 2>/dev/null | awk '
    /PROGRAM TOTALS/ { next }
    /^ *[0-9,]+ \(/ { n = $1; gsub(",", "", n); o = "?";
      if (match($0, /\[[^]]*\]$/)) o = substr($0, RSTART + 1, RLENGTH - 2); else if ($0 ~ /\/elf\//) o = "ld.so";
      sub(/.*\//, "", o); if (o ~ /^ld-linux/) o = "ld.so"; s[o] += n; t += n }
    END { for (o in s) printf "  %12d  %5.1f%%  %s\n", s[o], 100 * s[o] / t, o }' | sort -rn | head -8
}
phases() {
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
    grep -E "PROGRAM TOTALS|rtld.c:_dl_start |_dl_runtime_resolve|_dl_fixup|\?\?\?:main |_GLOBAL__sub_I|ios_base::Init::Init|cni::Run\(|cni::Add|cni::Del\(|conf::Parse\(|StateStore::Save|StateStore::Load|cni::(ToJson|StateText)\[abi:cxx11\]\(cni::AttachmentState|RtnlSocket::(Dump|Get|Request|Run|Open)\(" |
    sed -E 's/\(std::.*|\(cni::Context.*|\(netlink::.*//; s/\[abi:cxx11\]//' | head -20
}
for c in ADD DEL; do
  echo "== erdma-cni $c"
  echo "user-space instructions by object (callgrind):"
  by_object "$out/callgrind.$c"
  echo "inclusive instructions of the main phases:"
  phases "$out/callgrind.$c"
  echo "syscalls by wall time (strace -c -w; strace slows each call):"
  sed -n '3,12p' "$out/strace.$c"
  [[ -f "$out/perfstat.$c" ]] && grep -E "task-clock|page-faults|context-switches|elapsed" "$out/perfstat.$c"
  echo
done
# Where the CPU time goes, kernel included: perf samples the whole machine
# (10 kHz, call graphs) while the benchmark runs 100 ADDs and DELs of the mode
# with the state on tmpfs (the benchmark's own, as /run is on a node); the
# plugin's samples are put in buckets by the system call or fault they are
# under (cpu_buckets.py).
if perf record -q -e cpu-clock -o /dev/null true >/dev/null 2>&1; then
  echo "== where erdma-cni's CPU goes over 100 ADDs and 100 DELs, $mode mode (perf record -a, 10 kHz)"
  rows=erdma
  [[ "$mode" == none ]] && rows=none
  [[ "$mode" == macvlan ]] && rows=macvlan # the Go chain and static run there too, under their own names
  perf record -q -a -g -e cpu-clock -F 10000 -o "$out/perf.data" -- \
    build-bench/erdma-bench "${plugin_args[@]}" --only "$rows" --parallel "" --iterations 100 --warmup 5 \
    --output "$out/perf-bench.md" >/dev/null 2>&1
  perf script -i "$out/perf.data" -F comm,ip,sym 2>/dev/null >"$out/perf.txt"
  /usr/bin/python3 integration/bench/cpu_buckets.py "$out/perf.txt" erdma-cni 16
else
  echo "== CPU by bucket: skipped, perf record does not work here (Debian: linux-perf; root)"
fi
# The plugin's own account of the same (ERDMA_CNI_PHASES): CPU by phase.
echo
echo "== erdma-cni's CPU by phase over 100 ADDs and 100 DELs, $mode mode (--phases; median ms)"
rows=erdma
[[ "$mode" != move ]] && rows="$mode"
build-bench/erdma-bench "${plugin_args[@]}" --only "$rows" --parallel "" --iterations 100 --warmup 5 --phases \
  --output "$out/phases.md" >/dev/null 2>&1
sed -n '/^| phase |/,/^$/p' "$out/phases.md"
echo "(raw files in $out)"
