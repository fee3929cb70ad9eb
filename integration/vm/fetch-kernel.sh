#!/usr/bin/env bash
# fetch-kernel.sh SERIES   (SERIES: 7.3 | 6.12)
#
# Downloads a Debian kernel into the build tree's VM cache and lays it out for
# qemu and for build-initramfs.sh:
#
#   $VM_CACHE/kernel-SERIES/vmlinuz
#   $VM_CACHE/kernel-SERIES/vmlinux                    (uncompressed, if it can boot as PVH)
#   $VM_CACHE/kernel-SERIES/root/lib/modules/VERSION   (with modules.dep)
#   $VM_CACHE/kernel-SERIES/version                    (VERSION, e.g. 7.3.4+deb13-amd64)
#   $VM_CACHE/kernel-SERIES/packages                   (package=version lines used)
#
#   7.3   trixie-backports: linux-binary-V-amd64, linux-modules-V-amd64 and
#         linux-base-V-amd64 (what the linux-image-V-amd64 meta package depends on)
#   6.12  trixie: linux-image-V-amd64 (one .deb with image and modules)
#
# The generic amd64 flavour, not cloud-amd64: it is the one that builds rdma_rxe and smc.
# Debian's archive is reached through a private apt configuration in
# $VM_CACHE/apt/SUITE (its own source list, lists and cache; see
# integration/lib/private-apt.sh): the system's apt sources are never changed. The
# mirror is the one the system's own sources use.
#
# Idempotent: once a series is laid out it prints its directory and downloads
# nothing. VM_REFRESH=1 looks for a newer kernel of the series.
#
# Environment: BUILD_DIR (default: <repo>/build), VM_CACHE (default: $BUILD_DIR/vm-cache),
# DEBIAN_MIRROR (default: taken from /etc/apt/sources.list{,.d/*}).
# Prints the kernel directory on stdout as its last line; progress goes to stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=SCRIPTDIR/../lib/private-apt.sh
source "$here/../lib/private-apt.sh"
BUILD_DIR="${BUILD_DIR:-$repo/build}"
VM_CACHE="${VM_CACHE:-$BUILD_DIR/vm-cache}"

series="${1:-}"
case "$series" in
  7.3) suite=trixie-backports layout="split" ;;
  6.12) suite=trixie layout="single" ;;
  *) echo "usage: $0 7.3|6.12" >&2; exit 2 ;;
esac

log() { echo "fetch-kernel: $*" >&2; }

kdir="$VM_CACHE/kernel-$series"

# extract_vmlinux DIR: DIR/vmlinux, the uncompressed ELF kernel inside DIR/vmlinuz, if it
# has a PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY, type 0x12): qemu then starts it
# directly, which spares the guest decompressing itself under TCG (seconds per boot).
# Otherwise DIR/vmlinux.none records that the bzImage has to be booted.
extract_vmlinux() {
  local dir="$1" off magic
  [[ -f $dir/vmlinux || -f $dir/vmlinux.none ]] && return 0
  for magic in 'zstd -qdc:\x28\xb5\x2f\xfd' 'xz -qdc:\xfd\x37\x7a\x58\x5a\x00' 'gzip -qdc:\x1f\x8b\x08'; do
    for off in $(LC_ALL=C grep -obUaP "${magic#*:}" "$dir/vmlinuz" | cut -d: -f1 | head -n3); do
      # The payload is followed by the rest of the bzImage: the decompressor complains.
      tail -c +$((off + 1)) "$dir/vmlinuz" | ${magic%%:*} >"$dir/vmlinux.tmp" 2>/dev/null || true
      if [[ "$(head -c4 "$dir/vmlinux.tmp" | od -An -tx1 | tr -d ' ')" == 7f454c46 ]] &&
        readelf -n "$dir/vmlinux.tmp" 2>/dev/null |
        grep -qE '^[[:space:]]*Xen[[:space:]]+0x[0-9a-f]+[[:space:]]+Unknown note type: \(0x00000012\)'; then
        mv "$dir/vmlinux.tmp" "$dir/vmlinux"
        return 0
      fi
    done
  done
  rm -f "$dir/vmlinux.tmp"
  touch "$dir/vmlinux.none"
}

# One fetch per series at a time (two runs of the same kernel may start together).
mkdir -p "$VM_CACHE"
exec 9>"$VM_CACHE/.lock-kernel-$series"
flock 9

if [[ -f $kdir/.done && -z ${VM_REFRESH:-} ]]; then
  extract_vmlinux "$kdir"
  echo "$kdir"
  exit 0
fi

for tool in apt-get apt-cache dpkg-deb depmod; do
  command -v "$tool" >/dev/null || { log "'$tool' not found (apt-get install apt dpkg kmod)"; exit 1; }
done

# The Debian mirror the system already uses: the first ".../debian" URI in its sources.
mirror="$(private_apt_mirror)"
if [[ -z $mirror ]]; then
  log "no Debian mirror found in /etc/apt/sources.list*; set DEBIAN_MIRROR"
  exit 1
fi

# A private apt (integration/lib/private-apt.sh): its own sources, lists, cache,
# preferences and (empty) status, so nothing of the system's apt state is read or written.
aptdir="$VM_CACHE/apt/$suite"
private_apt_prepare "$aptdir" "$mirror" deb "$suite"
mkdir -p "$aptdir/debs"

log "reading the $suite package list from $mirror"
private_apt_get "$aptdir" -qq update >&2

# The newest kernel ABI of the series, generic amd64 flavour, e.g. 7.3.4+deb13-amd64.
esc="${series//./\\.}"
abi="$(private_apt_cache "$aptdir" pkgnames "linux-image-$series." |
  grep -E "^linux-image-$esc\.[0-9]+\+deb[0-9]+-amd64\$" | sed 's/^linux-image-//' |
  sort -V | tail -n1)"
if [[ -z $abi ]]; then
  log "no linux-image-$series.*-amd64 in $suite"
  exit 1
fi
meta="linux-image-$abi"
if [[ $layout == split ]]; then
  # linux-image-V is an empty meta package; the files are in what it depends on.
  mapfile -t pkgs < <(private_apt_cache "$aptdir" depends "$meta" |
    sed -nE 's/^[[:space:]]+Depends: (linux-(base|binary|modules)-[^[:space:]]+)$/\1/p' | sort -u)
  if ((${#pkgs[@]} != 3)); then
    log "unexpected dependencies of $meta: ${pkgs[*]:-none}"
    exit 1
  fi
else
  pkgs=("$meta")
fi

wanted=""
for p in "${pkgs[@]}"; do
  wanted+="$p=$(private_apt_cache "$aptdir" show --no-all-versions "$p" | sed -n 's/^Version: //p' | head -n1)"$'\n'
done
if [[ -f $kdir/.done && "$(cat "$kdir/packages")"$'\n' == "$wanted" ]]; then
  log "kernel $abi is already the newest of $series"
  echo "$kdir"
  exit 0
fi

debs="$aptdir/debs"
log "downloading ${pkgs[*]}"
(cd "$debs" && private_apt_get "$aptdir" -q download "${pkgs[@]}" >&2)

# Lay out a fresh copy, then swap it in, so an interrupted run leaves no half tree.
tmp="$kdir.tmp"
rm -rf "$tmp"
mkdir -p "$tmp/root"
: >"$tmp/packages"
for p in "${pkgs[@]}"; do
  ver="$(private_apt_cache "$aptdir" show --no-all-versions "$p" | sed -n 's/^Version: //p' | head -n1)"
  deb="$debs/${p}_${ver//:/%3a}_amd64.deb"
  [[ -f $deb ]] || { log "downloaded .deb for $p $ver not found in $debs"; exit 1; }
  dpkg-deb -x "$deb" "$tmp/root"
  echo "$p=$ver" >>"$tmp/packages"
done

# Debian is moving /lib/modules to /usr/lib/modules; depmod -b wants BASE/lib/modules.
if [[ -d $tmp/root/usr/lib/modules/$abi && ! -d $tmp/root/lib/modules/$abi ]]; then
  mkdir -p "$tmp/root/lib/modules"
  mv "$tmp/root/usr/lib/modules/$abi" "$tmp/root/lib/modules/$abi"
fi
[[ -d $tmp/root/lib/modules/$abi/kernel ]] || { log "no modules for $abi in the packages"; exit 1; }
vmlinuz=""
for c in "$tmp/root/boot/vmlinuz-$abi" "$tmp/root/lib/modules/$abi/vmlinuz"; do
  [[ -f $c ]] && { vmlinuz="$c"; break; }
done
[[ -n $vmlinuz ]] || { log "no vmlinuz-$abi in the packages"; exit 1; }
mv "$vmlinuz" "$tmp/vmlinuz"

# The packages ship no modules.dep (the postinst makes it).
depmod -b "$tmp/root" "$abi"
extract_vmlinux "$tmp"
echo "$abi" >"$tmp/version"
touch "$tmp/.done"

rm -rf "$kdir"
mv "$tmp" "$kdir"
# The .debs are not needed again: the extracted tree is the cache.
rm -f "$debs"/*.deb
log "kernel $abi ready in $kdir"
echo "$kdir"
