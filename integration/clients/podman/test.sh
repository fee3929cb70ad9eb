#!/usr/bin/env bash
# test.sh [SCENARIO...]: erdma-cni driven by podman 4.3 (Debian 12), CNI backend, as root.
#
# podman runs inside a private "node" network namespace (ip netns exec), so every container
# netns it makes and every device erdma-cni moves stays out of the host's own network: the node
# holds eth1, the secondary-ENI stand-in (a veth to a "vpc" namespace with the gateway), as the
# kernel tests and the other client suites build it. podman's configuration is private too
# (CONTAINERS_CONF, CONTAINERS_STORAGE_CONF: vfs storage, its own graph and run roots, network
# config dir and CNI plugin dirs under a scratch directory); the image is busybox-static,
# imported from a tarball.
#
# Scenarios (default: all):
#   lifecycle  run on an erdma-cni network (move mode, eth1's address inherited): the device in
#              the container's netns under CNI_IFNAME, its address, the policy rule and table,
#              a ping to the gateway from inside; stop (DEL: eth1 home), start (ADD again),
#              rm -f; the node exactly as before and no state left in erdma-cni's dataDir.
#   kill       kill -9 of the container's PID 1: conmon's `podman container cleanup` runs DEL;
#              eth1 comes home and a new container on the same network gets it.
#   two        two networks, a primary `a-primary` (Debian's ptp + host-local) and erdma-cni as
#              `b-erdma`, each with its interface name pinned (`--network
#              NAME:interface_name=IF`; without it podman hands out eth0, eth1, ... in an order
#              that is not guaranteed — once in a few runs erdma-cni got eth0): eth0 from ptp
#              with the default route, the ENI as net1; rm -f brings it home.
#   mac        --mac-address and --ip on a macvlan network; --mac-address refused on a move one.
#   lostdel    a DEL that fails (a fault point; needs a build with fault hooks): podman
#              removes the container and its netns anyway and never sends that DEL again. A new
#              container on the same network gets eth1 through the stale-claim recovery, which
#              finishes the old DEL and logs a line naming the old container; after its rm the
#              node is exactly as before and the dataDir empty.
#
# Prints a line per scenario (PASS, FAIL, or SKIP naming what is missing) and `N passed, N failed,
# N skipped` last; exit 0 when none failed, 1 when one
# failed, 77 (skipped) without root or the Debian packages of packages.txt.
# Environment: ERDMA_CNI (default $BUILD_DIR/erdma-cni), BUILD_DIR, PODMAN_KEEP=1 keeps the
# scratch directory.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=SCRIPTDIR/../common.sh
source "$here/../common.sh"

all_scenarios=(lifecycle kill two mac lostdel)
if (($#)); then scenarios=("$@"); else scenarios=("${all_scenarios[@]}"); fi
for s in "${scenarios[@]}"; do
  [[ " ${all_scenarios[*]} " == *" $s "* ]] || { echo "usage: $0 [${all_scenarios[*]}]..." >&2; exit 2; }
done

((EUID == 0)) || clients_skip "the podman suite needs root (network namespaces, rootful podman)"
clients_ensure_packages "$here/packages.txt" ||
  clients_skip "the podman suite needs Debian packages: $(clients_missing_packages "$here/packages.txt" | tr '\n' ' ')"
[[ -x $ERDMA_CNI ]] || { echo "FAIL: no erdma-cni binary at $ERDMA_CNI (build it first)"; exit 1; }

tag=ecnp # namespaces: ecnp-<pid>-<case>-{node,vpc}
clients_sweep_stale "$tag"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/erdma-podman.XXXXXX")"
chmod 0700 "$scratch"
mkdir -p "$scratch"/{bin,net.d,graph,run,tmp,image}
ln -s "$(realpath "$ERDMA_CNI")" "$scratch/bin/erdma-cni"
for p in ptp host-local loopback; do ln -s "/usr/lib/cni/$p" "$scratch/bin/$p"; done

# podman's own configuration, all of it private. network_backend must be said: a fresh store
# would pick netavark when it is installed and remember that choice.
cat >"$scratch/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
[network]
network_backend = "cni"
network_config_dir = "$scratch/net.d"
cni_plugin_dirs = ["$scratch/bin"]
[engine]
conmon_env_vars = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "ERDMA_CNI_NODE_CONFIG=$scratch/node.json"]
cgroup_manager = "cgroupfs"
events_logger = "none"
tmp_dir = "$scratch/tmp"
CONF
cat >"$scratch/storage.conf" <<CONF
[storage]
driver = "vfs"
graphroot = "$scratch/graph"
runroot = "$scratch/run"
CONF
export CONTAINERS_CONF="$scratch/containers.conf" CONTAINERS_STORAGE_CONF="$scratch/storage.conf"
# The node file (docs/security.md): the scenarios' dataDirs and logs live under $scratch; eth1
# carries each node's only default route. podman hands its environment to the plugins it runs;
# conmon, whose `podman container cleanup` sends the DEL of a container that stopped, gets only
# CONTAINERS_CONF and what `conmon_env_vars` lists.
printf '{"dataDirs": ["%s/"], "logFiles": ["%s/"], "allowNodeDevices": ["eth1"]}\n' "$scratch" "$scratch" \
  >"$scratch/node.json"
chmod 0644 "$scratch/node.json"
export ERDMA_CNI_NODE_CONFIG="$scratch/node.json"

cleanup() {
  set +e
  local f
  # Containers first (their conmon and netns), from the node netns they were run in.
  for f in /run/netns/"$tag-$$"-*-node; do
    [[ -e $f ]] && nsenter --net="$f" podman rm -af -t 0 >/dev/null 2>&1
  done
  for f in /run/netns/"$tag-$$"-*; do
    [[ -e $f ]] && ip netns del "${f##*/}" 2>/dev/null
  done
  if [[ -n ${PODMAN_KEEP:-} ]]; then
    echo "scratch kept in $scratch"
  else
    rm -rf "$scratch"
  fi
}
trap cleanup EXIT

# podman ARGS...: podman inside the node netns (its plugins' netns and conmon's too). nsenter,
# not `ip netns exec`: the latter mounts a fresh /sys, which hides the cgroup mounts runc needs.
podman_node() {
  nsenter --net="/run/netns/$node" podman "$@"
}

# The image: busybox-static and its applets; PID 1 traps TERM so that stop is immediate.
make_image() {
  local root="$scratch/image/root" a
  mkdir -p "$root"/{bin,proc,sys,dev,etc,tmp}
  cp /bin/busybox "$root/bin/busybox"
  for a in sh sleep ip ping cat ls; do ln -s busybox "$root/bin/$a"; done
  tar -C "$root" -cf "$scratch/image/rootfs.tar" .
  podman import -q "$scratch/image/rootfs.tar" localhost/erdma-podman-test:1 >/dev/null
}
readonly run_cmd=(sh -c 'trap "exit 0" TERM; while :; do sleep 1; done')

# new_case NAME: a topology of its own for the scenario ($case_no is set by the main loop).
new_case() {
  local prefix="$tag-$$-$case_no"
  node="$prefix-node" vpc="$prefix-vpc"
  dir="$scratch/$case_no-$1"
  mkdir -p "$dir"
  clients_netns_add "$node" "$vpc"
  clients_topology "$node" "$vpc"
  eni_mac="$(ip -n "$node" -j link show eth1 | jq -r '.[0].address')"
  rm -f "$scratch"/net.d/*
  clients_settle "$node"
}

end_case() {
  podman_node rm -af -t 0 >/dev/null 2>&1 || true
  ip netns del "$node" 2>/dev/null || true
  ip netns del "$vpc" 2>/dev/null || true
  node='' vpc=''
}

fail() {
  echo "    FAIL: $*"
  [[ -s $dir/err ]] && sed 's/^/      podman stderr: /' "$dir/err"
  [[ -s $dir/erdma.log ]] && tail -n 8 "$dir/erdma.log" | sed 's/^/      erdma-cni log: /'
  exit 1
}

# erdma_network NAME: an erdma-cni network, move mode, eth1 by MAC, addresses inherited.
erdma_network() {
  local name="$1"
  cat >"$scratch/net.d/$name.conflist" <<CONF
{
  "cniVersion": "1.0.0",
  "name": "$name",
  "plugins": [
    {
      "type": "erdma-cni",
      "mode": "move",
      "device": {"mac": "$eni_mac"},
      "addresses": "inherit",
      "dataDir": "$dir/erdma",
      "logFile": "$dir/erdma.log",
      "logLevel": "debug"
    }
  ]
}
CONF
}

# ptp_network NAME: a primary network of Debian's ptp + host-local.
ptp_network() {
  cat >"$scratch/net.d/$1.conflist" <<CONF
{
  "cniVersion": "1.0.0",
  "name": "$1",
  "plugins": [
    {"type": "ptp", "ipMasq": false,
     "ipam": {"type": "host-local", "subnet": "172.16.0.0/24", "routes": [{"dst": "0.0.0.0/0"}],
              "dataDir": "$dir/ipam"}}
  ]
}
CONF
}

# sandbox CONTAINER: the container's netns path, as podman reports it.
sandbox() {
  podman_node inspect -f '{{.NetworkSettings.SandboxKey}}' "$1"
}

# expect_in_pod NETNS IFNAME: the ENI (by MAC) is IFNAME in NETNS, up, with 10.9.0.11/24; a
# policy rule from that address at priority 200; the node no longer has eth1; a ping to the
# gateway from inside the container leaves through it.
expect_in_pod() {
  local ns="$1" ifname="$2" ctr="$3"
  nsenter --net="$ns" ip -j addr show dev "$ifname" >"$dir/pod-addr" 2>/dev/null || fail "$ifname is not in $ns"
  jq -e --arg m "$eni_mac" '.[0].address == $m and (.[0].flags | index("UP")) != null
    and any(.[0].addr_info[]; .local == "10.9.0.11" and .prefixlen == 24)' "$dir/pod-addr" >/dev/null ||
    fail "$ifname in the container: $(jq -c . "$dir/pod-addr")"
  nsenter --net="$ns" ip -j rule show | jq -e 'any(.[]; .priority == 200 and .src == "10.9.0.11")' >/dev/null ||
    fail "no policy rule from 10.9.0.11 at priority 200 in the container"
  if ip -n "$node" link show eth1 >/dev/null 2>&1; then fail "eth1 is still on the node"; fi
  podman_node exec "$ctr" ping -c 1 -W 2 -I 10.9.0.11 10.9.0.1 >/dev/null 2>&1 ||
    fail "no ping from the container to the gateway through $ifname"
}

# expect_home BEFORE: the node is exactly as BEFORE (eth1 home, addresses, routes, rules), and
# erdma-cni's dataDir holds no state and no claim.
expect_home() {
  local d
  d="$(clients_settled_diff "$1" "$node")"
  [[ -z $d ]] || fail "the node differs from before:"$'\n'"$d"
  if [[ -d $dir/erdma ]]; then
    local left
    left="$(find "$dir/erdma" -type f)"
    [[ -z $left ]] || fail "files left in erdma-cni's dataDir: $left"
  fi
}

scenario_lifecycle() {
  new_case lifecycle
  erdma_network erdma
  local before ns
  before="$(clients_snapshot "$node")"
  podman_node run -d --name c1 --network erdma localhost/erdma-podman-test:1 "${run_cmd[@]}" \
    >"$dir/out" 2>"$dir/err" || fail "podman run exited $?"
  ns="$(sandbox c1)"
  expect_in_pod "$ns" eth0 c1
  podman_node stop -t 5 c1 >/dev/null 2>"$dir/err" || fail "podman stop exited $?"
  expect_home "$before"
  podman_node start c1 >/dev/null 2>"$dir/err" || fail "podman start exited $?"
  expect_in_pod "$(sandbox c1)" eth0 c1
  podman_node rm -f -t 5 c1 >/dev/null 2>"$dir/err" || fail "podman rm -f exited $?"
  expect_home "$before"
  end_case
}

scenario_kill() {
  new_case kill
  erdma_network erdma
  local before pid i
  before="$(clients_snapshot "$node")"
  podman_node run -d --name k1 --network erdma localhost/erdma-podman-test:1 "${run_cmd[@]}" \
    >"$dir/out" 2>"$dir/err" || fail "podman run exited $?"
  expect_in_pod "$(sandbox k1)" eth0 k1
  pid="$(podman_node inspect -f '{{.State.Pid}}' k1)"
  [[ $pid =~ ^[1-9][0-9]*$ ]] || fail "no PID for the container ($pid)"
  kill -9 "$pid"
  # conmon sees PID 1 die and runs `podman container cleanup`, which sends DEL.
  for ((i = 0; i < 100; i++)); do
    ip -n "$node" link show eth1 >/dev/null 2>&1 && break
    sleep 0.1
  done
  expect_home "$before"
  podman_node run -d --name k2 --network erdma localhost/erdma-podman-test:1 "${run_cmd[@]}" \
    >"$dir/out" 2>"$dir/err" || fail "podman run of a second container after the kill exited $?"
  expect_in_pod "$(sandbox k2)" eth0 k2
  podman_node rm -f -t 5 k1 k2 >/dev/null 2>"$dir/err" || fail "podman rm -f exited $?"
  expect_home "$before"
  end_case
}

scenario_two() {
  new_case two
  ptp_network a-primary
  erdma_network b-erdma
  local before ns
  before="$(clients_snapshot "$node")"
  podman_node run -d --name t1 --network a-primary:interface_name=eth0 \
    --network b-erdma:interface_name=net1 localhost/erdma-podman-test:1 "${run_cmd[@]}" \
    >"$dir/out" 2>"$dir/err" || fail "podman run exited $?"
  ns="$(sandbox t1)"
  nsenter --net="$ns" ip -j addr show dev eth0 | jq -e 'any(.[0].addr_info[]; .local | startswith("172.16.0."))' \
    >/dev/null || fail "eth0 is not ptp's interface"
  nsenter --net="$ns" ip -j route show default | jq -e 'length == 1 and .[0].dev == "eth0"' >/dev/null ||
    fail "the container's default route is not through eth0"
  # erdma-cni alone in its chain names its interface after CNI_IFNAME.
  expect_in_pod "$ns" net1 t1
  podman_node rm -f -t 5 t1 >/dev/null 2>"$dir/err" || fail "podman rm -f exited $?"
  expect_home "$before"
  end_case
}

# macvlan_network NAME: an erdma-cni network, a macvlan child of eth1 (bridge), host-local.
macvlan_network() {
  cat >"$scratch/net.d/$1.conflist" <<CONF
{
  "cniVersion": "1.0.0",
  "name": "$1",
  "plugins": [
    {
      "type": "erdma-cni",
      "mode": "macvlan",
      "device": {"mac": "$eni_mac"},
      "ipam": {"type": "host-local", "subnet": "10.9.0.0/24", "rangeStart": "10.9.0.100",
               "rangeEnd": "10.9.0.140", "gateway": "10.9.0.1", "dataDir": "$dir/ipam"},
      "dataDir": "$dir/erdma",
      "logFile": "$dir/erdma.log",
      "logLevel": "debug"
    }
  ]
}
CONF
}

# --mac-address and --ip (CNI_ARGS MAC= and IP=): a macvlan child gets both; a move network
# refuses the MAC with a CNI error naming the mode, and the node stays as it was.
scenario_mac() {
  new_case mac
  macvlan_network mv
  erdma_network mv-move
  local before ns
  before="$(clients_snapshot "$node")"
  podman_node run -d --name m1 --network mv --mac-address 02:aa:bb:00:00:09 --ip 10.9.0.123 \
    localhost/erdma-podman-test:1 "${run_cmd[@]}" >"$dir/out" 2>"$dir/err" || fail "podman run exited $?"
  ns="$(sandbox m1)"
  nsenter --net="$ns" ip -j addr show dev eth0 >"$dir/pod-addr" 2>/dev/null || fail "eth0 is not in $ns"
  jq -e '.[0].address == "02:aa:bb:00:00:09" and any(.[0].addr_info[]; .local == "10.9.0.123")' \
    "$dir/pod-addr" >/dev/null || fail "eth0 in the container: $(jq -c . "$dir/pod-addr")"
  podman_node rm -f -t 5 m1 >/dev/null 2>"$dir/err" || fail "podman rm -f exited $?"
  expect_home "$before"
  if podman_node run -d --name m2 --network mv-move --mac-address 02:aa:bb:00:00:0a \
    localhost/erdma-podman-test:1 "${run_cmd[@]}" >"$dir/out" 2>"$dir/err"; then
    fail "podman run with --mac-address on a move network succeeded"
  fi
  grep -q 'CNI_ARGS MAC: mode \\\?"move\\\?" keeps' "$dir/err" ||
    fail "podman's error does not carry erdma-cni's: $(cat "$dir/err")"
  podman_node rm -f -t 0 m2 >/dev/null 2>&1 || true
  expect_home "$before"
  end_case
}

# lostdel: a DEL that fails (a fault point, armed through the environment podman and conmon
# hand to the plugins they run). podman removes the container and its netns anyway and never
# sends that DEL again; the attachment's state and eth1's claim stay. A physical ENI comes back
# to the node by itself when its netns dies (the kernel moves it to the initial netns as devN);
# the veth that stands in for it here would die with it instead, and the initial netns is not
# this private node, so the scenario plays the kernel's part: a process keeps the container's
# netns while podman removes it, eth1 goes back to the node as dev<ifindex>, then the process
# ends and the netns with it. A new container on the same network must then get eth1: its ADD
# finds the old claim stale, finishes the old DEL from its journal and logs one line naming the
# old container.
scenario_lostdel() {
  new_case lostdel
  erdma_network erdma
  if ! grep -qa ERDMA_CNI_FAULT_ACTION "$ERDMA_CNI"; then
    echo "SKIPPED: $ERDMA_CNI has no fault points (build with -DERDMA_CNI_FAULT_HOOKS=ON)"
    end_case
    return 77
  fi
  local before ns old_id holder index i state
  before="$(clients_snapshot "$node")"
  # The DEL of a stopped container may come from podman itself or from conmon's `podman
  # container cleanup` (whichever gets there first): both get the fault point, conmon through
  # a configuration of its own for this container.
  local fault=(ERDMA_CNI_FAULT=undo-before:move#1 ERDMA_CNI_FAULT_ACTION=fail)
  sed "s|^conmon_env_vars = \\[|&\"${fault[0]}\", \"${fault[1]}\", |" "$CONTAINERS_CONF" \
    >"$dir/containers.conf"
  grep -q "${fault[0]}" "$dir/containers.conf" || fail "cannot arm the fault point for conmon"
  CONTAINERS_CONF="$dir/containers.conf" podman_node run -d --name l1 --network erdma \
    localhost/erdma-podman-test:1 "${run_cmd[@]}" >"$dir/out" 2>"$dir/err" || fail "podman run exited $?"
  ns="$(sandbox l1)"
  expect_in_pod "$ns" eth0 l1
  old_id="$(podman_node inspect -f '{{.Id}}' l1)"
  nsenter --net="$ns" sleep 600 </dev/null >/dev/null 2>&1 &
  holder=$!
  # The DEL fails where it would move the device home: eth1 stays in the container's netns.
  env "${fault[@]}" CONTAINERS_CONF="$dir/containers.conf" nsenter --net="/run/netns/$node" \
    podman rm -f -t 5 l1 >"$dir/rm.out" 2>"$dir/err" || true
  grep -q "injected fault at undo-before:move#1" "$dir/erdma.log" || fail "the DEL did not fail at the fault point"
  if podman_node container exists l1; then fail "podman kept the container whose DEL failed"; fi
  state="$(find "$dir/erdma/erdma" -type f 2>/dev/null | head -n 1)"
  [[ -n $state ]] || fail "no state left by the failed DEL: nothing to recover"
  # The kernel's part: eth1 (the container's eth0) back on the node under its fallback name.
  index="$(nsenter --net="/proc/$holder/ns/net" ip -j link show eth0 | jq -r '.[0].ifindex')"
  [[ $index =~ ^[0-9]+$ ]] || fail "eth0 is no longer in the container's netns"
  nsenter --net="/proc/$holder/ns/net" ip link set eth0 netns "$node" name "dev$index"
  kill "$holder"
  wait "$holder" 2>/dev/null || true
  podman_node run -d --name l2 --network erdma localhost/erdma-podman-test:1 "${run_cmd[@]}" \
    >"$dir/out" 2>"$dir/err" || fail "podman run of a new container after the lost DEL exited $?"
  expect_in_pod "$(sandbox l2)" eth0 l2
  grep -q "recovering eth1 from container $old_id .*whose DEL never finished" "$dir/erdma.log" ||
    fail "no log line of the recovery naming the old container $old_id"
  [[ ! -e $state ]] || fail "the old container's state $state is still there"
  podman_node rm -f -t 5 l2 >/dev/null 2>"$dir/err" || fail "podman rm -f exited $?"
  expect_home "$before"
  end_case
}

make_image
passed=0 failed=0 skipped=0 case_no=0
for s in "${scenarios[@]}"; do
  case_no=$((case_no + 1))
  rc=0
  (set -e; "scenario_$s") >"$scratch/$s.out" 2>&1 || rc=$?
  if ((rc == 0)); then
    echo "PASS: $s"
    passed=$((passed + 1))
  elif ((rc == 77)); then
    echo "SKIP: $s: $(grep -m1 '^SKIPPED: ' "$scratch/$s.out" | cut -d' ' -f2-)"
    skipped=$((skipped + 1))
  else
    echo "FAIL: $s"
    sed 's/^/  /' "$scratch/$s.out"
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed, $skipped skipped"
((failed == 0)) || exit 1
# Nothing ran: skipped as a whole, never a pass.
((passed > 0 || skipped == 0)) || exit 77
