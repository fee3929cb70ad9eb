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
cni() {
  printf '%s' "$5" | env -i PATH="$PATH" CNI_COMMAND="$1" CNI_CONTAINERID="$2" CNI_NETNS="$3" \
    CNI_IFNAME="$4" CNI_PATH=/usr/lib/cni ERDMA_CNI_NODE_CONFIG="$NODE_FILE" erdma-cni
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
