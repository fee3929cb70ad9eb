#!/usr/bin/env bash
# build-initramfs.sh SERIES OUTPUT SCENARIO...
#
# Builds the initramfs the VM boots (cpio newc, gzip) for kernel SERIES (7.3 | 6.12):
#
#   base (cached in $VM_CACHE/initramfs-SERIES/, rebuilt only when this script, the
#   kernel or a host package changes):
#     busybox-static (applets for whatever is not a real binary), bash as /bin/sh,
#     GNU timeout and env (busybox's own always exec its `ip` applet), kmod,
#     iproute2 (ip, bridge, rdma, ss), jq, rdma-core's tools (ibverbs-utils,
#     rdmacm-utils, perftest) with every library ldd lists, the run-time loaded
#     rxe provider and libgcc_s.so.1, an ld.so.cache, and the kernel modules in
#     $VM_MODULES plus their dependencies, decompressed, with a fresh modules.dep.
#   python (only when a SCENARIO has the header line `# vm-needs: python`; cached
#   beside the base, rebuilt when it is): Debian's python3 with its standard library
#   (without tests, IDLE, tkinter, lib2to3 and the like; the .py files and their .pyc),
#   lib-dynload, python3-grpcio and python3-protobuf, every library ldd lists for
#   them, and the pod-resources stubs generated on the host from
#   kubelet/podresources.proto, for test/fake_kubelet/fake_kubelet.py in the guest.
#   overlay (rebuilt on every call, it is small):
#     /init, /vm/lib.sh, /vm/scenarios/NN-NAME.sh (the SCENARIO files, in order),
#     /usr/bin/smc_probe, smc_dump and smc_conn (static), and the plugin from $ERDMA_CNI with its libraries;
#     with the python part, /vm/fake_kubelet/fake_kubelet.py.
#
# OUTPUT is the gzip'd cpio archives concatenated, each padded to 4 bytes
# (the kernel looks for the next archive only at a 4-byte boundary).
#
# Environment: BUILD_DIR, VM_CACHE (see fetch-kernel.sh); ERDMA_CNI (default
# $BUILD_DIR/erdma-cni; "none" leaves the plugin out); VM_MODULES (extra modules).
set -euo pipefail

# shellcheck source=SCRIPTDIR/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
here="$VM_HERE"
ERDMA_CNI="${ERDMA_CNI:-$BUILD_DIR/erdma-cni}"

log() { echo "build-initramfs: $*" >&2; }
die() { log "$*"; exit 1; }

(($# >= 2)) || { echo "usage: $0 7.3|6.12 OUTPUT SCENARIO..." >&2; exit 2; }
series="$1"
output="$2"
shift 2
scenarios=("$@")
need_python=""
for s in "${scenarios[@]}"; do
  [[ -f $s ]] || die "no scenario file $s"
  grep -qE '^#[[:space:]]*vm-needs:.*\<python\>' "$s" && need_python=1
done
if [[ $ERDMA_CNI != none ]]; then
  [[ -x $ERDMA_CNI ]] || die "no plugin binary at $ERDMA_CNI (build it, or set ERDMA_CNI=none)"
fi

# Modules the guest may need; those a kernel lacks are left out (7.3 has no smc).
# crc32_generic/crc32_pclmul: 6.12's rxe asks the crypto API for "crc32" when a device
# is added (request_module, invisible to modules.dep); without them `rdma link add`
# fails with ENOENT. 7.3's rxe uses the crc32 library instead.
# virtio_net, e1000e: the NICs of the two-NUMA-node machine (run.sh, VM_NUMA=2).
modules=(rdma_rxe ib_core ib_uverbs ib_umad rdma_ucm rdma_cm crc32_generic crc32_pclmul
  veth macvlan ipvlan bridge dummy 8021q vxlan smc smc_diag virtio_net e1000e)
read -ra extra_modules <<<"${VM_MODULES:-}"
modules+=("${extra_modules[@]}")

# --- host packages ---------------------------------------------------------------
vm_ensure_packages || die "the host lacks packages the image is made of"
mapfile -t host_packages < <(vm_host_packages)

kdir="$("$here/fetch-kernel.sh" "$series" | tail -n1)"
kver="$(cat "$kdir/version")"

# --- helpers -----------------------------------------------------------------------
# The guest is merged-/usr: /bin, /sbin, /lib, /lib64 are links into /usr.
usr_path() {
  case "$1" in
    /usr/*) echo "$1" ;;
    /bin/* | /sbin/* | /lib/* | /lib64/*) echo "/usr$1" ;;
    *) echo "$1" ;;
  esac
}

# copy_file STAGE HOSTPATH [GUESTPATH]: the file's content (links followed).
copy_file() {
  local stage="$1" src="$2" dst
  dst="$stage$(usr_path "${3:-$2}")"
  mkdir -p "$(dirname "$dst")"
  cp -L --preserve=mode "$src" "$dst"
}

# copy_libs STAGE FILE: every library ldd lists for FILE, under the name ldd gives,
# unless the stage or the base image (BASE_FILES) has it already.
declare -A BASE_FILES=()
copy_libs() {
  local stage="$1" file="$2" lib guest
  if ! ldd "$file" >/dev/null 2>&1; then
    return 0 # static, or a script
  fi
  while read -r lib; do
    [[ -n $lib ]] || continue
    guest="$(usr_path "$lib")"
    [[ -e $stage$guest || -n ${BASE_FILES[$guest]:-} ]] || copy_file "$stage" "$lib"
  done < <(ldd "$file" | sed -nE 's#^[[:space:]]*([^[:space:]]+ => )?(/[^[:space:]]+) \(0x.*#\2#p')
  if ldd "$file" | grep -q 'not found'; then
    die "$file: $(ldd "$file" | grep 'not found' | tr -s ' \t' ' ')"
  fi
}

# copy_bin STAGE HOSTPATH [GUESTPATH]: a program and its libraries.
copy_bin() {
  copy_file "$@"
  copy_libs "$1" "$2"
}

# pack DIR OUT: a newc cpio of DIR, gzip'd, padded to a multiple of 4 bytes.
pack() {
  local dir="$1" out="$2" size
  (cd "$dir" && find . -mindepth 1 | LC_ALL=C sort |
    cpio --quiet -o -H newc -R 0:0 --reproducible) | gzip -n -6 >"$out"
  size=$(stat -c %s "$out")
  if ((size % 4)); then
    head -c $((4 - size % 4)) /dev/zero >>"$out"
  fi
}

# --- base image --------------------------------------------------------------------
base_dir="$VM_CACHE/initramfs-$series"
base="$base_dir/base.cpio.gz"
pkg_versions="$(dpkg-query -W -f='${Package}=${Version}\n' "${host_packages[@]}" | sort)"
key="$(
  {
    sha256sum "$here/build-initramfs.sh" "$here/packages.txt" | cut -d' ' -f1
    echo "$kver"
    cat "$kdir/packages"
    echo "$pkg_versions"
    echo "${modules[*]}"
  } | sha256sum | cut -d' ' -f1
)"

build_base() {
  local stage="$base_dir/stage"
  rm -rf "$stage"
  mkdir -p "$stage"/usr/{bin,sbin,lib,lib64} "$stage"/{proc,sys,dev,run,tmp,root,etc,var,mnt}
  ln -s usr/bin "$stage/bin"
  ln -s usr/sbin "$stage/sbin"
  ln -s usr/lib "$stage/lib"
  ln -s usr/lib64 "$stage/lib64"
  ln -s ../run "$stage/var/run"
  chmod 1777 "$stage/tmp"

  local multiarch
  multiarch="$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)"

  # Programs. bash is /bin/sh: busybox's shell always runs its own `ip` applet.
  local progs=(
    /usr/bin/bash /usr/bin/kmod /usr/bin/timeout /usr/bin/env /usr/bin/jq
    "$(command -v ip)" "$(command -v bridge)" "$(command -v rdma)" "$(command -v ss)"
    # IPAM for the macvlan/ipvlan scenarios (containernetworking-plugins).
    /usr/lib/cni/host-local /usr/lib/cni/static
  )
  local p
  for pkg in ibverbs-utils rdmacm-utils perftest; do
    while read -r p; do
      # ELF programs only: perftest also ships shell scripts for real clusters.
      [[ -f $p && -x $p ]] && head -c4 "$p" | grep -q ELF && progs+=("$p")
    done < <(dpkg -L "$pkg" | grep -E '^/usr/s?bin/')
  done
  for p in "${progs[@]}"; do
    copy_bin "$stage" "$p"
  done
  ln -s bash "$stage/usr/bin/sh"
  for p in modprobe insmod rmmod lsmod modinfo depmod; do
    ln -s ../bin/kmod "$stage/usr/sbin/$p"
  done

  # libibverbs loads its providers at run time: rxe (Soft-RoCE) and siw, with their
  # driver files. glibc loads libgcc_s.so.1 at run time too (pthread_cancel, unwinding).
  local provdir="/usr/lib/$multiarch/libibverbs" drv name so
  local -a sos
  mkdir -p "$stage/etc/libibverbs.d"
  for drv in rxe siw; do
    [[ -f /etc/libibverbs.d/$drv.driver ]] || die "no /etc/libibverbs.d/$drv.driver (apt-get install ibverbs-providers)"
    name="$(awk '$1 == "driver" {print $2}' "/etc/libibverbs.d/$drv.driver")"
    sos=("$provdir/lib$name-rdmav"*.so)
    so="${sos[0]}"
    [[ -f $so ]] || die "no provider lib$name-rdmav*.so in $provdir"
    cp "/etc/libibverbs.d/$drv.driver" "$stage/etc/libibverbs.d/"
    copy_bin "$stage" "$so"
  done
  copy_file "$stage" "/usr/lib/$multiarch/libgcc_s.so.1"

  # busybox for everything else, as links, but never over a real program.
  copy_file "$stage" /bin/busybox /usr/bin/busybox
  local applet
  for applet in $(/bin/busybox --list); do
    [[ $applet == busybox ]] && continue
    [[ -e $stage/usr/bin/$applet || -e $stage/usr/sbin/$applet || -L $stage/usr/bin/$applet ||
      -L $stage/usr/sbin/$applet ]] && continue
    ln -s busybox "$stage/usr/bin/$applet"
  done

  # Small configuration the tools read.
  [[ -d /etc/iproute2 ]] && cp -r /etc/iproute2 "$stage/etc/"
  [[ -d /usr/share/iproute2 ]] && mkdir -p "$stage/usr/share" && cp -r /usr/share/iproute2 "$stage/usr/share/"
  printf 'root:x:0:0:root:/root:/bin/bash\n' >"$stage/etc/passwd"
  printf 'root:x:0:\n' >"$stage/etc/group"
  printf '127.0.0.1 localhost\n::1 localhost\n' >"$stage/etc/hosts"
  printf 'hosts: files\n' >"$stage/etc/nsswitch.conf"
  : >"$stage/etc/fstab"
  echo "/usr/lib/$multiarch" >"$stage/etc/ld.so.conf"
  echo "/usr/lib64" >>"$stage/etc/ld.so.conf"
  ldconfig -r "$stage"

  # Kernel modules: the closure of $modules (hard and soft dependencies, as modprobe
  # sees them), decompressed so the guest's kmod needs no xz, with a fresh depmod.
  local src="$kdir/root" mdst="$stage/lib/modules/$kver" m f rel present=() absent=()
  mkdir -p "$stage/usr/lib/modules/$kver"
  local -A files=()
  for m in "${modules[@]}"; do
    local deps
    if ! deps="$(modprobe -d "$src" -S "$kver" --show-depends "$m" 2>/dev/null)"; then
      absent+=("$m")
      continue
    fi
    present+=("$m")
    while read -r f; do
      files["$f"]=1
    done < <(sed -nE 's/^insmod ([^[:space:]]+).*/\1/p' <<<"$deps")
  done
  for f in "${!files[@]}"; do
    rel="${f#"$src"/lib/modules/"$kver"/}"
    mkdir -p "$(dirname "$mdst/$rel")"
    case "$f" in
      *.ko.xz) xz -dc "$f" >"$mdst/${rel%.xz}" ;;
      *.ko.zst) zstd -qdc "$f" >"$mdst/${rel%.zst}" ;;
      *.ko.gz) gzip -dc "$f" >"$mdst/${rel%.gz}" ;;
      *) cp "$f" "$mdst/$rel" ;;
    esac
  done
  for f in modules.order modules.builtin modules.builtin.modinfo; do
    [[ -f $src/lib/modules/$kver/$f ]] && cp "$src/lib/modules/$kver/$f" "$mdst/"
  done
  depmod -b "$stage" "$kver"
  printf '%s\n' "${present[@]}" >"$stage/etc/vm-modules"
  log "$series: ${#files[@]} module files for ${present[*]}${absent:+ (not in this kernel: ${absent[*]})}"

  (cd "$stage" && find . -mindepth 1 ! -type d | sed 's/^\.//' | LC_ALL=C sort) >"$base_dir/files"
  pack "$stage" "$base.tmp"
  mv "$base.tmp" "$base"
  rm -rf "$stage"
}

mkdir -p "$base_dir"
exec 9>"$base_dir/.lock"
flock 9
if [[ ! -f $base || ! -f $base_dir/files || "$(cat "$base_dir/key" 2>/dev/null)" != "$key" ]]; then
  log "building the $series base image"
  build_base
  echo "$key" >"$base_dir/key"
fi
flock -u 9

while read -r f; do
  BASE_FILES["$f"]=1
done <"$base_dir/files"

# --- python (for the fake kubelet) -------------------------------------------------
py_part="$base_dir/python.cpio.gz"
py="$(readlink -f /usr/bin/python3)"       # /usr/bin/python3.11
pyver="${py##*/python}"                    # 3.11
pylib="/usr/lib/python$pyver"
dist=/usr/lib/python3/dist-packages
proto="$VM_REPO/kubelet/podresources.proto"

build_python() {
  local stage="$base_dir/python-stage" f
  rm -rf "$stage"
  mkdir -p "$stage/usr/bin"
  copy_bin "$stage" "$py"
  ln -s "${py##*/}" "$stage/usr/bin/python3"
  # The standard library without what a server never imports. The .pyc files keep
  # the .py files' times (cp -a), so the guest never compiles: under TCG that is slow.
  (cd "$pylib" && find . \( -path ./test -o -path ./idlelib -o -path ./tkinter -o -path ./turtledemo \
    -o -path ./lib2to3 -o -path ./pydoc_data -o -path ./ensurepip -o -path './config-*' \
    -o -path ./site-packages -o -path ./dist-packages -o -path ./distutils -o -path ./venv \
    -o -path ./sqlite3 -o -path ./dbm -o -path ./curses -o -path ./unittest -o -path ./__phello__ \
    -o -name '_test*.so' -o -name '_ctypes_test*' -o -name '_sqlite3*' -o -name '_curses*' \
    -o -name '_dbm*' -o -name '_gdbm*' -o -name 'readline*.so' -o -name '_tkinter*' -o -name 'xx*.so' \) -prune \
    -o -type f \( -name '*.py' -o -name '*.so' -o -name "*.cpython-${pyver/./}.pyc" \) -print |
    cpio --quiet -pdm "$stage$pylib")
  # gRPC and protobuf as Debian ships them (site.py adds dist-packages to the path).
  mkdir -p "$stage$dist/google"
  cp -a "$dist/grpc" "$stage$dist/"
  cp -a "$dist/google/protobuf" "$stage$dist/google/"
  while read -r f; do
    copy_libs "$stage" "$f"
  done < <(find "$stage$pylib" "$stage$dist" -name '*.so' | sed "s#^$stage##")
  # The stubs, made here: grpc_tools (and its protoc) stay on the host.
  /usr/bin/python3 "$VM_REPO/test/fake_kubelet/fake_kubelet.py" --stubs "$stage/vm/fake_kubelet/stubs" --stubs-only ||
    die "generating the pod-resources stubs failed (python3-grpc-tools)"
  pack "$stage" "$py_part.tmp"
  mv "$py_part.tmp" "$py_part"
  rm -rf "$stage"
}

if [[ -n $need_python ]]; then
  py_key="$(
    {
      echo "$key"
      sha256sum "$proto" "$VM_REPO/test/fake_kubelet/fake_kubelet.py" | cut -d' ' -f1
      dpkg-query -W -f='${Package}=${Version}\n' "libpython$pyver-stdlib" "libpython$pyver-minimal" \
        "python$pyver-minimal" python3-grpcio python3-protobuf python3-grpc-tools
    } | sha256sum | cut -d' ' -f1
  )"
  flock 9
  if [[ ! -f $py_part || "$(cat "$base_dir/python.key" 2>/dev/null)" != "$py_key" ]]; then
    log "building the $series python part"
    build_python
    echo "$py_key" >"$base_dir/python.key"
  fi
  flock -u 9
fi

# --- overlay -----------------------------------------------------------------------
ov="$(mktemp -d "${TMPDIR:-/tmp}/vm-overlay.XXXXXX")"
trap 'rm -rf "$ov"' EXIT
mkdir -p "$ov"/usr/bin "$ov"/vm/scenarios
install -m 0755 "$here/guest/init" "$ov/init"
install -m 0644 "$here/guest/lib.sh" "$ov/vm/lib.sh"
install -m 0644 "$here/guest/plugin.sh" "$ov/vm/plugin.sh"
i=0
for s in "${scenarios[@]}"; do
  i=$((i + 1))
  install -m 0755 "$s" "$ov/vm/scenarios/$(printf '%02d' "$i")-$(basename "$s")"
done

# smc_probe is static; rebuilt only when its source changes.
probe="$VM_CACHE/smc_probe"
if [[ ! -x $probe || $here/guest/smc_probe.c -nt $probe ]]; then
  gcc -static -s -O2 -Wall -o "$probe.$$.tmp" "$here/guest/smc_probe.c"
  mv "$probe.$$.tmp" "$probe"
fi
install -m 0755 "$probe" "$ov/usr/bin/smc_probe"
# smc_dump (SMC tables and sockets) and smc_conn (one IPPROTO_SMC connection), the same way.
for tool in smc_dump smc_conn; do
  if [[ ! -x $VM_CACHE/$tool || $here/guest/$tool.c -nt $VM_CACHE/$tool ]]; then
    gcc -static -s -O2 -Wall -o "$VM_CACHE/$tool.$$.tmp" "$here/guest/$tool.c"
    mv "$VM_CACHE/$tool.$$.tmp" "$VM_CACHE/$tool"
  fi
  install -m 0755 "$VM_CACHE/$tool" "$ov/usr/bin/$tool"
done

if [[ -n $need_python ]]; then
  install -D -m 0755 "$VM_REPO/test/fake_kubelet/fake_kubelet.py" "$ov/vm/fake_kubelet/fake_kubelet.py"
fi

if [[ $ERDMA_CNI != none ]]; then
  copy_file "$ov" "$ERDMA_CNI" /usr/bin/erdma-cni
  # Debug builds carry ~15 MB of DWARF the guest never reads.
  command -v strip >/dev/null && strip --strip-debug "$ov/usr/bin/erdma-cni"
  copy_libs "$ov" "$ERDMA_CNI"
  mkdir -p "$ov/opt/cni/bin"
  ln -s /usr/bin/erdma-cni "$ov/opt/cni/bin/erdma-cni"
fi
# Libraries the base lacks land in /usr/lib/<multiarch>, which ld.so searches even
# when they are not in the base's ld.so.cache.
pack "$ov" "$ov.cpio.gz"

mkdir -p "$(dirname "$output")"
cat "$base" ${need_python:+"$py_part"} "$ov.cpio.gz" >"$output.tmp"
rm -f "$ov.cpio.gz"
mv "$output.tmp" "$output"
echo "$output"
