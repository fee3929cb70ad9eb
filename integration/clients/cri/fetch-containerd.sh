#!/usr/bin/env bash
# fetch-containerd.sh CACHE_DIR
#
# Fetches containerd 1.7 (with NRI) from Debian's trixie suite and unpacks it
# in CACHE_DIR, never installing it: the system's containerd (bookworm's
# 1.6, without NRI) stays as it is.
#
#   CACHE_DIR/apt/           a private apt (its own lists and cache;
#                            integration/lib/private-apt.sh)
#   CACHE_DIR/root/usr/bin/  containerd, containerd-shim-runc-v2, ctr
#   CACHE_DIR/version        the package's version, e.g. 1.7.24~ds1-6+deb13u1
#
# bookworm's runc (1.1) runs under it. Idempotent: a complete cache is reused
# without touching the network. Environment: DEBIAN_MIRROR (default: from
# /etc/apt/sources.list{,.d/*}). Prints CACHE_DIR/root/usr/bin as its last
# line; progress goes to stderr. Exit 1 when the package cannot be fetched
# or is not a containerd 1.7.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=SCRIPTDIR/../../lib/private-apt.sh
source "$here/../../lib/private-apt.sh"
cache="${1:?usage: $0 CACHE_DIR}"
log() { echo "fetch-containerd: $*" >&2; }

mkdir -p "$cache"
cache="$(cd "$cache" && pwd)"
exec 9>"$cache/.lock"
flock 9

bin="$cache/root/usr/bin"
if [[ -f $cache/.done && -x $bin/containerd && -x $bin/containerd-shim-runc-v2 ]]; then
  echo "$bin"
  exit 0
fi

mirror="$(private_apt_mirror)"
[[ -n $mirror ]] || { log "no Debian mirror found in /etc/apt/sources.list*; set DEBIAN_MIRROR"; exit 1; }
aptdir="$cache/apt"
private_apt_prepare "$aptdir" "$mirror" deb trixie
log "reading the trixie package lists from $mirror"
private_apt_get "$aptdir" -qq update >&2
version="$(private_apt_cache "$aptdir" show containerd | sed -n 's/^Version: //p' | head -n1)"
[[ $version == 1.7.* ]] || { log "trixie's containerd is '$version', not a 1.7"; exit 1; }
rm -rf "$aptdir/deb" "$cache/root" && mkdir -p "$aptdir/deb"
log "downloading containerd $version"
# apt checks the .deb against the signed Packages index.
(cd "$aptdir/deb" && private_apt_get "$aptdir" -qq download "containerd=$version" >&2)
deb="$(find "$aptdir/deb" -maxdepth 1 -name 'containerd_*.deb' | head -n1)"
[[ -n $deb ]] || { log "no containerd_*.deb downloaded"; exit 1; }
dpkg-deb -x "$deb" "$cache/root"
rm -rf "$aptdir/deb" "$aptdir/cache"
echo "$version" >"$cache/version"
touch "$cache/.done"
log "containerd $version in $bin"
echo "$bin"
