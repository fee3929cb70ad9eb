# plugin.sh: a private node topology for erdma-cni scenarios (sourced, not a scenario).
# The VM's root netns is the node; "vpc" holds the gateway 10.9.0.1 on a bridge; each
# ENI stand-in ethN is a veth whose peer sits on that bridge, with 10.9.0.1N/24 and a
# node-agent-style metric-200 subnet route.
# shellcheck shell=bash
DATA=/var/lib/cni/erdma-cni
LOG=/tmp/erdma-cni.log
# The node file (docs/security.md) that allows DATA and LOG; cni() names it.
NODE_FILE=/tmp/erdma-cni-node.json
printf '{"dataDirs": ["%s"], "logFiles": ["%s"]}\n' "$DATA" "$LOG" >"$NODE_FILE"
chmod 0644 "$NODE_FILE"

topo_up() { # topo_up N: vpc + eth1..ethN
  # No IPv6 DAD: addresses must not change flags between two snapshots.
  sysctl -qw net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.accept_dad=0
  ip netns add vpc
  ip -n vpc link add br0 type bridge
  ip -n vpc addr add 10.9.0.1/24 dev br0
  ip -n vpc link set br0 up
  ip -n vpc link set lo up
  local i
  for ((i = 1; i <= $1; i++)); do
    ip link add "eth$i" type veth peer name "p$i" netns vpc
    ip -n vpc link set "p$i" master br0 up
    ip addr add "10.9.0.1$i/24" dev "eth$i" noprefixroute
    ip link set "eth$i" up
    ip route add 10.9.0.0/24 dev "eth$i" metric "$((200 + i))" src "10.9.0.1$i"
  done
}

topo_down() {
  local n
  for n in $(ip netns list | awk '{print $1}'); do ip netns del "$n"; done
  for n in eth1 eth2 eth3; do ip link del "$n" 2>/dev/null; done
  rm -rf "$DATA"
}

# cni CMD CID NETNS IFNAME CONFIG: runs the plugin as a runtime would; prints its stdout.
# CNI_ARGS, when set in the caller's environment, is passed on (K8S_POD_NAME=...), and
# so is ERDMA_CNI_TEST_PROCFS (a procfs tree of the test's, read by test builds only).
cni() {
  printf '%s' "$5" | env -i PATH="$PATH" CNI_COMMAND="$1" CNI_CONTAINERID="$2" CNI_NETNS="$3" \
    CNI_IFNAME="$4" CNI_PATH=/usr/lib/cni ERDMA_CNI_NODE_CONFIG="$NODE_FILE" \
    ${CNI_ARGS:+CNI_ARGS="$CNI_ARGS"} ${ERDMA_CNI_TEST_PROCFS:+ERDMA_CNI_TEST_PROCFS="$ERDMA_CNI_TEST_PROCFS"} erdma-cni
}

# conf RDMA_JSON [DEVICE]: a standalone (Multus-style) config.
conf() {
  echo "{\"cniVersion\":\"1.1.0\",\"name\":\"erdma\",\"type\":\"erdma-cni\",\"device\":{\"name\":\"${2:-eth1}\"},\"rdma\":$1,\"dataDir\":\"$DATA\",\"logFile\":\"$LOG\",\"logLevel\":\"debug\"}"
}

# conf_smcr RDMA_JSON DEVICE SMCR_JSON [ANNOTATION]: conf with an `smcr` section and the
# pod annotation network.alibabacloud.com/erdma-smcr=ANNOTATION (default "true") in
# runtimeConfig["io.kubernetes.cri.pod-annotations"], as containerd passes it.
conf_smcr() {
  local ann="${4-true}"
  conf "$1" "$2" | jq -c --argjson smcr "$3" --arg ann "$ann" \
    '. + {smcr: $smcr, runtimeConfig: {"io.kubernetes.cri.pod-annotations": {"network.alibabacloud.com/erdma-smcr": $ann}}}'
}

# --- the two-NUMA-node machine (`# vm-numa: 2`, run.sh) ------------------------------
# numa_nics [K...]: renames the PCI NICs run.sh gives such a VM to nicK by their MACs
# (52:54:00:e0:00:0K -> nicK; the kernel's own eth names follow the order it scans the
# expander bridges in), by default nic0..nic3: nic0 and nic1 sit on NUMA node 0, nic2
# and nic3 on node 1 (nic4, on node 0, has its link down). Returns 1 (no verdict) if
# one is missing.
numa_nics() {
  local k d name ks=("$@")
  ((${#ks[@]})) || ks=(0 1 2 3)
  for k in "${ks[@]}"; do
    name=""
    for d in /sys/class/net/*; do
      [[ "$(cat "$d/address" 2>/dev/null)" == "52:54:00:e0:00:0$k" ]] && name="${d##*/}"
    done
    [[ -n $name ]] || return 1
    if [[ $name != "nic$k" ]]; then
      ip link set "$name" down
      ip link set "$name" name "nic$k" || return 1
    fi
  done
}

# carriers_up IF...: waits, up to 15 s, until each IF has carrier (an e1000e link comes
# up a moment after the device does, as a real NIC's would: a pool passes over a device
# without carrier).
carriers_up() {
  local i
  for i in "$@"; do
    wait_for 15 sh -c "[ \"\$(cat /sys/class/net/$i/carrier 2>/dev/null)\" = 1 ]" || return 1
  done
}

# nic_pci IF: the sysfs directory of IF's PCI function: IF's device (e1000e), or for a
# virtio-net NIC, whose device is a virtio device without numa_node, its parent.
nic_pci() {
  local dev
  dev="$(readlink -f "/sys/class/net/$1/device")" || return 1
  [[ -f $dev/numa_node ]] || dev="${dev%/*}"
  echo "$dev"
}

# nic_numa IF: the NUMA node of IF's PCI function.
nic_numa() {
  local dev
  dev="$(nic_pci "$1")" && cat "$dev/numa_node"
}

# --- the fake kubelet (`# vm-needs: python`) -----------------------------------------
# test/fake_kubelet/fake_kubelet.py with the stubs made when the image was built.
KUBELET_SOCKET=/run/kubelet/pod-resources/kubelet.sock
KUBELET_CALLS=/tmp/fake-kubelet.calls
KUBELET_LOG=/tmp/fake-kubelet.log
KUBELET_PID=""

# kubelet_start PODS_JSON [MODE]: serves PODS_JSON on $KUBELET_SOCKET (mode "get" by
# default) and waits, up to 30 s, until the server says it serves and the socket is
# there; returns 1 (its log on stderr) if it did not.
kubelet_start() {
  kubelet_stop
  mkdir -p "${KUBELET_SOCKET%/*}"
  rm -f "$KUBELET_SOCKET"
  : >"$KUBELET_CALLS"
  python3 /vm/fake_kubelet/fake_kubelet.py --socket "$KUBELET_SOCKET" --pods "$1" \
    --mode "${2:-get}" --calls "$KUBELET_CALLS" --stubs /vm/fake_kubelet/stubs >"$KUBELET_LOG" 2>&1 &
  KUBELET_PID=$!
  # python3 and grpc take seconds to start under TCG, and took over 30 s with the host's
  # two cores shared by three VMs and a compiler: the bound is only what a failure costs.
  if ! wait_for 120 sh -c "grep -q '^fake kubelet: serving' '$KUBELET_LOG' && [ -S '$KUBELET_SOCKET' ]"; then
    sed 's/^/fake kubelet: /' "$KUBELET_LOG" >&2
    kubelet_stop
    return 1
  fi
}

# kubelet_ask NAMESPACE NAME: the pod's devices as the fake kubelet answers Get,
# one line per device: RESOURCE IDS... numa NODES... (a client of its own, in python).
kubelet_ask() {
  python3 - "$KUBELET_SOCKET" "$1" "$2" <<'PY'
import sys
sys.path.insert(0, "/vm/fake_kubelet/stubs")
import grpc
import podresources_pb2 as pb
import podresources_pb2_grpc as pbg
stub = pbg.PodResourcesListerStub(grpc.insecure_channel("unix:" + sys.argv[1]))
pod = stub.Get(pb.GetPodResourcesRequest(pod_namespace=sys.argv[2], pod_name=sys.argv[3]), timeout=10)
for c in pod.pod_resources.containers:
    for d in c.devices:
        print(d.resource_name, *d.device_ids, "numa", *[n.ID for n in d.topology.nodes])
PY
}

kubelet_stop() {
  [[ -n $KUBELET_PID ]] || return 0
  kill "$KUBELET_PID" 2>/dev/null
  wait "$KUBELET_PID" 2>/dev/null
  KUBELET_PID=""
}

# node_file_kubelet: the node file names $KUBELET_SOCKET as the kubelet's pod-resources
# socket (docs/security.md: a network config cannot name one).
node_file_kubelet() {
  printf '{"dataDirs": ["%s"], "logFiles": ["%s"], "podResourcesSocket": "%s"}\n' \
    "$DATA" "$LOG" "$KUBELET_SOCKET" >"$NODE_FILE"
}
