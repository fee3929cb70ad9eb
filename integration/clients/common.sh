# common.sh: shared by the client suites under integration/clients/ (sourced, not run).
# Sets CLIENTS_HERE, CLIENTS_REPO, BUILD_DIR (exported) and ERDMA_CNI (exported).
# shellcheck shell=bash

CLIENTS_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CLIENTS_REPO="$(cd "$CLIENTS_HERE/../.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$CLIENTS_REPO/build}"
ERDMA_CNI="${ERDMA_CNI:-$BUILD_DIR/erdma-cni}"
export BUILD_DIR ERDMA_CNI

# clients_skip WHAT: the suite cannot run here; ctest reports exit 77 as skipped.
clients_skip() {
  echo "SKIPPED: $*"
  exit 77
}

# clients_missing_packages FILE: the packages FILE lists (one a line, # comments) that are
# not installed, one a line.
clients_missing_packages() {
  local p
  sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$1" | while read -r p; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

# clients_ensure_packages FILE: installs what FILE lists and is missing, from the system's own
# sources (as root, unless CLIENTS_NO_INSTALL is set). Returns 1 if something is still missing.
clients_ensure_packages() {
  local -a missing
  mapfile -t missing < <(clients_missing_packages "$1")
  ((${#missing[@]} == 0)) && return 0
  if ((EUID != 0)) || [[ -n ${CLIENTS_NO_INSTALL:-} ]]; then
    echo "clients: missing packages: ${missing[*]} (apt-get install ${missing[*]})" >&2
    return 1
  fi
  echo "clients: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  if apt-get update -qq >&2; then
    apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 "${missing[@]}" >&2 || true
  fi
  mapfile -t missing < <(clients_missing_packages "$1")
  ((${#missing[@]} == 0)) && return 0
  echo "clients: still missing: ${missing[*]}" >&2
  return 1
}

# clients_sweep_stale TAG: deletes the network namespaces TAG-<pid>-* whose <pid> is gone
# (a run killed before its trap ran).
clients_sweep_stale() {
  local f name pid
  for f in /run/netns/"$1"-*; do
    [[ -e $f ]] || continue
    name="${f##*/}"
    pid="${name#"$1"-}"
    pid="${pid%%-*}"
    [[ $pid =~ ^[0-9]+$ ]] || continue
    if ! kill -0 "$pid" 2>/dev/null && [[ ! -d /proc/$pid ]]; then
      ip netns del "$name" 2>/dev/null || true
    fi
  done
}

# clients_netns_add NAME...: new network namespaces with lo up and IPv6 DAD off (all and
# default, so devices moved in later inherit it: snapshots never see `tentative`).
clients_netns_add() {
  local ns
  for ns in "$@"; do
    ip netns add "$ns"
    ip netns exec "$ns" sh -c 'echo 0 >/proc/sys/net/ipv6/conf/all/accept_dad;
      echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad'
    ip -n "$ns" link set lo up
  done
}

# clients_topology NODE VPC: the world the kernel tests build (test/kernel/topology.cpp),
# in two existing namespaces. VPC holds br0 with the gateway 10.9.0.1/24; NODE holds eth1,
# the secondary-ENI stand-in (a veth whose peer eni1 is on br0), 10.9.0.11/24 without a
# prefix route, and the node agent's routes through it at metric 200.
clients_topology() {
  local node="$1" vpc="$2"
  ip -n "$vpc" link add br0 type bridge
  ip -n "$vpc" addr add 10.9.0.1/24 dev br0
  ip -n "$vpc" link set br0 up
  ip -n "$node" link add eth1 type veth peer name eni1 netns "$vpc"
  ip -n "$vpc" link set eni1 master br0 up
  ip -n "$node" addr add 10.9.0.11/24 dev eth1 noprefixroute
  ip -n "$node" link set eth1 up
  ip -n "$node" route add 10.9.0.0/24 dev eth1 proto static scope link src 10.9.0.11 metric 200
  ip -n "$node" route add default via 10.9.0.1 dev eth1 metric 200
}

# clients_snapshot NETNS: the namespace's links, addresses, routes of every table and rules,
# one sorted line each, without what is allocation detail or ticks (indexes, peer netns ids,
# counters, address lifetimes, bridge timers): the same canonical form as the kernel tests.
clients_snapshot() {
  local ns="$1" links addrs r4 r6 u4 u6
  links="$(ip -n "$ns" -d -j link show)" addrs="$(ip -n "$ns" -j addr show)"
  r4="$(ip -n "$ns" -4 -j route show table all)" r6="$(ip -n "$ns" -6 -j route show table all)"
  u4="$(ip -n "$ns" -4 -j rule show)" u6="$(ip -n "$ns" -6 -j rule show)"
  # One jq for all six (ip prints nothing rather than [] for an empty list).
  jq -rn --argjson links "${links:-[]}" --argjson addrs "${addrs:-[]}" \
    --argjson r4 "${r4:-[]}" --argjson r6 "${r6:-[]}" --argjson u4 "${u4:-[]}" --argjson u6 "${u6:-[]}" '
    def line($kind): $kind + " " + (. | tojson);
    ($links[] | del(.ifindex, .link, .link_index, .link_netnsid, .stats, .stats64)
      | if has("linkinfo") then .linkinfo |= with_entries(select(.key == "info_kind" or .key == "info_slave_kind")) else . end
      | line("link")),
    ($addrs[] | .ifname as $dev | (.addr_info // [])[]
      | del(.valid_life_time, .preferred_life_time, .tentative, .optimistic) | .dev = $dev | line("addr")),
    ($r4[] | del(.expires, .cache, .uid) | line("route4")),
    ($r6[] | del(.expires, .cache, .uid) | line("route6")),
    ($u4[] | line("rule4")),
    ($u6[] | line("rule6"))' | LC_ALL=C sort
}

# clients_settle NETNS: waits (up to 3 s) until every up link has its carrier, so that a
# reference snapshot is not taken mid-way.
clients_settle() {
  local i
  for ((i = 0; i < 60; i++)); do
    ip -n "$1" -j link show | jq -e 'all(.[]; (.flags | index("UP")) == null
      or ((.flags | index("NO-CARRIER")) == null and (.operstate == "UP" or .operstate == "UNKNOWN")))' \
      >/dev/null && return 0
    sleep 0.05
  done
}

# clients_settled_diff EXPECTED NETNS: the difference between the snapshot EXPECTED and
# NETNS now (`-` expected only, `+` now only), polled for up to 3 s while carriers come
# back. Empty when they are the same.
clients_settled_diff() {
  local expected="$1" ns="$2" i out
  for ((i = 0; i < 30; i++)); do
    out="$(diff <(printf '%s\n' "$expected") <(clients_snapshot "$ns") | sed -n 's/^< /- /p; s/^> /+ /p')"
    [[ -z $out ]] && return 0
    sleep 0.1
  done
  printf '%s\n' "$out"
}
