#!/usr/bin/env bash
# Fuzzes erdma-cni's whole input surface (test/fuzz/fuzz_cni.cpp) for a
# bounded time, starting from a scratch copy of the committed corpus, and
# prints what it did: executions, exec/s, coverage (cov: edges, ft: features).
#
#   test/fuzz/run.sh [--seconds N] [--binary PATH] [--build-dir DIR] [-- LIBFUZZER_ARGS...]
#
# Without --binary it configures and builds DIR (default build-asan) with
# clang, ASan, UBSan and libFuzzer. First every seed runs once with its
# FUZZ_EXPECT outcomes checked, then libFuzzer mutates for N seconds (default
# 60). Any crash, leak, timeout (5 s per input), RSS over 1 GiB or oracle
# abort fails the run; the input that did it is kept next to the binary, in
# fuzz-artifacts/.
# The committed corpus is never written to. Exit 77: clang or libFuzzer missing.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
src="$(cd "$here/../.." && pwd)"
seconds=60
binary=""
build_dir="$src/build-asan"
extra=()
while (($#)); do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --binary) binary="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "usage: $0 [--seconds N] [--binary PATH] [--build-dir DIR] [-- LIBFUZZER_ARGS...]" >&2; exit 2 ;;
  esac
done

if [[ -z "$binary" ]]; then
  if ! command -v clang++ >/dev/null; then
    echo "SKIPPED: clang++ is not installed (apt-get install clang libclang-rt-14-dev)"
    exit 77
  fi
  if ! clang++ -print-file-name=libclang_rt.fuzzer-x86_64.a | grep -q /; then
    echo "SKIPPED: libFuzzer is not installed (apt-get install libclang-rt-14-dev)"
    exit 77
  fi
  CC=clang CXX=clang++ cmake -S "$src" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DERDMA_CNI_FUZZ=ON >/dev/null
  cmake --build "$build_dir" -j2 --target erdma_fuzz
  binary="$build_dir/test/erdma_fuzz"
fi
[[ -x "$binary" ]] || { echo "no fuzz binary at $binary" >&2; exit 1; }
artifacts="$(dirname "$binary")/fuzz-artifacts"

# On tmpfs when there is one; the harness keeps its data dir in it too
# (TMPDIR), so even a crashed run leaves nothing behind.
shm=/tmp
[[ -d /dev/shm ]] && shm=/dev/shm
scratch="$(mktemp -d "$shm/erdma-fuzz-run-XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
export TMPDIR="$scratch"
mkdir -p "$scratch/corpus" "$scratch/artifacts"
cp "$here"/corpus/* "$scratch/corpus/"
seeds=$(find "$scratch/corpus" -type f | wc -l)

# The plugin logs every error to stderr; keep libFuzzer's lines and the reports.
# The log holds the bytes of fuzzed inputs: grep -a reads it as text regardless.
plugin_log='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z (debug|info|warn|error) \['
fail() {
  echo "FAILED: $1"
  grep -aEv "$plugin_log" "$scratch/log" | tail -n 150
  if compgen -G "$scratch/artifacts/*" >/dev/null; then
    mkdir -p "$artifacts"
    cp "$scratch"/artifacts/* "$artifacts/"
    echo "the input is kept in $artifacts/ (reproduce: $binary $artifacts/<file>)"
  fi
  exit 1
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
opts=(-timeout=5 -rss_limit_mb=1024 -max_len=16384 -dict="$here/cni.dict"
  -artifact_prefix="$scratch/artifacts/" -print_final_stats=1)

# 1. Every seed once, its FUZZ_EXPECT outcomes checked: a seed that no
#    longer reaches what it was written for would quietly cost coverage.
ERDMA_FUZZ_EXPECT=1 "$binary" "${opts[@]}" -runs=0 "$scratch/corpus" >"$scratch/log" 2>&1 ||
  fail "a seed did not give its expected outcome, or crashed"
seed_line=$(grep -aE '^#[0-9]+[[:space:]]+INITED' "$scratch/log" | tail -n1 || true)
echo "seeds: $seeds files, all outcomes as expected; $seed_line"

# 2. Fuzz. New inputs go to the scratch corpus only.
start=$(date +%s)
"$binary" "${opts[@]}" -max_total_time="$seconds" "${extra[@]}" "$scratch/corpus" >"$scratch/log" 2>&1 ||
  fail "libFuzzer stopped with a finding"
elapsed=$(($(date +%s) - start))

last=$(grep -aE '^#[0-9]+[[:space:]]' "$scratch/log" | tail -n1 || true)
stat() { grep -aE "^stat::$1:" "$scratch/log" | awk '{print $2}'; }
cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
corp=$(sed -nE 's/.* corp: ([0-9]+)\/.*/\1/p' <<<"$last")
echo "libFuzzer: $last"
echo "fuzz: $(stat number_of_executed_units) execs in ${elapsed} s ($(stat average_exec_per_sec) exec/s)," \
  "cov $cov, ft $ft, corpus $seeds -> $corp, peak RSS $(stat peak_rss_mb) MB, no crash, leak or timeout"
