#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine, as root:
#   integration/bootstrap.sh demo   install what the demo needs, build the plugin, run the demo
#   integration/bootstrap.sh test   install everything the suite needs, build, run every test
# Only Debian packages are installed; nothing else is downloaded.
#
# The demo is what a person tries first: it installs a compiler, CMake and
# libnl, builds the plugin and its installer (a Release build, as a user or a
# package makes it: a compiler warning never fails it) and runs
# integration/demo.sh.
# The test command builds everything with -DERDMA_CNI_WERROR=ON: warnings are
# errors in the builds developers and CI make.
set -euo pipefail

cd "$(dirname "$0")/.."
what="${1:-}"
case "$what" in
  demo|test) ;;
  *) echo "usage: $0 demo|test" >&2; exit 2 ;;
esac

# Where the time goes: each phase's wall time and the CPU time of what it ran
# (user + system, children included: 2 cores busy for a minute is 2:00),
# printed as a table when the command ends (passed or not), with the total
# against the budget (docs/testing.md#the-two-readme-commands). The guard:
# under CI (.ci/run sets CI), a test command past its limit fails, whatever
# its tests said, so the budget is kept by the suite and not by memory.
budget_min=$([[ "$what" == test ]] && echo 40 || echo 5)
limit_min=$([[ "$what" == test ]] && echo 45 || echo 10)
started=$SECONDS
phase_names=()
phase_secs=()
phase_cpus=()
phase_name=""
phase_start=$SECONDS
# The CPU seconds of every child waited for so far: cutime + cstime of this
# shell (proc(5), fields 16 and 17, in clock ticks).
tick="$(getconf CLK_TCK)"
cpu_now() {
  local st
  read -ra st </proc/$$/stat
  echo $(((st[15] + st[16]) / tick))
}
phase_cpu_start=0
phase() {
  local cpu
  cpu="$(cpu_now)"
  if [[ -n "$phase_name" ]]; then
    phase_names+=("$phase_name")
    phase_secs+=($((SECONDS - phase_start)))
    phase_cpus+=($((cpu - phase_cpu_start)))
  fi
  phase_name="$1"
  phase_start=$SECONDS
  phase_cpu_start=$cpu
}
mmss() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }
phase_table() {
  local rc=$?
  phase ""
  local total=$((SECONDS - started)) cpu=0 i
  echo "== phases of '$what' (wall time; CPU time of what ran, on $(nproc) cores)"
  for i in "${!phase_names[@]}"; do
    printf '   %-50s %7s %9s\n' "${phase_names[$i]}" "$(mmss "${phase_secs[$i]}")" "$(mmss "${phase_cpus[$i]}")"
    cpu=$((cpu + phase_cpus[i]))
  done
  printf '   %-50s %7s %9s (budget %d:00%s)\n' "total" "$(mmss "$total")" "$(mmss "$cpu")" "$budget_min" \
    "$( ((total > budget_min * 60)) && echo ', OVER' )"
  if [[ -n "${CI:-}" ]] && ((total > limit_min * 60)); then
    echo "bootstrap: '$what' took $(mmss "$total"), past its limit of $limit_min:00 under CI: find the phase" \
      "that grew in the table above (docs/testing.md#the-two-readme-commands)" >&2
    ((rc == 0)) && rc=1
  fi
  return "$rc"
}
trap phase_table EXIT
phase "install packages"

# What building the plugin and running the demo take.
packages=(
  build-essential cmake pkg-config
  libnl-3-dev libnl-route-3-dev libnl-genl-3-dev nlohmann-json3-dev
  libnghttp2-dev libprotobuf-c-dev protobuf-c-compiler  # the kubelet client (kubelet/)
  iproute2 iputils-ping procps
)
if [[ "$what" == test ]]; then
  packages+=(
    catch2 containernetworking-plugins
    clang-format clang-tidy shellcheck
    clang libclang-rt-14-dev  # the ASan+UBSan build and libFuzzer (test: build-asan)
    llvm                      # llvm-symbolizer: sanitizer reports with file:line
    python3-grpcio python3-grpc-tools python3-protobuf  # the fake kubelet (test/fake_kubelet/)
  )
  # The VM harness (RDMA and SMC need kernels this machine does not run), the
  # client suites (integration/clients/*/packages.txt, docs/clients.md), the
  # installer, deploy/ and Debian package tests (docs/install.md).
  for f in integration/vm/packages.txt integration/clients/*/packages.txt \
      integration/{install,deploy,package}/packages.txt; do
    mapfile -t more < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$f")
    packages+=("${more[@]}")
  done
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "== installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ "$what" == demo ]]; then
  phase "build the plugin and installer (Release)"
  echo "== building the plugin and its installer (Release)"
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DERDMA_CNI_TESTS=OFF -DERDMA_CNI_WERROR=OFF \
    -DERDMA_CNI_FAULT_HOOKS=OFF >/dev/null
  # Both shipped binaries, a file at a time as a user's build compiles them:
  # the test command's trees batch them (unity), which would hide a source
  # that misses an #include.
  cmake --build build -j"$(nproc)" --target erdma-cni erdma-cni-install
  phase "run the demo"
  integration/demo.sh
  exit 0
fi

phase "build but the unit suite (GCC, RelWithDebInfo)"
echo "== building (RelWithDebInfo, warnings are errors)"
# Every option said outright: build/ may hold the demo's cache (Release, no
# tests, no fault points), and a cached option outlives a new build type.
# The unit suite is compiled and run once, in the sanitized tree below.
# Both trees compile in batches of 16 files (CMake's unity build): headers
# are parsed once a batch, in the compile and in clang-tidy
# (docs/decisions/unity-batches.md).
unity=(-DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DERDMA_CNI_TESTS=ON -DERDMA_CNI_WERROR=ON \
  -DERDMA_CNI_FAULT_HOOKS=ON -DERDMA_CNI_UNIT_TESTS=OFF "${unity[@]}" >/dev/null
cmake --build build -j"$(nproc)"

phase "ctest: every suite but unit and kernel (label times below)"
echo "== testing"
# The kernel suite's fault sweeps (label kernel-sweep) run here in full; the
# rest of it (label kernel) runs once, below, against the sanitized plugin.
(cd build && ctest --output-on-failure -j"$(nproc)" -LE '^kernel$')

# The unit suite under ASan and UBSan, the kernel suite (the main build's)
# against the sanitized erdma-cni, and the fuzzer: one clang build serves all
# three (docs/reliability.md). Benchmarks and lint are not rebuilt here.
phase "build with clang, ASan+UBSan, libFuzzer"
echo "== building with clang, ASan, UBSan and libFuzzer (build-asan)"
CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DERDMA_CNI_FUZZ=ON \
  -DERDMA_CNI_WERROR=ON "${unity[@]}" >/dev/null
cmake --build build-asan -j"$(nproc)" --target erdma-cni unit_tests erdma_fuzz
echo "== testing under ASan+UBSan; fuzzing"
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The fault sweeps ran every point in the main build; here a quarter of them,
# a different quarter each day (docs/testing.md, "Sanitizers and fuzzing").
export ERDMA_TEST_SWEEP_STRIDE=4
phase "ctest: kernel suite against the sanitized plugin"
echo "== the kernel suite against the sanitized plugin: every test, the fault sweeps sampled"
ERDMA_TEST_PLUGIN="$PWD/build-asan/erdma-cni" ctest --test-dir build --output-on-failure -j"$(nproc)" \
  -L '^kernel(-sweep)?$'
# Which points each sampled sweep ran (a passing test's output is only in the log).
grep -E '^sampled sweep: ' build/Testing/Temporary/LastTest.log || true
phase "ctest: unit suite sanitized, fuzzer"
cd build-asan
ctest --output-on-failure -j"$(nproc)" -L '^(unit|fuzz)$'
# ctest shows a passing test's output only in its log: the fuzzer's figures.
grep -E '^(seeds|libFuzzer|fuzz): ' Testing/Temporary/LastTest.log || true
