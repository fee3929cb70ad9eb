#!/usr/bin/env bash
# build.sh: builds cnitool, the CNI project's reference client, from Debian's source package
# and prints its path as the last line of stdout (progress goes to stderr).
#
# Debian 12 ships libcni (golang-github-appc-cni-dev, in /usr/share/gocode) but not cnitool,
# whose one file is in the source package golang-github-appc-cni. This script:
#   1. reads bookworm's source index through a private apt configuration in the cache (its
#      own deb-src list, lists, cache and empty status: the system's sources are untouched),
#   2. downloads the source package of exactly the installed -dev package's version and
#      unpacks it with dpkg-source,
#   3. builds its cnitool/ with Debian's Go, offline (GO111MODULE=off, GOPROXY=off), against
#      the libcni of the installed -dev package (GOPATH=<cache>/gopath:/usr/share/gocode).
#
# Cached in $CNITOOL_CACHE (default $BUILD_DIR/clients-cache/cnitool): the unpacked source
# and bin/cnitool. A second run with the same libcni and Go prints the path and does nothing.
#
# Environment: BUILD_DIR (default <repo>/build), CNITOOL_CACHE, DEBIAN_MIRROR (default: the
# first .../debian URI of the system's sources), CNITOOL_SUITE (default bookworm).
# Exit 77 when a tool it needs is missing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=SCRIPTDIR/../common.sh
source "$here/../common.sh"
# shellcheck source=SCRIPTDIR/../../lib/private-apt.sh
source "$here/../../lib/private-apt.sh"
cache="${CNITOOL_CACHE:-$BUILD_DIR/clients-cache/cnitool}"
suite="${CNITOOL_SUITE:-bookworm}"
srcpkg=golang-github-appc-cni
devpkg=golang-github-appc-cni-dev

log() { echo "cnitool-build: $*" >&2; }

for tool in apt-get dpkg-source dpkg-query go flock; do
  command -v "$tool" >/dev/null || { echo "SKIPPED: '$tool' not found (integration/clients/cnitool/packages.txt)"; exit 77; }
done
devver="$(dpkg-query -W -f='${Version}' "$devpkg" 2>/dev/null || true)"
[[ -n $devver ]] || { echo "SKIPPED: $devpkg is not installed"; exit 77; }
[[ -d /usr/share/gocode/src/github.com/containernetworking/cni/libcni ]] ||
  { echo "SKIPPED: $devpkg has no libcni in /usr/share/gocode"; exit 77; }
gover="$(go env GOVERSION)"
stamp="$srcpkg=$devver $gover"

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
if [[ -x $cache/bin/cnitool && -f $cache/stamp && "$(cat "$cache/stamp")" == "$stamp" ]]; then
  echo "$cache/bin/cnitool"
  exit 0
fi

# The source: unpacked once per version.
srcdir="$cache/src/$srcpkg-$devver"
if [[ ! -f $srcdir/.done ]]; then
  mirror="$(private_apt_mirror)"
  [[ -n $mirror ]] || { log "no Debian mirror found in /etc/apt/sources.list*; set DEBIAN_MIRROR"; exit 1; }

  # A private apt (integration/lib/private-apt.sh): nothing of the system's apt state is
  # read or written.
  aptdir="$cache/apt"
  private_apt_prepare "$aptdir" "$mirror" deb-src "$suite"
  log "reading $suite's source index from $mirror"
  private_apt_get "$aptdir" -qq update >&2
  dl="$cache/download"
  rm -rf "$dl" "$srcdir"
  mkdir -p "$dl"
  log "downloading $srcpkg $devver"
  # apt checks the files against the signed index; dpkg-source checks them against the .dsc.
  (cd "$dl" && private_apt_get "$aptdir" -qq --download-only source "$srcpkg=$devver" >&2)
  dsc="$(find "$dl" -maxdepth 1 -name "${srcpkg}_*.dsc" | head -n1)"
  [[ -n $dsc ]] || { log "no .dsc downloaded for $srcpkg $devver"; exit 1; }
  mkdir -p "$cache/src"
  # Its signature check says "No public key" (debian-keyring holds the uploaders' keys, and
  # is not needed): the files' authenticity comes from the index apt verified.
  if ! out="$(dpkg-source -q -x "$dsc" "$srcdir" 2>&1)"; then
    printf '%s\n' "$out" >&2
    exit 1
  fi
  [[ -f $srcdir/cnitool/cnitool.go ]] || { log "$srcpkg $devver has no cnitool/cnitool.go"; exit 1; }
  touch "$srcdir/.done"
  # dpkg-source leaves a copy of the upstream tarball beside the tree.
  rm -rf "$dl" "$aptdir/lists" "$aptdir/cache" "$cache/src/${srcpkg}_"*
fi

# cnitool's main package alone, outside github.com/containernetworking/cni, so that its
# libcni import resolves to the -dev package in /usr/share/gocode.
gopath="$cache/gopath"
rm -rf "$gopath"
mkdir -p "$gopath/src/cnitool" "$cache/bin"
cp "$srcdir"/cnitool/*.go "$gopath/src/cnitool/"
gocache="$(mktemp -d "${TMPDIR:-/tmp}/cnitool-gocache.XXXXXX")"
trap 'rm -rf "$gocache"' EXIT
log "building cnitool with $gover against /usr/share/gocode's libcni ($devpkg $devver)"
(cd "$gopath/src/cnitool" &&
  env -i PATH="$PATH" HOME="$cache" GO111MODULE=off GOPATH="$gopath:/usr/share/gocode" \
    GOCACHE="$gocache" GOPROXY=off GOFLAGS= CGO_ENABLED=0 \
    go build -trimpath -o "$cache/bin/cnitool.tmp" . >&2)
mv "$cache/bin/cnitool.tmp" "$cache/bin/cnitool"
echo "$stamp" >"$cache/stamp"
log "built $cache/bin/cnitool"
echo "$cache/bin/cnitool"
