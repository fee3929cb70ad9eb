# vm-kernels: 7.3
# vm-numa: 2
# vm-needs: python
# kubelet: which device a pod gets from the kubelet's pod-resources API, with real
# kernel sysfs on a machine with two NUMA nodes. run.sh gives this VM two NUMA nodes
# with a PCIe expander bridge each and two NICs on each node (nic4, whose link is down,
# stays out of these pools); the fake kubelet (test/fake_kubelet/fake_kubelet.py) runs
# in the guest. With VM_NUMA_NIC=virtio-net-pci a NIC's device/numa_node does not exist
# (its device is the virtio device): the PCI function above it has it. The pods' GPU IDs
# map to no driver file here, so pools rank by the kubelet's NUMA nodes (rails.sh has
# the GPUs by UUID). Soft-RoCE devices are named like eRDMA's:
#   nic0 (node 0) erdma_0    nic1 (node 0) erdma_2
#   nic2 (node 1) erdma_1    nic3 (node 1) erdma_3
# A: device.resource, chained after a Terway-shaped prevResult, move mode, shared
#    RDMA: the pod given erdma_1/17 gets nic2, the pod given erdma_0/3 gets nic0.
# B: device.pool with count, by the NUMA nodes of the pod's GPUs. Without RDMA: an rxe
#    device dies when its netdev changes netns (7.3), so A's moves took erdma_0 and
#    erdma_1 with them; which NIC a pool gives is what B checks.
# shellcheck shell=bash  # run by /init with bash
# shellcheck source=SCRIPTDIR/../guest/lib.sh
source /vm/lib.sh
# shellcheck source=SCRIPTDIR/../guest/plugin.sh
source /vm/plugin.sh

VM_PLAN=(numa-nodes nics-numa rxe-add kubelet-up kubelet-get
  a-add-one a-one-ifname a-one-mac a-one-rdma a-one-addr a-add-two a-two-ifname a-two-mac a-two-rdma
  a-del-one a-del-two a-home a-carrier a-no-state
  b-add-gpu1 b-gpu1-ifnames b-gpu1-macs b-gpu1-result b-add-spill b-spill-node0 b-spill-log
  b-del-spill b-del-gpu1 b-gpu1-home b-carrier b-add-gpu0 b-gpu0-macs b-del-gpu0 b-carrier-again b-add-vendor b-vendor-macs
  b-del-vendor b-home b-no-state)

if [[ ! -d /sys/devices/system/node/node1 ]]; then
  skip_rest "the guest has one NUMA node (run this scenario through run.sh or test.sh, which read its vm-numa header)"
  exit 0
fi
ok numa-nodes
if ! numa_nics 0 1 2 3 4; then
  skip_rest "the four PCI NICs of a vm-numa VM (MACs 52:54:00:e0:00:0K) are not there: $(cd /sys/class/net && echo *)"
  exit 0
fi
expect_eq nics-numa "0 0 1 1" "$(nic_numa nic0) $(nic_numa nic1) $(nic_numa nic2) $(nic_numa nic3)"
if ! need_module rdma_rxe ib_uverbs; then
  skip_rest "rdma_rxe is not built for $(uname -r)"
  exit 0
fi
if ! command -v python3 >/dev/null || [[ ! -f /vm/fake_kubelet/fake_kubelet.py ]]; then
  skip_rest "no python3 or fake kubelet in the image (the vm-needs: python header)"
  exit 0
fi

# The node: four ENI stand-ins with an address each, and eRDMA-named Soft-RoCE devices.
rm -rf "$DATA"
rdma system set netns shared
sysctl -qw net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.accept_dad=0
declare -A RXE_OF=([nic0]=erdma_0 [nic2]=erdma_1 [nic1]=erdma_2 [nic3]=erdma_3)
declare -A MAC_OF=()
for k in 0 1 2 3; do
  ip addr add "10.9.0.2$k/24" dev "nic$k" noprefixroute
  ip link set "nic$k" up
  ip route add 10.9.0.0/24 dev "nic$k" metric "$((200 + k))" src "10.9.0.2$k"
  MAC_OF[nic$k]="52:54:00:e0:00:0$k"
done
ip link set nic4 up # no carrier (run.sh): the pools pass it over
rxe_ok=1
for nic in nic0 nic2 nic1 nic3; do
  rdma link add "${RXE_OF[$nic]}" type rxe netdev "$nic" >/tmp/rxe.out 2>&1 || rxe_ok=""
done
if [[ -z $rxe_ok ]]; then
  fail rxe-add "rdma link add on the NICs: $(cat /tmp/rxe.out)"
  skip_rest "no Soft-RoCE devices on the NICs"
  exit 0
fi
check_output rxe-add 'erdma_1/1 .*netdev nic2' rdma link show

# The pods and what the device plugins gave them.
cat >/tmp/pods.json <<'EOF'
{"pods": [
{"namespace": "default", "name": "one", "containers": [{"name": "main", "devices": [{"resource": "aliyun/erdma", "ids": ["erdma_1/17"], "numa": [1]}]}]},
{"namespace": "default", "name": "two", "containers": [{"name": "main", "devices": [{"resource": "aliyun/erdma", "ids": ["erdma_0/3"], "numa": [0]}]}]},
{"namespace": "ml", "name": "gpu1", "containers": [{"name": "trainer", "devices": [{"resource": "nvidia.com/gpu", "ids": ["GPU-1a", "GPU-1b"], "numa": [1]}]}]},
{"namespace": "ml", "name": "gpu0", "containers": [{"name": "trainer", "devices": [{"resource": "nvidia.com/gpu", "ids": ["GPU-0a"], "numa": [0]}]}]},
{"namespace": "ml", "name": "spill", "containers": [{"name": "trainer", "devices": [{"resource": "nvidia.com/gpu", "ids": ["GPU-1c"], "numa": [1]}]}]}
]}
EOF
if ! kubelet_start /tmp/pods.json 2>/tmp/kubelet-start.err; then
  fail kubelet-up "the fake kubelet did not start: $(tail -n 5 /tmp/kubelet-start.err)"
  skip_rest "no fake kubelet"
  for nic in nic0 nic1 nic2 nic3; do rdma link delete "${RXE_OF[$nic]}" 2>/dev/null; done
  exit 0
fi
ok kubelet-up
check_output kubelet-get '^aliyun/erdma erdma_1/17 numa 1$' kubelet_ask default one
node_file_kubelet

for p in one two gpu1 gpu0 spill; do
  ip netns add "$p"
  ip -n "$p" link set lo up
done

# terway_conf DEVICE_JSON: erdma-cni's entry of a Terway chain, as the runtime hands it
# over: Terway's result as prevResult, CNI_IFNAME eth0 (Terway's), our ifName erdma0.
terway_conf() {
  jq -nc --argjson device "$1" --arg data "$DATA" --arg log "$LOG" '{
    cniVersion: "1.1.0", name: "terway-chainer", type: "erdma-cni", mode: "move",
    ifName: "erdma0", device: $device, rdma: {netnsMode: "shared"}, addresses: "inherit",
    dataDir: $data, logFile: $log, logLevel: "debug",
    prevResult: {cniVersion: "1.1.0",
      interfaces: [{name: "eth0", sandbox: "cid"}],
      ips: [{address: "172.16.0.5/24", gateway: "172.16.0.1", interface: 0}],
      routes: [{dst: "0.0.0.0/0"}], dns: {}}}'
}
# pod CMD NS NAME CONFIG: the plugin for pod NS/NAME, whose netns and container ID are NAME.
# Its stderr (the log lines of errors) goes to /tmp/cni.err.
pod() {
  CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=$2;K8S_POD_NAME=$3" cni "$1" "$3" "/run/netns/$3" eth0 "$4" 2>/tmp/cni.err
}
# shown OUT: after a failed ADD check, what the plugin said.
shown() { { echo "$1"; cat /tmp/cni.err; } | tail -n 5 | cut -c1-400 | sed 's/^/    | /'; }
mac_in() { in_ns "$1" cat "/sys/class/net/$2/address" 2>/dev/null; }
# result_ifaces JSON: the names and the MACs of a result's interfaces after Terway's,
# each sorted: "erdma0 erdma1 / MAC MAC".
result_ifaces() {
  jq -r 'if .interfaces then [.interfaces[1:][]] | "\([.[].name] | sort | join(" ")) / \([.[].mac] | sort | join(" "))"
         else tostring end' <<<"$1" 2>&1
}
# home NIC...: each NIC is back on the node under its name, up, with its address.
# shellcheck disable=SC2317 # run through check
home() {
  local nic
  for nic in "$@"; do
    ip -br addr show dev "$nic" 2>&1 | grep -q "10.9.0.2${nic#nic}/24" || { echo "$nic: $(ip -br addr show dev "$nic" 2>&1)"; return 1; }
  done
}

# --- A: device.resource (the plugin of today) -----------------------------------------
# A check that follows a failed ADD runs all the same and fails with what it saw.
A_CONF="$(terway_conf '{"resource": "aliyun/erdma"}')"
out1="$(pod ADD default one "$A_CONF")"
expect_match a-add-one '"name":"erdma0"' "$out1" || shown "$out1"
expect_eq a-one-ifname "erdma0" "$(in_ns one ls /sys/class/net | grep -x erdma0)"
expect_eq a-one-mac "${MAC_OF[nic2]}" "$(mac_in one erdma0)"
expect_match a-one-rdma '"rdmaDevice":"erdma_1"' "$out1"
check_output a-one-addr 'inet 10.9.0.22/24' in_ns one ip addr show erdma0
out2="$(pod ADD default two "$A_CONF")"
expect_match a-add-two '"name":"erdma0"' "$out2" || shown "$out2"
expect_eq a-two-ifname "erdma0" "$(in_ns two ls /sys/class/net | grep -x erdma0)"
expect_eq a-two-mac "${MAC_OF[nic0]}" "$(mac_in two erdma0)"
expect_match a-two-rdma '"rdmaDevice":"erdma_0"' "$out2"
check a-del-one pod DEL default one "$A_CONF"
check a-del-two pod DEL default two "$A_CONF"
check a-home home nic0 nic1 nic2 nic3
# A pool passes over a device without carrier: the NICs DEL brought home first get theirs.
check a-carrier carriers_up nic0 nic1 nic2 nic3
expect_eq a-no-state "" "$(find "$DATA" -type f 2>/dev/null)"

# --- B: device.pool, by the GPUs' NUMA node ---------------------------------------------
# device.pool chosen by names or pciVendor, count; pod-side names erdma0, erdma1.
# required: chained, a pool otherwise attaches only to a pod that opted in by annotation.
pool_conf() { terway_conf "{\"pool\": $1, \"count\": $2, \"required\": true}" | jq -c 'del(.rdma)'; }
NAMES='{"names": ["nic0", "nic1", "nic2", "nic3"]}'
B_CONF="$(pool_conf "$NAMES" 2)"
B1_CONF="$(pool_conf "$NAMES" 1)"
VENDOR="$(cat "$(nic_pci nic0)/vendor")" # 0x8086 (e1000e), or 0x1af4 with VM_NUMA_NIC=virtio-net-pci
BV_CONF="$(pool_conf "{\"pciVendor\": \"$VENDOR\"}" 2)"
# pod_macs NS: the MACs of the pod's erdma* interfaces, sorted; pod_ifs NS: their names.
pod_macs() { local i; for i in $(pod_ifs "$1"); do mac_in "$1" "$i"; done | sort | xargs; }
pod_ifs() { in_ns "$1" ls /sys/class/net 2>/dev/null | grep -E '^erdma' | sort | xargs; }
# GPUs on node 1: both node-1 NICs, as erdma0 and erdma1, both in the result.
out="$(pod ADD ml gpu1 "$B_CONF")"
expect_match b-add-gpu1 '"name":"erdma1"' "$out" || shown "$out"
expect_eq b-gpu1-ifnames "erdma0 erdma1" "$(pod_ifs gpu1)"
expect_eq b-gpu1-macs "${MAC_OF[nic2]} ${MAC_OF[nic3]}" "$(pod_macs gpu1)"
expect_eq b-gpu1-result "erdma0 erdma1 / ${MAC_OF[nic2]} ${MAC_OF[nic3]}" "$(result_ifaces "$out")"
# count 1, GPUs on node 1, both node-1 NICs held by gpu1: a node-0 NIC, and the log says why.
: >"$LOG"
out="$(pod ADD ml spill "$B1_CONF")"
expect_match b-add-spill '"name":"erdma0"' "$out" || shown "$out"
expect_match b-spill-node0 "^(${MAC_OF[nic0]}|${MAC_OF[nic1]})$" "$(pod_macs spill)"
check_output b-spill-log '(NUMA|numa).*(held|busy|claimed|taken|in use|free)|(held|busy|claimed|taken|in use|free).*(NUMA|numa)' cat "$LOG"
check b-del-spill pod DEL ml spill "$B1_CONF"
# One DEL puts both of gpu1's NICs back.
check b-del-gpu1 pod DEL ml gpu1 "$B_CONF"
check b-gpu1-home home nic0 nic1 nic2 nic3
check b-carrier carriers_up nic0 nic1 nic2 nic3
# GPUs on node 0: the node-0 NICs; the same with the pool chosen by the NICs' PCI vendor.
out="$(pod ADD ml gpu0 "$B_CONF")"
expect_match b-add-gpu0 '"name":"erdma1"' "$out" || shown "$out"
expect_eq b-gpu0-macs "${MAC_OF[nic0]} ${MAC_OF[nic1]}" "$(pod_macs gpu0)"
check b-del-gpu0 pod DEL ml gpu0 "$B_CONF"
check b-carrier-again carriers_up nic0 nic1
out="$(pod ADD ml gpu0 "$BV_CONF")"
expect_match b-add-vendor '"name":"erdma1"' "$out" || shown "$out"
expect_eq b-vendor-macs "${MAC_OF[nic0]} ${MAC_OF[nic1]}" "$(pod_macs gpu0)"
check b-del-vendor pod DEL ml gpu0 "$BV_CONF"
check b-home home nic0 nic1 nic2 nic3
expect_eq b-no-state "" "$(find "$DATA" -type f 2>/dev/null)"

# --- leave the VM as we found it -------------------------------------------------------
kubelet_stop
for p in one two gpu1 gpu0 spill; do ip netns del "$p" 2>/dev/null; done
ip link set nic4 down
for nic in nic0 nic1 nic2 nic3; do
  rdma link delete "${RXE_OF[$nic]}" 2>/dev/null
  ip addr flush dev "$nic" 2>/dev/null
done
rm -rf "$DATA"
exit 0
