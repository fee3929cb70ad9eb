#!/usr/bin/env bash
# erdma-cni end to end, on this machine, without touching the host's own
# interfaces. It builds a private world of network namespaces:
#
#   node  stands in for the ECS host: its primary interface `eth0` with the
#         node's own default route (metric 100), a secondary ENI stand-in
#         `eth1` (one end of a veth) with 10.9.0.11/24 and the node agent's
#         metric-200 routes, plus the host end of the pod's primary (Terway)
#         interface
#   vpc   the VPC: a bridge holding the gateway 10.9.0.1 and 192.0.2.1, an
#         address off the ENI's subnet that only a default route reaches
#   pod   the pod, with Terway's eth0 (172.16.0.5/24, default via 172.16.0.1)
#
# then runs build/erdma-cni inside the node namespace exactly as a container
# runtime would (CNI_* environment, config on stdin), chained after a
# Terway-shaped prevResult with `addresses: inherit`, under a node file
# (docs/security.md) that allows the demo's dataDir and logFile: ADD, a look inside the
# pod, pings through the moved interface, CHECK, DEL, and the device home again.
#
# Usage: sudo integration/demo.sh          (ERDMA_CNI=/path/to/erdma-cni to override)
# Exits non-zero if any step fails, including a failed ping.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ERDMA_CNI="${ERDMA_CNI:-$REPO/build/erdma-cni}"
ERDMA_CNI="$(realpath -m "$ERDMA_CNI")"

if [[ $EUID -ne 0 ]]; then
  echo "demo: needs root (it creates network namespaces)" >&2
  exit 1
fi
if [[ ! -x $ERDMA_CNI ]]; then
  echo "demo: no plugin binary at $ERDMA_CNI" >&2
  echo "      build it first: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j2" >&2
  exit 1
fi
for tool in ip ping; do
  command -v "$tool" >/dev/null || { echo "demo: '$tool' not found (apt-get install iproute2 iputils-ping)" >&2; exit 1; }
done

TAG="ecni-demo-$$"
NODE="$TAG-node"
VPC="$TAG-vpc"
POD="$TAG-pod"
WORK="$(mktemp -d /tmp/ecni-demo-XXXXXX)"
CONTAINER_ID="demo$$"
POD_NETNS="/run/netns/$POD"
CNI_PATH_DIRS="$(dirname "$ERDMA_CNI"):/usr/lib/cni"

cleanup() {
  local rc=$?
  set +e
  for ns in "$POD" "$NODE" "$VPC"; do
    ip netns del "$ns" 2>/dev/null
  done
  rm -rf "$WORK"
  if [[ $rc -ne 0 ]]; then
    echo
    echo "=== DEMO FAILED (exit $rc); namespaces and $WORK removed ===" >&2
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ -t 1 ]]; then BOLD=$'\033[1m' PLAIN=$'\033[0m'; else BOLD='' PLAIN=''; fi
section() { printf '\n%s=== %s ===%s\n' "$BOLD" "$*" "$PLAIN"; }
# Echoes a command, then runs it.
show() { printf '$ %s\n' "$*"; "$@"; }
pretty() {
  if command -v jq >/dev/null; then jq .
  elif command -v python3 >/dev/null; then python3 -m json.tool
  else cat; echo
  fi
}
fail() { echo "demo: $*" >&2; exit 1; }

# Runs the plugin as a runtime does: inside the node netns, a clean
# environment holding only CNI_*, PATH and the node file's path (a real node
# keeps it at /etc/erdma-cni/node.json and needs no variable), the network
# config on stdin.
# `ip netns exec` also gives it a /sys that shows the node's devices.
cni() {
  local command=$1 config=$2
  ip netns exec "$NODE" env -i \
    PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    CNI_COMMAND="$command" \
    CNI_CONTAINERID="$CONTAINER_ID" \
    CNI_NETNS="$POD_NETNS" \
    CNI_IFNAME=eth0 \
    CNI_PATH="$CNI_PATH_DIRS" \
    CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=demo-trainer-0" \
    ERDMA_CNI_NODE_CONFIG="$WORK/node.json" \
    "$ERDMA_CNI" <<<"$config"
}

# The config a node conflist gives erdma-cni after Terway; $1 is the prevResult.
config_with_prev() {
  cat <<EOF
{
  "cniVersion": "1.0.0",
  "name": "erdma",
  "type": "erdma-cni",
  "mode": "move",
  "device": {"name": "eth1"},
  "addresses": "inherit",
  "dataDir": "$WORK/data",
  "logFile": "$WORK/erdma-cni.log",
  "logLevel": "debug",
  "prevResult": $1
}
EOF
}

# What Terway returns: eth0 with the container ID as sandbox and no MAC.
TERWAY_RESULT=$(cat <<EOF
{
  "cniVersion": "1.0.0",
  "interfaces": [{"name": "eth0", "sandbox": "$CONTAINER_ID"}],
  "ips": [{"address": "172.16.0.5/24", "gateway": "172.16.0.1", "interface": 0}],
  "routes": [{"dst": "0.0.0.0/0"}],
  "dns": {}
}
EOF
)

# eth1 as the node sees it: link (name, flags, MTU, MAC), addresses, routes.
node_eni_state() {
  ip -n "$NODE" -d link show dev eth1 | sed -E 's/^[0-9]+: //; s/@[^:]+:/:/; s/ link-netns [^ ]+//'
  ip -n "$NODE" addr show dev eth1 | grep -E '^ +inet'
  ip -n "$NODE" route show dev eth1
  ip -n "$NODE" -6 route show dev eth1
}

section "Building the private topology ($NODE, $VPC, $POD)"
for ns in "$NODE" "$VPC" "$POD"; do
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  # No IPv6 DAD: link-local addresses are final at once, so the before/after
  # comparison of eth1 below never catches a "tentative" flag mid-flight.
  ip netns exec "$ns" sh -c 'echo 0 >/proc/sys/net/ipv6/conf/all/accept_dad; echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad'
done
# The VPC: a bridge with the gateway, and an address beyond the ENI's subnet.
ip -n "$VPC" link add br0 type bridge
ip -n "$VPC" addr add 10.9.0.1/24 dev br0
ip -n "$VPC" addr add 192.0.2.1/32 dev br0
ip -n "$VPC" link set br0 up
# The node's primary interface, carrying the node's own default route: move
# mode refuses to take it (or lo) unless the node file allows it.
ip -n "$NODE" link add eth0 type veth peer name eni0 netns "$VPC"
ip -n "$NODE" addr add 172.31.0.2/24 dev eth0
ip -n "$NODE" link set eth0 up
ip -n "$VPC" link set eni0 up
ip -n "$NODE" route add default via 172.31.0.1 dev eth0 metric 100
# The secondary ENI stand-in, addressed and routed the way a node agent leaves it.
ip -n "$NODE" link add eth1 type veth peer name eni1 netns "$VPC"
ip -n "$VPC" link set eni1 master br0 up
ip -n "$NODE" addr add 10.9.0.11/24 dev eth1 noprefixroute
ip -n "$NODE" link set eth1 up
ip -n "$NODE" route add 10.9.0.0/24 dev eth1 proto static scope link src 10.9.0.11 metric 200
ip -n "$NODE" route add default via 10.9.0.1 dev eth1 metric 200
# Terway's work in the pod: eth0 with the pod IP and the default route.
ip -n "$NODE" link add vethpod0 type veth peer name eth0 netns "$POD"
ip -n "$NODE" addr add 172.16.0.1/24 dev vethpod0
ip -n "$NODE" link set vethpod0 up
ip -n "$POD" addr add 172.16.0.5/24 dev eth0
ip -n "$POD" link set eth0 up
ip -n "$POD" route add default via 172.16.0.1 dev eth0
echo "plugin:     $ERDMA_CNI"
echo "data dir:   $WORK/data"

section "The node file: what configs may name outside their attachment"
# Written by the node admin alone (root-owned, not group/other-writable): a
# config's dataDir and logFile must be listed here, whoever wrote the config
# (a NetworkAttachmentDefinition may be a namespace user's). Without a node
# file only /run/erdma-cni and /var/log/erdma-cni.log are allowed.
cat >"$WORK/node.json" <<EOF
{
  "dataDirs": ["$WORK/data"],
  "logFiles": ["$WORK/erdma-cni.log"]
}
EOF
chmod 0644 "$WORK/node.json"
cat "$WORK/node.json"

section "Node: the ENI eth1 before ADD"
NODE_BEFORE="$(node_eni_state)"
echo "$NODE_BEFORE"

section "ADD (chained after Terway: CNI_IFNAME=eth0, our link becomes erdma0)"
ADD_CONFIG="$(config_with_prev "$TERWAY_RESULT")"
echo "stdin:"
echo "$ADD_CONFIG" | pretty
if ! RESULT="$(cni ADD "$ADD_CONFIG")"; then
  echo "ADD failed:"
  echo "$RESULT" | pretty || echo "$RESULT"
  fail "ADD failed"
fi
echo "result:"
echo "$RESULT" | pretty

section "Pod: ip addr"
show ip -n "$POD" addr
section "Pod: ip rule"
show ip -n "$POD" rule
section "Pod: ip route show table main"
show ip -n "$POD" route show table main
TABLE="$(ip -n "$POD" rule show | awk '/from 10\.9\.0\.11 lookup/ {print $NF; exit}')"
[[ -n $TABLE ]] || fail "no policy rule for 10.9.0.11 in the pod"
section "Pod: ip route show table $TABLE (the policy table)"
show ip -n "$POD" route show table "$TABLE"
section "Node: eth1 is gone from the node"
if ip -n "$NODE" link show dev eth1 >/dev/null 2>&1; then
  fail "eth1 is still in the node after ADD"
fi
echo "eth1 not found in $NODE (it is erdma0 in the pod now)"

section "Traffic through the moved interface"
show ip -n "$POD" route get 192.0.2.1 from 10.9.0.11
show ip netns exec "$POD" ping -c 3 -W 2 -I 10.9.0.11 10.9.0.1
echo
echo "# 192.0.2.1 is beyond the ENI subnet: only the policy table's default route reaches it"
show ip netns exec "$POD" ping -c 3 -W 2 -I 10.9.0.11 192.0.2.1

section "CHECK (prevResult = the ADD result, as the runtime sends it)"
CHECK_OUT="$(cni CHECK "$(config_with_prev "$RESULT")")" || { echo "$CHECK_OUT"; fail "CHECK failed"; }
echo "CHECK ok${CHECK_OUT:+: $CHECK_OUT}"

section "DEL"
DEL_OUT="$(cni DEL "$(config_with_prev "$RESULT")")" || { echo "$DEL_OUT"; fail "DEL failed"; }
echo "DEL ok"
show ip -n "$POD" addr
show ip -n "$POD" rule

section "Node: eth1 home again with its name, address and routes"
NODE_AFTER="$(node_eni_state)"
echo "$NODE_AFTER"
if [[ "$NODE_BEFORE" != "$NODE_AFTER" ]]; then
  diff <(echo "$NODE_BEFORE") <(echo "$NODE_AFTER") || true
  fail "eth1 did not come back exactly as it was"
fi
echo "(identical to before ADD)"

section "DEL again (idempotent)"
DEL_OUT="$(cni DEL "$(config_with_prev "$RESULT")")" || { echo "$DEL_OUT"; fail "second DEL failed"; }
echo "DEL ok"
if [[ -n "$(find "$WORK/data" -path "*/erdma/*" -type f 2>/dev/null)" ]]; then
  fail "state files left under $WORK/data/erdma"
fi

section "What the node decides, not the config"
# A dataDir the node file does not list, and the node's own default-route
# device: both refused with code 7 before anything changes.
refused() {
  local what=$1 config=$2 out
  if out="$(cni ADD "$config")"; then fail "ADD with $what succeeded"; fi
  echo "$what:"
  echo "$out" | pretty
  grep -q '"code":7,' <<<"$out" || fail "ADD with $what: expected code 7"
}
refused "dataDir /etc/erdma-cni" "$(config_with_prev "$TERWAY_RESULT" | sed 's|"dataDir": "[^"]*"|"dataDir": "/etc/erdma-cni"|')"
refused "device eth0 (the node's default route)" "$(config_with_prev "$TERWAY_RESULT" | sed 's|"name": "eth1"|"name": "eth0"|')"
ip -n "$NODE" link show dev eth0 >/dev/null || fail "eth0 left the node"
[[ ! -e /etc/erdma-cni/erdma && -z "$(find "$WORK/data" -type f 2>/dev/null)" ]] || fail "a refused ADD left files behind"

section "Plugin log ($WORK/erdma-cni.log, last lines)"
tail -n 15 "$WORK/erdma-cni.log" 2>/dev/null || echo "(no log written)"

section "Demo passed; cleaning up"
