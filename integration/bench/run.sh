#!/usr/bin/env bash
# The benchmark, as root on Debian 12:
#   integration/bench/run.sh [erdma-bench options]
# Installs what is missing (Debian packages only), builds a Release tree in
# build-bench/ (the whole project plus the bench programs; the first build
# takes a few minutes on 2 cores, later ones only relink), then runs
# erdma-bench, which builds its own private namespaces, measures and writes
# the report (default build/bench/results.md). Options: --help.
#   integration/bench/run.sh --profile "valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%c"
# runs one erdma-cni ADD and DEL under a profiler instead (see docs/performance.md).
set -euo pipefail

cd "$(dirname "$0")/../.."
if [[ $(id -u) != 0 ]]; then
  echo "run.sh: needs root (network namespaces, moving links)" >&2
  exit 2
fi

packages=(build-essential cmake pkg-config libnl-3-dev libnl-route-3-dev libnl-genl-3-dev nlohmann-json3-dev
          libnghttp2-dev libprotobuf-c-dev protobuf-c-compiler iproute2 containernetworking-plugins
          python3-grpcio python3-grpc-tools python3-protobuf)  # the fake kubelet of the kubelet rows
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "== installing: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

echo "== building build-bench/ (Release)" >&2
cmake -S integration/bench -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench -j"$(nproc)" --target erdma-bench >&2

echo "== running erdma-bench $*" >&2
exec build-bench/erdma-bench "$@"
