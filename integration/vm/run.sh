#!/usr/bin/env bash
# run.sh SERIES SCENARIO...     (SERIES: 7.3 | 6.12)
#
# Boots Debian's kernel SERIES under qemu with an initramfs holding the SCENARIO files
# (bash scripts using guest/lib.sh), streams the guest's console, and ends with the
# verdict as its last line:  N passed, N failed[, N skipped]
#
# Exit status: 0 all passed; 1 a check failed, or the guest gave no verdict (timeout,
# panic); 77 qemu is not available ("SKIPPED: ..."); 2 usage.
#
# Environment:
#   VM_TIMEOUT=600           seconds for the whole VM run (qemu is killed after it)
#   VM_BOOT_TIMEOUT=240      seconds for the kernel to start /init; a boot that hangs
#                            before it is killed and booted once more (see the retry)
#   VM_SCENARIO_TIMEOUT=300  seconds for one scenario inside the guest
#   VM_ACCEL=auto|tcg|kvm    auto: KVM only when it really boots a guest (see detect_accel)
#   VM_MEM=2G VM_SMP=2       guest size
#   VM_MODULES="a b"         modules /init loads before the scenarios (all scenarios
#                            can modprobe on their own; this is for boot-time needs)
#   VM_APPEND="..."          more kernel command line, e.g. ib_core.netns_mode=0
#   VM_LOG=FILE              where the serial console goes (default $VM_CACHE/logs/)
#   VM_QUIET=1               echo only the verdict lines and failure details
#   VM_BZIMAGE=1             boot the bzImage even where a PVH vmlinux was extracted
#   VM_QEMU=PATH             the qemu binary (default qemu-system-x86_64)
#   VM_KVM_PROBE=1           probe KVM with a boot even where the CPU flags rule it out
#   VM_NUMA=2                a q35 machine with two NUMA nodes, each with a PCIe expander
#                            bridge, a PCIe switch holding a GPU stand-in and NICs, and a NIC
#                            on a root port of its own (default: what the scenarios' header
#                            line `# vm-numa: 2` asks; 1 = the plain machine). See numa_args.
#   VM_NUMA_NIC=e1000e       the model of those NICs (or virtio-net-pci: a netdev whose
#                            device is a virtio device below the PCI function)
#   ERDMA_CNI, BUILD_DIR, VM_CACHE: see build-initramfs.sh and fetch-kernel.sh
set -uo pipefail

# shellcheck source=SCRIPTDIR/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if (($# < 2)); then
  echo "usage: $0 7.3|6.12 SCENARIO..." >&2
  exit 2
fi
series="$1"
shift
scenarios=()
for s in "$@"; do
  [[ -f $s ]] || { echo "run: no scenario file $s" >&2; exit 2; }
  scenarios+=("$(realpath "$s")")
done

VM_TIMEOUT="${VM_TIMEOUT:-600}"
VM_BOOT_TIMEOUT="${VM_BOOT_TIMEOUT:-240}"

# The topology the scenarios ask for (`# vm-numa: N`); one VM has one topology.
numa_want=""
for s in "${scenarios[@]}"; do
  n="$(sed -nE 's/^#[[:space:]]*vm-numa:[[:space:]]*([0-9]+).*/\1/p' "$s" | head -n1)"
  n="${n:-1}"
  if [[ -n $numa_want && $n != "$numa_want" ]]; then
    echo "run: the scenarios ask for different NUMA topologies (vm-numa $numa_want and $n); run them apart" >&2
    exit 2
  fi
  numa_want="$n"
done
VM_NUMA="${VM_NUMA:-${numa_want:-1}}"
case "$VM_NUMA" in
  1 | 2) ;;
  *) echo "run: VM_NUMA=$VM_NUMA: 1 or 2" >&2; exit 2 ;;
esac
VM_SCENARIO_TIMEOUT="${VM_SCENARIO_TIMEOUT:-300}"

# qemu first: without it there is nothing to run (as root, packages.txt is installed).
vm_ensure_packages >&2 || true
qemu="${VM_QEMU:-qemu-system-x86_64}"
if ! command -v "$qemu" >/dev/null; then
  echo "SKIPPED: $qemu is not installed (apt-get install qemu-system-x86); no VM test ran"
  exit 77
fi
vm_ensure_packages || { echo "run: the host lacks packages the VM image needs" >&2; exit 1; }

mkdir -p "$VM_CACHE/logs" "$VM_CACHE/run"
kdir="$("$VM_HERE/fetch-kernel.sh" "$series" | tail -n1)" || { echo "run: fetching kernel $series failed" >&2; exit 1; }
img="$VM_CACHE/run/$series.$$.img"
probe_log="$VM_CACHE/run/$series.$$.probe.log"
trap 'rm -f "$img" "$probe_log"' EXIT
"$VM_HERE/build-initramfs.sh" "$series" "$img" "${scenarios[@]}" >/dev/null ||
  { echo "run: building the initramfs failed" >&2; exit 1; }

# The kernel: the uncompressed PVH ELF if fetch-kernel.sh could extract one (qemu jumps
# straight into it), else the bzImage (SeaBIOS, then the kernel decompresses itself).
kernel="$kdir/vmlinuz"
[[ -f $kdir/vmlinux && -z ${VM_BZIMAGE:-} ]] && kernel="$kdir/vmlinux"

mem="${VM_MEM:-2G}" smp="${VM_SMP:-2}"

# numa_args: with VM_NUMA=2, a q35 machine with two NUMA nodes (half the memory and half
# the CPUs each). On each node a PCIe expander bridge (pxb-pcie; the guest finds its root
# bus and its _PXM in the ACPI tables) with two root ports: behind the first a PCIe
# switch (x3130 upstream, xio3130 downstream ports) holding a GPU stand-in (a
# virtio-rng device: only its place in the tree matters) and NICs, behind the second one
# NIC on its own ($VM_NUMA_NIC):
#   node 0: pxb-pcie bus 0x20; switch: GPU 0, nic0 (MAC 52:54:00:e0:00:00), nic4 (:04,
#           its link down: qmp set_link, below); own root port: nic1 (:01)
#   node 1: pxb-pcie bus 0x40; switch: GPU 1, nic2 (:02); own root port: nic3 (:03)
# The NICs are the ports of one qemu hub (`-netdev hubport`), a wire between them and
# nothing else: no frame leaves the VM. (A NIC alone on a hub cannot send at all: the
# hub reports that nobody can receive, virtio-net stops its TX queue and the guest's
# watchdog reports a transmit timeout.)
numa_args=()
qmp_socket=""
nic_model="${VM_NUMA_NIC:-e1000e}"
case "$nic_model" in
  virtio-net-pci) nic_module=virtio_net nic_opts=",disable-legacy=on" ;;
  e1000e) nic_module=e1000e nic_opts="" ;;
  *) echo "run: VM_NUMA_NIC=$nic_model: e1000e or virtio-net-pci" >&2; exit 2 ;;
esac
if ((VM_NUMA == 2)); then
  mib="$(numfmt --from=iec "${mem%[bB]}" 2>/dev/null)" ||
    { echo "run: VM_MEM=$mem: a size such as 2G or 1536M" >&2; exit 2; }
  [[ $mem =~ [0-9]$ ]] && mib=$((mib * 1024 * 1024)) # qemu reads a bare number as MiB
  mib=$((mib / 1024 / 1024))
  ((smp >= 2)) || smp=2
  half=$((mib / 2))
  mem="$((half * 2))M"
  numa_args+=(
    -machine q35
    -object "memory-backend-ram,id=mem0,size=${half}M" -object "memory-backend-ram,id=mem1,size=${half}M"
    -numa "node,nodeid=0,cpus=0-$((smp / 2 - 1)),memdev=mem0"
    -numa "node,nodeid=1,cpus=$((smp / 2))-$((smp - 1)),memdev=mem1"
  )
  chassis=1
  # port BUS ID: a PCIe port with a chassis number of its own.
  port() {
    numa_args+=(-device "$1,id=$3,bus=$2,chassis=$chassis,slot=0")
    chassis=$((chassis + 1))
  }
  # nic BUS K: NIC K on BUS.
  nic() {
    numa_args+=(-netdev "hubport,id=nic$2,hubid=0"
      -device "$nic_model,id=nicdev$2,netdev=nic$2,bus=$1,mac=52:54:00:e0:00:0$2$nic_opts")
  }
  for node in 0 1; do
    numa_args+=(-device "pxb-pcie,id=pxb$node,bus=pcie.0,bus_nr=$((0x20 * (node + 1))),numa_node=$node")
    port pcie-root-port "pxb$node" "rp${node}s"
    numa_args+=(-device "x3130-upstream,id=up$node,bus=rp${node}s")
    port xio3130-downstream "up$node" "dn${node}g"
    numa_args+=(-device "virtio-rng-pci,bus=dn${node}g,disable-legacy=on")
    port xio3130-downstream "up$node" "dn${node}n"
    nic "dn${node}n" "$((node * 2))"
    if ((node == 0)); then
      port xio3130-downstream "up$node" "dn${node}d"
      nic "dn${node}d" 4
    fi
    port pcie-root-port "pxb$node" "rp${node}o"
    nic "rp${node}o" "$((node * 2 + 1))"
  done
  qmp_socket="$VM_CACHE/run/$$.qmp"
  numa_args+=(-qmp "unix:$qmp_socket,server=on,wait=off")
fi

qemu_base=(
  "$qemu" -nodefaults -no-user-config -nographic -no-reboot
  -monitor none -nic none
  -m "$mem" -smp "$smp" "${numa_args[@]}"
  -kernel "$kernel" -initrd "$img"
)
# loglevel 5: warnings and the body of an oops reach the console (and the log).
cmdline="console=ttyS0 panic=-1 quiet loglevel=5"

# KVM only when it really works. /dev/kvm can be there and openable but be a flavour a
# stock kernel cannot run on (no vmx/svm in the CPU flags; qemu with -cpu host then
# aborts on an MSR, and with other CPU models the guest hangs silently). Where the
# flags are there, a probe boot decides, and its verdict is cached per host kernel.
# VM_KVM_PROBE=1 forces the probe boot (and ignores its cached verdict).
accel=tcg
accel_reason=""
detect_accel() {
  case "${VM_ACCEL:-auto}" in
    tcg | kvm) accel="$VM_ACCEL" accel_reason="VM_ACCEL=$VM_ACCEL"; return ;;
  esac
  if [[ ! -c /dev/kvm || ! -r /dev/kvm || ! -w /dev/kvm ]]; then
    accel_reason="no usable /dev/kvm"
    return
  fi
  if ! grep -qwE 'vmx|svm' /proc/cpuinfo && [[ -z ${VM_KVM_PROBE:-} ]]; then
    accel_reason="/dev/kvm exists but the CPU shows no vmx/svm, so not a KVM a stock kernel runs on"
    return
  fi
  local cache
  cache="$VM_CACHE/accel.$(uname -r)"
  if [[ -f $cache && -z ${VM_KVM_PROBE:-} ]]; then
    accel="$(cat "$cache")" accel_reason="probe verdict cached in $cache"
    return
  fi
  local t0=$SECONDS
  (timeout -k 5 "${VM_KVM_PROBE_TIMEOUT:-30}" "${qemu_base[@]}" -accel kvm -cpu host \
    -serial "file:$probe_log" -append "$cmdline vm.probe" </dev/null >/dev/null 2>&1
    true) 2>/dev/null # (the subshell, not run.sh, reports qemu's abort: to /dev/null)
  if grep -q 'VM-PROBE ok' "$probe_log" 2>/dev/null; then
    accel=kvm accel_reason="a KVM probe boot reached /init in $((SECONDS - t0))s"
  else
    accel=tcg accel_reason="a KVM probe boot did not reach /init ($((SECONDS - t0))s)"
  fi
  echo "$accel" >"$cache"
}
detect_accel
case "$accel" in
  kvm) accel_args=(-accel kvm -cpu host) ;;
  *) accel_args=(-accel "tcg,thread=multi" -cpu max) ;;
esac

log="${VM_LOG:-$VM_CACHE/logs/$series.$$.log}"
mkdir -p "$(dirname "$log")"
ln -sfn "$(basename "$log")" "$VM_CACHE/logs/$series.latest.log" 2>/dev/null || true
# Keep the last few logs of this series.
find "$VM_CACHE/logs" -maxdepth 1 -type f -name "$series.[0-9]*.log" -printf '%T@ %p\n' 2>/dev/null |
  LC_ALL=C sort -rn | tail -n +6 | cut -d' ' -f2- | xargs -r -d '\n' rm -f

modules_arg=""
boot_modules="${VM_MODULES:-}"
((VM_NUMA == 2)) && boot_modules+=" $nic_module" # the NICs' driver (a module in Debian)
[[ -n ${boot_modules// /} ]] && modules_arg="vm.modules=$(xargs <<<"$boot_modules" | tr ' ' ',')"
append="$cmdline vm.timeout=$VM_SCENARIO_TIMEOUT $modules_arg ${VM_APPEND:-}"

# Stream the console while the guest runs: \r out, BIOS and terminal junk out.
filter() {
  tr -d '\r' | sed -u -e 's/\x1b\[[0-9;?]*[a-zA-Z]//g' -e 's/\x1bc//g' -e 's/^Booting from ROM\.*//' |
    grep --line-buffered -vE '^(SeaBIOS|iPXE|Press Ctrl-B|[[:space:]]*$|\[ *[0-9.]+\] (sysrq: Power Off|reboot: Power down))' |
    if [[ -n ${VM_QUIET:-} ]]; then grep --line-buffered -E '^(VM-TEST|VM-RESULT|VM-INIT|    \| )'; else cat; fi
}

# nic4_link_down: on the two-NUMA-node machine, NIC 4's link is down from the start, as
# a port whose cable is out: qemu's set_link, over QMP, once qemu listens (at most 20 s).
nic4_link_down() {
  python3 - "$qmp_socket" <<'PY' >/dev/null 2>&1
import json, socket, sys, time
for _ in range(200):
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(sys.argv[1])
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit(1)
f = s.makefile("rw")
f.readline()
for cmd in ({"execute": "qmp_capabilities"},
            {"execute": "set_link", "arguments": {"name": "nicdev4", "up": False}}):
    f.write(json.dumps(cmd) + "\n")
    f.flush()
    f.readline()
PY
}

# boot: one qemu run with the console in $log; sets qrc, elapsed, clean (the console
# without \r), init_line (empty if the kernel never started /init) and boot_hung (the
# kernel had not started /init after VM_BOOT_TIMEOUT seconds, and qemu was killed).
qpid="" tpid="" wpid=""
trap 'kill $qpid $tpid $wpid 2>/dev/null; rm -f "$img" "$probe_log" "$log.hung" ${qmp_socket:+"$qmp_socket"}' EXIT
trap 'exit 130' INT TERM
boot() {
  : >"$log"
  local start end
  start=$(date +%s.%N)
  timeout -k 10 "$VM_TIMEOUT" "${qemu_base[@]}" "${accel_args[@]}" -serial "file:$log" \
    -append "$append" </dev/null >"$log.qemu" 2>&1 &
  qpid=$!
  [[ -n $qmp_socket ]] && nic4_link_down &
  # In the background, so that `wait` (which a signal interrupts, unlike a foreground
  # pipeline) is what run.sh sits in; an interrupted run.sh takes its VM with it.
  tail -n +1 -F --pid="$qpid" "$log" 2>/dev/null | filter &
  tpid=$!
  # The boot watchdog: /init prints VM-INIT first thing; a kernel that has not got there
  # in VM_BOOT_TIMEOUT seconds hangs (seen under TCG on a loaded machine, after the PCI
  # scan), and waiting for VM_TIMEOUT would only fail the run later.
  rm -f "$log.hung"
  (
    deadline=$((SECONDS + VM_BOOT_TIMEOUT))
    while kill -0 "$qpid" 2>/dev/null; do
      grep -q 'VM-INIT ' "$log" 2>/dev/null && exit 0
      if ((SECONDS >= deadline)); then
        : >"$log.hung"
        kill "$qpid" 2>/dev/null
        exit 0
      fi
      sleep 1
    done
  ) &
  wpid=$!
  wait "$qpid"
  qrc=$?
  wait "$tpid"
  wait "$wpid"
  qpid="" tpid="" wpid=""
  boot_hung=""
  [[ -e $log.hung ]] && boot_hung=1
  rm -f "$log.hung"
  end=$(date +%s.%N)
  elapsed="$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.1f", b-a}')"
  clean="$(tr -d '\r' <"$log")"
  init_line="$(grep -oE 'VM-INIT .* up [0-9.]+s' <<<"$clean" | head -n1)"
  echo "== vm $series: qemu exit $qrc after ${elapsed}s${init_line:+; /init reached at ${init_line##* up }}${boot_hung:+; killed: no /init after ${VM_BOOT_TIMEOUT}s (VM_BOOT_TIMEOUT)}"
}

# oops: the kernel's own account of a panic, from its first BUG/Oops/WARNING line (or
# the few lines before the panic line) to the panic line and the two after it.
oops() {
  awk '/(BUG:|Oops:|WARNING:|general protection|Unable to handle|invalid opcode)/ && !s {s=NR}
       {l[NR]=$0} /Kernel panic/ && !p {p=NR}
       END {if (!p) exit; b = s ? s : p - 8; if (b < 1) b = 1
            if (p - b > 40) b = p - 40
            for (i = b; i <= p + 2 && i <= NR; i++) print "  " l[i]}' <<<"$clean"
}

echo "== vm $series: kernel $(cat "$kdir/version") ($(basename "$kernel")), accel $accel ($accel_reason),${numa_args[*]:+ q35, 2 NUMA nodes with a PCIe switch and $nic_model NICs each,} timeout ${VM_TIMEOUT}s, log $log"
boot
# A kernel that panics or hangs before /init has run none of the scenarios: nothing of
# the project ran yet, so one more boot is allowed, and said out loud. A panic after
# /init is a result and stands, and so is a run that timed out after /init.
retry=""
if [[ -z $init_line ]] && grep -q 'Kernel panic' <<<"$clean"; then
  echo "VM RETRY: the kernel panicked while booting, before /init ran anything; its account:"
  oops
  retry=boot-panic
elif [[ -z $init_line && -n $boot_hung ]]; then
  echo "VM RETRY: the kernel had not started /init after ${VM_BOOT_TIMEOUT}s (VM_BOOT_TIMEOUT); its last lines:"
  tail -n 3 <<<"$clean" | sed 's/^/  /'
  retry=boot-hang
fi
if [[ -n $retry ]]; then
  cp "$log" "${log%.log}.$retry.log"
  echo "VM RETRY: booting $series once more (the first console is in ${log%.log}.$retry.log)"
  boot
fi

result="$(grep -oE 'VM-RESULT [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' <<<"$clean" | tail -n1)"

if [[ -n $result ]]; then
  read -r _ passed _ failed _ skipped _ <<<"$result"
  rc=0
  ((failed > 0)) && rc=1
else
  passed="$(grep -cE '^VM-TEST ok ' <<<"$clean")"
  failed="$(grep -cE '^VM-TEST fail ' <<<"$clean")"
  skipped="$(grep -cE '^VM-TEST skip ' <<<"$clean")"
  failed=$((failed + 1))
  if [[ -n $boot_hung ]]; then
    echo "VM FAILED: no VM-RESULT from the guest: the kernel did not start /init within ${VM_BOOT_TIMEOUT}s (VM_BOOT_TIMEOUT); log: $log"
  elif ((qrc == 124 || qrc == 137)); then
    echo "VM FAILED: no VM-RESULT from the guest: timed out after ${VM_TIMEOUT}s (VM_TIMEOUT); log: $log"
  elif grep -q 'Kernel panic' <<<"$clean"; then
    echo "VM FAILED: no VM-RESULT from the guest: kernel panic${init_line:+ after /init}; log: $log"
    oops
  else
    echo "VM FAILED: no VM-RESULT from the guest (qemu exit $qrc); log: $log"
    [[ -s $log.qemu ]] && sed 's/^/  qemu: /' "$log.qemu" | head -n 10
  fi
  rc=1
fi
rm -f "$log.qemu"

summary="$passed passed, $failed failed"
((skipped > 0)) && summary+=", $skipped skipped"
echo "$summary"
exit "$rc"
