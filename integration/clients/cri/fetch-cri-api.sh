#!/usr/bin/env bash
# fetch-cri-api.sh CACHE_DIR
#
# Makes Python gRPC stubs of the CRI API (runtime.v1) from the api.proto that
# Debian's containerd source package vendors
# (vendor/k8s.io/cri-api/pkg/apis/runtime/v1/api.proto): Debian packages no
# crictl and no cri-api .proto in a binary package, but its containerd source
# carries the definition containerd itself was built from.
#
#   CACHE_DIR/apt/          a private apt (its own deb-src list, lists, cache;
#                           integration/lib/private-apt.sh): the system's apt
#                           sources are never read or changed
#   CACHE_DIR/api.proto     the proto as shipped, and the version it came from
#   CACHE_DIR/stubs/        api.proto without its gogoproto options, api_pb2.py,
#                           api_pb2_grpc.py (python3 -m grpc_tools.protoc)
#
# The source is that of the installed containerd's version when the archive
# still has it, else the suite's current one (CRI v1 is the same API).
# Idempotent: a complete cache is reused without touching the network.
# Environment: DEBIAN_MIRROR (default: from /etc/apt/sources.list{,.d/*}),
# DEBIAN_SUITE (default: VERSION_CODENAME of /etc/os-release).
# Prints the stubs directory as its last line; progress goes to stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=SCRIPTDIR/../../lib/private-apt.sh
source "$here/../../lib/private-apt.sh"
cache="${1:?usage: $0 CACHE_DIR}"
log() { echo "fetch-cri-api: $*" >&2; }

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9

stubs="$cache/stubs"
if [[ -f $stubs/.done && -f $stubs/api_pb2.py && -f $stubs/api_pb2_grpc.py ]]; then
  echo "$stubs"
  exit 0
fi

if [[ ! -f $cache/api.proto ]]; then
  mirror="$(private_apt_mirror)"
  [[ -n $mirror ]] || { log "no Debian mirror found in /etc/apt/sources.list*; set DEBIAN_MIRROR"; exit 1; }
  # shellcheck disable=SC1091 # the system's own
  suite="${DEBIAN_SUITE:-$(. /etc/os-release && echo "${VERSION_CODENAME:-}")}"
  [[ -n $suite ]] || { log "no VERSION_CODENAME in /etc/os-release; set DEBIAN_SUITE"; exit 1; }

  aptdir="$cache/apt"
  private_apt_prepare "$aptdir" "$mirror" deb-src "$suite" "$suite-updates"
  mkdir -p "$aptdir/src"
  log "reading the $suite source lists from $mirror"
  private_apt_get "$aptdir" -qq update >&2

  installed="$(dpkg-query -W -f='${Version}' containerd 2>/dev/null || true)"
  want=containerd
  if [[ -n $installed ]] &&
    private_apt_cache "$aptdir" showsrc containerd | grep -qxF "Version: $installed"; then
    want="containerd=$installed"
  fi
  log "downloading the source of $want"
  rm -rf "$aptdir/src" && mkdir -p "$aptdir/src"
  (cd "$aptdir/src" && private_apt_get "$aptdir" -qq source --download-only "$want" >&2)

  # apt checked the files against the signed Sources index; one file of the
  # upstream tarball is all that is needed, so no full dpkg-source -x.
  orig="$(find "$aptdir/src" -maxdepth 1 -name 'containerd_*.orig.tar.*' | head -n1)"
  [[ -n $orig ]] || { log "no containerd_*.orig.tar.* downloaded"; exit 1; }
  member="$(tar -tf "$orig" | grep -E '^[^/]+/vendor/k8s\.io/cri-api/pkg/apis/runtime/v1/api\.proto$' | head -n1)"
  [[ -n $member ]] || { log "$orig has no vendor/k8s.io/cri-api/pkg/apis/runtime/v1/api.proto"; exit 1; }
  tar -xOf "$orig" "$member" >"$cache/api.proto.tmp"
  echo "$want ($(basename "$orig"))" >"$cache/api.proto.source"
  mv "$cache/api.proto.tmp" "$cache/api.proto"
  rm -rf "$aptdir/src" "$aptdir/cache"
fi

# The gogoproto options only steer Go code generation; protoc cannot resolve
# their import without gogo's .proto, and the wire format does not depend on them.
rm -rf "$stubs" && mkdir -p "$stubs"
sed -e '\#^import "github.com/gogo/protobuf/gogoproto/gogo.proto";#d' \
  -e '/^option (gogoproto\.[a-z_]*) *= *\(true\|false\);$/d' "$cache/api.proto" >"$stubs/api.proto"
if grep -n 'gogoproto' "$stubs/api.proto" >&2; then
  log "gogoproto options left in api.proto (above): the strip patterns need updating"
  exit 1
fi
(cd "$stubs" && /usr/bin/python3 -m grpc_tools.protoc -I. --python_out=. --grpc_python_out=. api.proto >&2)
touch "$stubs/.done"
log "CRI stubs from $(cat "$cache/api.proto.source") in $stubs"
echo "$stubs"
