# vm-kernels: 7.3
# vm-numa: 2
# vm-needs: python
# rails: the rails NCCL would pick. run.sh's two-NUMA-node machine has on each node a
# PCIe switch holding a GPU stand-in and a NIC, and a NIC on another root port of the
# same node; node 0's switch holds nic4 too, whose link is down:
#   node 0: switch (GPU 0, nic0, nic4 no carrier), root port: nic1
#   node 1: switch (GPU 1, nic2),                  root port: nic3
# The fake kubelet reports the pods' GPUs by UUID; a procfs laid out as the NVIDIA
# driver's (ERDMA_CNI_TEST_PROCFS, read by test builds only) maps each UUID to its GPU
# stand-in's PCI address. A pool in move mode, chained after Terway:
#   one:  a GPU on node 1, one rail: nic2 (PIX, behind its switch), not nic3 (PHB)
#   two:  GPUs on both nodes, two rails: nic0 and nic2, each PIX to its own GPU
#   down: GPU 0 from a pool of nic4 and nic1: nic4 is nearer but has no carrier, nic1
# diag shows the levels; the result and the device-info file name each rail's PCI
# address and RDMA device.
# shellcheck shell=bash  # run by /init with bash
# shellcheck source=SCRIPTDIR/../guest/lib.sh
source /vm/lib.sh
# shellcheck source=SCRIPTDIR/../guest/plugin.sh
source /vm/plugin.sh

VM_PLAN=(nics gpus nic4-no-carrier kubelet-up
  one-add one-rail one-pix-log one-result one-devinfo one-del one-devinfo-gone
  two-add two-rails two-result two-devinfo two-diag two-del two-devinfo-gone
  down-add down-rail down-passed down-del home no-state)

if [[ ! -d /sys/devices/system/node/node1 ]] || ! numa_nics 0 1 2 3 4; then
  skip_rest "not the two-NUMA-node machine with its five NICs (run through run.sh or test.sh, which read vm-numa)"
  exit 0
fi
ok nics
if ! command -v python3 >/dev/null || [[ ! -f /vm/fake_kubelet/fake_kubelet.py ]]; then
  skip_rest "no python3 or fake kubelet in the image (the vm-needs: python header)"
  exit 0
fi

# The GPU stand-ins (virtio-rng, 1af4:1044), by NUMA node; a procfs of the NVIDIA driver's
# shape for them: GPU k has UUID GPU-0000000k-... and /dev/nvidiak.
declare -A GPU=()
for d in /sys/bus/pci/devices/*; do
  [[ "$(cat "$d/vendor")" == 0x1af4 && "$(cat "$d/device")" == 0x1044 ]] || continue
  GPU[$(cat "$d/numa_node")]="${d##*/}"
done
uuid() { echo "GPU-0000000$1-1111-2222-3333-444455556666"; }
export ERDMA_CNI_TEST_PROCFS=/tmp/rails-proc
for k in 0 1; do
  mkdir -p "$ERDMA_CNI_TEST_PROCFS/driver/nvidia/gpus/${GPU[$k]}"
  printf 'Model: \t\t NVIDIA H200\nIRQ:   \t\t 0\nGPU UUID: \t %s\nBus Location: \t %s\nDevice Minor: \t %s\n' \
    "$(uuid "$k")" "${GPU[$k]}" "$k" >"$ERDMA_CNI_TEST_PROCFS/driver/nvidia/gpus/${GPU[$k]}/information"
done
# GPU k and nick (k = 0, node 0; k = 2, node 1) share the switch's upstream port.
upstream() { readlink -f "$(nic_pci "$1")" | awk -F/ '{print $(NF-2)}'; }
expect_eq gpus "$(readlink -f "/sys/bus/pci/devices/${GPU[0]}" | awk -F/ '{print $(NF-2)}') $(readlink -f "/sys/bus/pci/devices/${GPU[1]}" | awk -F/ '{print $(NF-2)}')" \
  "$(upstream nic0) $(upstream nic2)"
# The NICs' PCI addresses, read while they are on the node.
declare -A PCI=()
for k in 0 1 2 3 4; do PCI[nic$k]="$(basename "$(nic_pci "nic$k")")"; done

# The node: five ENI stand-ins, up, with an address each, and a Soft-RoCE device each.
rm -rf "$DATA"
rdma system set netns shared
sysctl -qw net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.accept_dad=0
for k in 0 1 2 3 4; do
  ip addr add "10.9.0.2$k/24" dev "nic$k" noprefixroute
  ip link set "nic$k" up
done
expect_eq nic4-no-carrier "0" "$(cat /sys/class/net/nic4/carrier 2>&1)"
# A pool passes over a device without carrier: the e1000e links come up a moment after
# the devices, and again after each DEL brings a NIC home.
carriers_up nic0 nic1 nic2 nic3
# rxe_up: a Soft-RoCE device rxe_nicK on each NIC that has none (a move into a pod ends
# the one of the NIC it moves).
rxe_up() {
  local k
  need_module rdma_rxe ib_uverbs || return 0
  for k in 0 1 2 3 4; do
    rdma link show 2>/dev/null | grep -q "netdev nic$k\$" || rdma link add "rxe_nic$k" type rxe netdev "nic$k" 2>/dev/null
  done
}
rxe_up

cat >/tmp/rails-pods.json <<EOJ
{"pods": [
{"namespace": "ml", "name": "one", "containers": [{"name": "t", "devices": [{"resource": "nvidia.com/gpu", "ids": ["$(uuid 1)"], "numa": [1]}]}]},
{"namespace": "ml", "name": "two", "containers": [{"name": "t", "devices": [{"resource": "nvidia.com/gpu", "ids": ["$(uuid 0)"], "numa": [0]}, {"resource": "nvidia.com/gpu", "ids": ["$(uuid 1)"], "numa": [1]}]}]},
{"namespace": "ml", "name": "down", "containers": [{"name": "t", "devices": [{"resource": "nvidia.com/gpu", "ids": ["$(uuid 0)"], "numa": [0]}]}]}
]}
EOJ
if ! kubelet_start /tmp/rails-pods.json 2>/tmp/kubelet-start.err; then
  fail kubelet-up "the fake kubelet did not start: $(tail -n 5 /tmp/kubelet-start.err)"
  skip_rest "no fake kubelet"
  exit 0
fi
ok kubelet-up
node_file_kubelet
for p in one two down; do
  ip netns add "$p"
  ip -n "$p" link set lo up
done

# rails_conf POOL COUNT: erdma-cni's entry of a Terway chain with a pool, as the runtime
# hands it over, the device-info path Multus gives a plugin of the capability with it.
DEVINFO=/run/k8s.cni.cncf.io/devinfo/cni
mkdir -p "$DEVINFO"
rails_conf() {
  jq -nc --argjson pool "$1" --argjson count "$2" --arg data "$DATA" --arg log "$LOG" --arg di "$DEVINFO/$3" '{
    cniVersion: "1.1.0", name: "terway-chainer", type: "erdma-cni", mode: "move", ifName: "erdma0",
    device: {pool: $pool, count: $count, required: true}, rdma: {netnsMode: "shared"}, addresses: "inherit",
    dataDir: $data, logFile: $log, logLevel: "debug",
    runtimeConfig: {CNIDeviceInfoFile: $di},
    prevResult: {cniVersion: "1.1.0", interfaces: [{name: "eth0", sandbox: "cid"}],
      ips: [{address: "172.16.0.5/24", gateway: "172.16.0.1", interface: 0}], routes: [{dst: "0.0.0.0/0"}], dns: {}}}'
}
pod() {
  CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=ml;K8S_POD_NAME=$2" cni "$1" "$2" "/run/netns/$2" eth0 "$3" 2>/tmp/cni.err
}
shown() { { echo "$1"; cat /tmp/cni.err; } | tail -n 5 | cut -c1-400 | sed 's/^/    | /'; }
pod_macs() { local i; for i in $(in_ns "$1" ls /sys/class/net | grep -E '^erdma' | sort); do in_ns "$1" cat "/sys/class/net/$i/address"; done | sort | xargs; }
# rails OUT: each of our result's interfaces as "pciID rdmaDevice", sorted.
rails() { jq -r '[.interfaces[1:][] | "\(.pciID) \(.rdmaDevice)"] | sort | join(" / ")' <<<"$1" 2>&1; }
ALL='{"names": ["nic0", "nic1", "nic2", "nic3", "nic4"]}'

# --- one: a GPU on node 1 --------------------------------------------------------------
: >"$LOG"
C1="$(rails_conf "$ALL" 1 one)"
out="$(pod ADD one "$C1")"
expect_match one-add '"name":"erdma0"' "$out" || shown "$out"
expect_eq one-rail "52:54:00:e0:00:02" "$(pod_macs one)"
check_output one-pix-log "nic2 \\(PIX to GPU ${GPU[1]}\\), nic3 \\(PHB to GPU ${GPU[1]}\\)" cat "$LOG"
expect_eq one-result "${PCI[nic2]} rxe_nic2" "$(rails "$out")"
expect_eq one-devinfo "{\"pci\":{\"pci-address\":\"${PCI[nic2]}\",\"rdma-device\":\"rxe_nic2\"},\"type\":\"pci\",\"version\":\"1.1.0\"}" \
  "$(cat "$DEVINFO/one" 2>&1)"
check one-del pod DEL one "$C1"
expect_eq one-devinfo-gone "" "$(ls "$DEVINFO/one" 2>/dev/null)"
rxe_up
carriers_up nic0 nic1 nic2 nic3

# --- two: GPUs on both nodes, a rail each ------------------------------------------------
C2="$(rails_conf "$ALL" 2 two)"
out="$(pod ADD two "$C2")"
expect_match two-add '"name":"erdma1"' "$out" || shown "$out"
expect_eq two-rails "52:54:00:e0:00:00 52:54:00:e0:00:02" "$(pod_macs two)"
expect_eq two-result "${PCI[nic0]} rxe_nic0 / ${PCI[nic2]} rxe_nic2" "$(rails "$out")"
# One file for the attachment: its first rail's.
expect_eq two-devinfo "$(jq -c '.interfaces[1] | {pci: {"pci-address": .pciID, "rdma-device": .rdmaDevice}, type: "pci", version: "1.1.0"}' <<<"$out")" \
  "$(jq -c . "$DEVINFO/two" 2>&1)"
# diag exits 1 where it finds a problem (the rxe devices the moves ended): its text counts.
diag="$(ERDMA_CNI_NODE_CONFIG="$NODE_FILE" erdma-cni diag --container two 2>&1)"
expect_match two-diag "erdma[01]: nic0 \\(PIX to GPU ${GPU[0]}\\)" "$diag" || echo "$diag" | tail -n 20 | sed 's/^/    | /'

check two-del pod DEL two "$C2"
expect_eq two-devinfo-gone "" "$(ls "$DEVINFO/two" 2>/dev/null)"
rxe_up
carriers_up nic0 nic1 nic2 nic3

# --- down: the nearer device has no carrier ---------------------------------------------
: >"$LOG"
C3="$(rails_conf '{"names": ["nic4", "nic1"]}' 1 down)"
out="$(pod ADD down "$C3")"
expect_match down-add '"name":"erdma0"' "$out" || shown "$out"
expect_eq down-rail "52:54:00:e0:00:01" "$(pod_macs down)"
check_output down-passed 'passed over: nic4 \(link down: no carrier\)' cat "$LOG"
check down-del pod DEL down "$C3"
# home: each NIC is back on the node under its name, with its address.
# shellcheck disable=SC2317 # run through check
home() {
  local k
  for k in 0 1 2 3 4; do
    ip -br addr show dev "nic$k" 2>&1 | grep -q "10.9.0.2$k/24" || { echo "nic$k: $(ip -br addr show dev "nic$k" 2>&1)"; return 1; }
  done
}
check home home
expect_eq no-state "" "$(find "$DATA" -type f 2>/dev/null)"

# --- leave the VM as we found it ----------------------------------------------------------
kubelet_stop
for p in one two down; do ip netns del "$p" 2>/dev/null; done
for k in 0 1 2 3 4; do
  rdma link delete "rxe_nic$k" 2>/dev/null
  ip addr flush dev "nic$k" 2>/dev/null
  ip link set "nic$k" down
done
rm -rf "$DATA" "$DEVINFO" "$ERDMA_CNI_TEST_PROCFS"
exit 0
