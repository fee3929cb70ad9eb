#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine, as root:
#   integration/bootstrap.sh demo   install dependencies, build, run the demo
#   integration/bootstrap.sh test   install dependencies, build, run every test
# Only Debian packages are installed; nothing else is downloaded.
set -euo pipefail

cd "$(dirname "$0")/.."
what="${1:-}"
case "$what" in
  demo|test) ;;
  *) echo "usage: $0 demo|test" >&2; exit 2 ;;
esac

packages=(
  build-essential cmake pkg-config
  libnl-3-dev libnl-route-3-dev nlohmann-json3-dev catch2
  iproute2 iputils-ping procps containernetworking-plugins
  clang-format clang-tidy shellcheck
  clang libclang-rt-14-dev  # the ASan+UBSan build and libFuzzer (test: build-asan)
  llvm                      # llvm-symbolizer: sanitizer reports with file:line
)
# The VM harness (RDMA and SMC need kernels this machine does not run).
mapfile -t vm_packages < <(grep -v '^#' integration/vm/packages.txt | grep -v '^$')
packages+=("${vm_packages[@]}")
# The client suites (integration/clients/*/packages.txt, docs/clients.md), the
# installer, deploy/ and Debian package tests (docs/install.md).
for f in integration/clients/*/packages.txt integration/{install,deploy,package}/packages.txt; do
  mapfile -t client_packages < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$f")
  packages+=("${client_packages[@]}")
done
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

build_type=Release
[[ "$what" == test ]] && build_type=RelWithDebInfo
echo "== building ($build_type)"
cmake -S . -B build -DCMAKE_BUILD_TYPE="$build_type" >/dev/null
cmake --build build -j"$(nproc)"

if [[ "$what" == demo ]]; then
  exec integration/demo.sh
fi

echo "== testing"
(cd build && ctest --output-on-failure -j"$(nproc)")

# The unit and kernel suites again under ASan and UBSan (the kernel tests
# exec the sanitized erdma-cni), and the fuzzer: one clang build serves all
# three (docs/reliability.md). Benchmarks and lint are not rebuilt here.
echo "== building with clang, ASan, UBSan and libFuzzer (build-asan)"
CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DERDMA_CNI_FUZZ=ON >/dev/null
cmake --build build-asan -j"$(nproc)" --target erdma-cni unit_tests kernel_tests erdma_fuzz
echo "== testing under ASan+UBSan; fuzzing"
cd build-asan
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
ctest --output-on-failure -j"$(nproc)" -L '^(unit|kernel|fuzz)$'
# ctest shows a passing test's output only in its log: the fuzzer's figures.
grep -E '^(seeds|libFuzzer|fuzz): ' Testing/Temporary/LastTest.log || true
