#!/usr/bin/env bash
# test.sh [SCENARIO...]: erdma-cni driven by cnitool, the CNI project's reference client
# (libcni), with Debian's plugins around it. Root.
#
# Scenarios (default: all), each run for every cniVersion libcni knows (CNITOOL_VERSIONS,
# default "0.3.0 0.3.1 0.4.0 1.0.0"), each case in a topology of its own (a "node" netns with
# the ENI stand-in eth1, a "vpc" with the gateway, a "pod"):
#   terway   conf/10-terway.conflist: ptp + host-local stand in for Terway, erdma-cni chained
#            after it moves eth1 into the pod as erdma0 (addresses inherited).
#   multus   the cluster network (conf/30-k8s-pod-network.conflist: ptp, eth0), then the
#            NetworkAttachmentDefinition's config conf/erdma.conf alone with CNI_IFNAME=net1,
#            the device named by the deviceID capability (CAP_ARGS), host-local addresses.
#   portmap  conf/20-terway-portmap.conflist: the terway chain with portmap after us.
#   tuning   conf/40-erdma-tuned.conflist: erdma-cni alone (net1, device by MAC) with tuning
#            after us setting MTU, promiscuous mode and a sysctl on our interface.
# Each case: add; the result in the config's version with every interface and address;
# the pod as the result says (device, address, policy rule and table, traffic through it);
# check (a pass, and a failure once our rule is gone; 0.3.x: libcni refuses CHECK); del; del
# again; then node and pod exactly as before (links, addresses, routes, rules), and no
# state left in erdma-cni's dataDir, host-local's leases, tuning's backups or libcni's cache.
#
# Prints a line per case and `N passed, N failed` last; exit 0 when all passed, 1 when one
# failed, 77 (skipped) without root or the Debian packages of packages.txt.
# Environment: ERDMA_CNI (default $BUILD_DIR/erdma-cni), BUILD_DIR, CNITOOL_VERSIONS,
# CNITOOL_KEEP=1 keeps the scratch directory (conf dirs, logs, results) for a look.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=SCRIPTDIR/../common.sh
source "$here/../common.sh"

read -ra versions <<<"${CNITOOL_VERSIONS:-0.3.0 0.3.1 0.4.0 1.0.0}"
all_scenarios=(terway multus portmap tuning)
if (($#)); then scenarios=("$@"); else scenarios=("${all_scenarios[@]}"); fi
for s in "${scenarios[@]}"; do
  [[ " ${all_scenarios[*]} " == *" $s "* ]] || { echo "usage: $0 [${all_scenarios[*]}]..." >&2; exit 2; }
done

((EUID == 0)) || clients_skip "the cnitool suite needs root (network namespaces)"
clients_ensure_packages "$here/packages.txt" ||
  clients_skip "the cnitool suite needs Debian packages: $(clients_missing_packages "$here/packages.txt" | tr '\n' ' ')"
[[ -x $ERDMA_CNI ]] || { echo "FAIL: no erdma-cni binary at $ERDMA_CNI (build it first)"; exit 1; }

rc=0
built="$("$here/build.sh")" || rc=$?
if ((rc == 77)); then
  clients_skip "cnitool cannot be built here: ${built:-see above}"
elif ((rc != 0)); then
  echo "FAIL: building cnitool failed (exit $rc)"
  exit 1
fi
cnitool="${built##*$'\n'}"

tag=ecnt # namespaces: ecnt-<pid>-<case>-{node,vpc,pod}
clients_sweep_stale "$tag"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/erdma-cnitool.XXXXXX")"
mkdir -p "$scratch/bin"
ln -s "$(realpath "$ERDMA_CNI")" "$scratch/bin/erdma-cni"
: >"$scratch/libcni-cache-files"
# The node file (docs/security.md): the cases' dataDirs and logs live under
# $scratch; eth1 carries each case's node's only default route.
printf '{"dataDirs": ["%s/"], "logFiles": ["%s/"], "allowNodeDevices": ["eth1"]}\n' "$scratch" "$scratch" \
  >"$scratch/node.json"
chmod 0644 "$scratch/node.json"

cleanup() {
  local f
  for f in /run/netns/"$tag-$$"-*; do
    [[ -e $f ]] && ip netns del "${f##*/}" 2>/dev/null
  done
  # libcni keeps each attachment's result in /var/lib/cni/results/<net>-<container>-<ifname>
  # until DEL: drop ours if a case died before its DEL.
  while read -r f; do rm -f "$f"; done <"$scratch/libcni-cache-files"
  if [[ -n ${CNITOOL_KEEP:-} ]]; then
    echo "scratch kept in $scratch"
  else
    rm -rf "$scratch"
  fi
}
trap cleanup EXIT

# ---- one case: namespaces, conf dir, running cnitool ----------------------------------
#
# Set by new_case: case_no node vpc pod dir confdir netns_path cid eni_mac pod_name.

case_no=0
new_case() {
  local scenario="$1" version="$2" t
  case_no=$((case_no + 1))
  local prefix="$tag-$$-$case_no"
  node="$prefix-node" vpc="$prefix-vpc" pod="$prefix-pod"
  dir="$scratch/$case_no-$scenario-$version"
  mkdir -p "$dir/conf"
  clients_netns_add "$node" "$vpc" "$pod"
  clients_topology "$node" "$vpc"
  eni_mac="$(ip -n "$node" -j link show eth1 | jq -r '.[0].address')"
  mkdir -p "$dir/conf-check"
  for t in "$here"/conf/*; do
    sed -e "s|@CNI_VERSION@|$version|g" -e "s|@DIR@|$dir|g" -e "s|@ENI_MAC@|$eni_mac|g" \
      "$t" >"$dir/conf/${t##*/}"
    # The same networks without ptp, for CHECK (see expect_chain_check).
    if [[ $t == *.conflist ]]; then
      jq '.plugins |= map(select(.type != "ptp"))' "$dir/conf/${t##*/}" >"$dir/conf-check/${t##*/}"
    fi
  done
  confdir="$dir/conf"
  netns_path="/run/netns/$pod"
  # cnitool names the container after the netns path: cnitool-<first 10 bytes of its SHA-512>.
  cid="cnitool-$(printf '%s' "$netns_path" | sha512sum | cut -c1-20)"
  pod_name="web-$case_no"
  clients_settle "$node"
  clients_settle "$pod"
}

end_case() {
  ip netns del "$pod" 2>/dev/null || true
  ip netns del "$node" 2>/dev/null || true
  ip netns del "$vpc" 2>/dev/null || true
}

# fail MESSAGE: ends the case (its subshell) with the message, cnitool's last stderr and
# the end of erdma-cni's log.
fail() {
  echo "    FAIL: $*"
  [[ -s $dir/err ]] && sed 's/^/      cnitool stderr: /' "$dir/err"
  [[ -s $dir/erdma.log ]] && tail -n 5 "$dir/erdma.log" | sed 's/^/      erdma-cni log: /'
  exit 1
}

# cni COMMAND NETWORK IFNAME [CAP_ARGS]: cnitool in the node netns with a runtime's clean
# environment, the networks of $confdir; stdout to $dir/out, stderr to $dir/err; returns
# cnitool's status.
cni() {
  local cmd="$1" net="$2" ifname="$3" cap="${4:-}"
  local -a env=(
    PATH=/usr/sbin:/usr/bin:/sbin:/bin
    CNI_PATH="/usr/lib/cni:$scratch/bin"
    NETCONFPATH="$confdir"
    ERDMA_CNI_NODE_CONFIG="$scratch/node.json"
    CNI_IFNAME="$ifname"
    CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=$pod_name;K8S_POD_INFRA_CONTAINER_ID=$cid"
  )
  [[ -n $cap ]] && env+=(CAP_ARGS="$cap")
  [[ $cmd != add ]] || echo "/var/lib/cni/results/$net-$cid-$ifname" >>"$scratch/libcni-cache-files"
  ip netns exec "$node" env -i "${env[@]}" "$cnitool" "$cmd" "$net" "$netns_path" >"$dir/out" 2>"$dir/err"
}

# run COMMAND NETWORK IFNAME [CAP_ARGS]: cni, which must succeed.
run() {
  local rc=0
  cni "$@" || rc=$?
  ((rc == 0)) || fail "cnitool $1 $2 (CNI_IFNAME=$3) exited $rc"
}

# expect_result WHAT JQ_FILTER [JQ ARGS]: the filter holds on $dir/result.
expect_result() {
  local what="$1" filter="$2"
  shift 2
  jq -e "$@" --arg netns "$netns_path" --arg mac "$eni_mac" "$filter" "$dir/result" >/dev/null ||
    fail "result: $what: $(jq -c . "$dir/result")"
}

# The index-to-name helper for results: the name of the interface an IP entry points at.
# shellcheck disable=SC2016 # jq's $r, not the shell's
jq_defs='def ifname($r): if .interface == null then null else $r.interfaces[.interface].name end;'

# expect_result_basics VERSION: the result is in the config's version, with the IP entries'
# version field as that version has it.
# shellcheck disable=SC2016 # the filters' $variables are jq's (--arg), single-quoted on purpose
expect_result_basics() {
  expect_result "cniVersion is $1" '.cniVersion == $v' --arg v "$1"
  if [[ $1 == 1.0.0 ]]; then
    expect_result "no ips[].version in 1.0.0" 'all(.ips[]; has("version") | not)'
  else
    expect_result "ips[].version is 4" 'all(.ips[]; .version == "4")'
  fi
}

# expect_our_interface NAME ADDRESS: the result lists our interface in the pod with the
# ENI's MAC, and ADDRESS with the gateway pointing at it.
# shellcheck disable=SC2016 # the filters' $variables are jq's (--arg), single-quoted on purpose
expect_our_interface() {
  expect_result "interface $1 in the sandbox with the ENI's MAC" \
    '[.interfaces[] | select(.name == $n and .sandbox == $netns and .mac == $mac)] | length == 1' --arg n "$1"
  expect_result "address $2 on $1 via 10.9.0.1" "$jq_defs"' . as $r
    | [.ips[] | select(.address == $a and ifname($r) == $n and .gateway == "10.9.0.1")] | length == 1' \
    --arg n "$1" --arg a "$2"
}

# expect_primary: the result lists eth0 in the sandbox and its 172.16.0.x address, which it
# puts in $eth0_ip.
# shellcheck disable=SC2016 # the filters' $variables are jq's (--arg), single-quoted on purpose
expect_primary() {
  expect_result "eth0 in the sandbox" '[.interfaces[] | select(.name == "eth0" and .sandbox == $netns)] | length == 1'
  expect_result "an address of 172.16.0.0/24 on eth0" "$jq_defs"' . as $r
    | [.ips[] | select((.address | startswith("172.16.0.")) and ifname($r) == "eth0")] | length == 1'
  eth0_ip="$(jq -r '.ips[] | select(.address | startswith("172.16.0.")) | .address | sub("/.*"; "")' "$dir/result")"
}

# expect_pod IFNAME ADDRESS: our interface in the pod, up, with ADDRESS; the policy rule at
# priority 200 for it and its table's default route via the gateway; a ping from ADDRESS
# to the gateway leaves through it; the node no longer has eth1. Sets $table.
expect_pod() {
  local ifname="$1" addr="$2"
  ip -n "$pod" -j addr show dev "$ifname" >"$dir/pod-addr" 2>/dev/null || fail "$ifname is not in the pod"
  jq -e --arg a "${addr%/*}" --argjson p "${addr#*/}" \
    '.[0] | (.flags | index("UP")) != null and any(.addr_info[]; .local == $a and .prefixlen == $p)' \
    "$dir/pod-addr" >/dev/null || fail "pod: $ifname is not up with $addr: $(jq -c . "$dir/pod-addr")"
  table="$(ip -n "$pod" -j rule show |
    jq -r --arg a "${addr%/*}" '.[] | select(.priority == 200 and .src == $a) | .table')"
  [[ -n $table ]] || fail "pod: no rule 'from ${addr%/*}' at priority 200: $(ip -n "$pod" rule show | tr '\n' ';')"
  ip -n "$pod" -j route show table "$table" | jq -e --arg d "$ifname" \
    'any(.[]; .dst == "default" and .gateway == "10.9.0.1" and .dev == $d)' >/dev/null ||
    fail "pod: table $table has no default via 10.9.0.1 dev $ifname"
  ip netns exec "$pod" ping -c1 -W2 -I "${addr%/*}" 10.9.0.1 >/dev/null ||
    fail "pod: no ping from ${addr%/*} to the gateway 10.9.0.1"
  if ip -n "$node" link show eth1 >/dev/null 2>&1; then fail "node: eth1 is still on the node"; fi
}

# expect_default_via_eth0: the pod's own traffic still leaves through the primary interface.
expect_default_via_eth0() {
  local dev
  dev="$(ip -n "$pod" -j route get 192.0.2.1 | jq -r '.[0].dev')"
  [[ $dev == eth0 ]] || fail "pod: 192.0.2.1 is routed via $dev, not the primary eth0"
}

# expect_check NETWORK IFNAME VERSION [CAP_ARGS] [FAILURE]: CHECK passes from 0.4.0 on, or,
# given FAILURE (an extended regex), fails with an error line matching it. libcni refuses
# CHECK for 0.3.x (the command does not exist there) without running any plugin.
expect_check() {
  local net="$1" ifname="$2" version="$3" cap="${4:-}" failure="${5:-}" rc=0
  cni check "$net" "$ifname" "$cap" || rc=$?
  if [[ $version == 0.3.* ]]; then
    ((rc != 0)) || fail "cnitool check succeeded for $version"
    grep -q 'does not support the CHECK command' "$dir/err" || fail "cnitool check $version: unexpected error"
  elif [[ -n $failure ]]; then
    ((rc != 0)) || fail "cnitool check $net passed; expected it to fail with /$failure/"
    grep -qE "$failure" "$dir/err" || fail "cnitool check $net: expected an error matching /$failure/"
  else
    ((rc == 0)) || fail "cnitool check $net exited $rc"
  fi
}

# expect_check_sees_rule_loss NETWORK IFNAME VERSION ADDRESS [CAP_ARGS] [FAILURE]: with our
# policy rule deleted, CHECK through cnitool fails naming it; put back, CHECK is as before
# (FAILURE: see expect_check). CHECK reaches erdma-cni and can fail. 0.4.0 and later.
expect_check_sees_rule_loss() {
  local net="$1" ifname="$2" version="$3" addr="$4" cap="${5:-}" failure="${6:-}" rc=0
  ip -n "$pod" rule del priority 200 from "$addr" table "$table"
  cni check "$net" "$ifname" "$cap" || rc=$?
  ((rc != 0)) || fail "cnitool check passed with the policy rule deleted"
  grep -q "CHECK: rule missing: .*from ${addr//./\\.}" "$dir/err" ||
    fail "cnitool check: the error does not name the missing rule"
  ip -n "$pod" rule add priority 200 from "$addr" table "$table"
  expect_check "$net" "$ifname" "$version" "$cap" "$failure"
}

# expect_chain_check NETWORK VERSION ADDRESS [CAP_ARGS] [FAILURE_AFTER_US]: CHECK of a chain
# that starts with ptp.
#
# libcni hands every plugin of a chain the final (cached) result, and the reference main
# plugins' CHECK (ptp, bridge, macvlan, ... in Debian's 1.1.1, and upstream still) wants
# every address of that result on their own interface, whatever the address's "interface"
# index says: no chain that appends another interface's address passes it. So the whole
# chain's CHECK must fail in ptp, on our address. The same network without ptp
# (conf-check/: same name, so libcni hands the others the same cached result, exactly what
# they get in the whole chain) must pass, or fail with FAILURE_AFTER_US in a plugin after
# us (which libcni runs only once ours has passed); and fail in ours when our rule is gone.
expect_chain_check() {
  local net="$1" version="$2" addr="$3" cap="${4:-}" after="${5:-}"
  expect_check "$net" eth0 "$version" "$cap" "^Failed to match addr ${addr//./\\.} on interface eth0\$"
  confdir="$dir/conf-check"
  expect_check "$net" eth0 "$version" "$cap" "$after"
  [[ $version == 0.3.* ]] || expect_check_sees_rule_loss "$net" eth0 "$version" "${addr%/*}" "$cap" "$after"
  confdir="$dir/conf"
}

# expect_same WHAT SNAPSHOT NETNS: NETNS is exactly as in SNAPSHOT.
expect_same() {
  local d
  d="$(clients_settled_diff "$2" "$3")"
  [[ -z $d ]] || fail "$1 differs from before:"$'\n'"      ${d//$'\n'/$'\n'      }"
}

# expect_no_files WHAT DIR [FIND ARGS]: no regular file (or symlink) under DIR.
expect_no_files() {
  local what="$1" d="$2" left
  shift 2
  [[ -d $d ]] || return 0
  left="$(find "$d" \( -type f -o -type l \) "$@" -printf '%P ')"
  [[ -z $left ]] || fail "$what left behind: $left"
}

# expect_released NETWORK IFNAME: after DEL, nothing of the attachment remains in erdma-cni's
# dataDir (state, claims) nor in libcni's cache.
expect_released() {
  expect_no_files "erdma-cni state or claim" "$dir/erdma"
  [[ ! -e /var/lib/cni/results/$1-$cid-$2 ]] || fail "libcni's cached result for $1/$2 is still there"
}

# del_twice NETWORK IFNAME [CAP_ARGS]: DEL, and DEL again (both must succeed).
del_twice() {
  run del "$@"
  run del "$@"
}

# ---- scenarios ----------------------------------------------------------------------------

# terway VERSION: the node conflist, Terway's place taken by ptp, erdma-cni chained after it.
scenario_terway() {
  local v="$1" s0 p0
  s0="$(clients_snapshot "$node")" p0="$(clients_snapshot "$pod")"
  run add terway-chainer eth0
  cp "$dir/out" "$dir/result"
  expect_result_basics "$v"
  expect_primary
  expect_our_interface erdma0 10.9.0.11/24
  expect_pod erdma0 10.9.0.11/24
  expect_default_via_eth0
  [[ -f $dir/erdma/terway-chainer/@$cid@eth0 ]] || fail "no erdma-cni state @$cid@eth0 after ADD"
  jq -e '.result.interfaces | any(.[]; .name == "erdma0")' "/var/lib/cni/results/terway-chainer-$cid-eth0" \
    >/dev/null || fail "libcni's cached result does not list erdma0"
  grep -q "pod=default/$pod_name" "$dir/erdma.log" || fail "erdma-cni's log does not name the pod from CNI_ARGS"
  expect_chain_check terway-chainer "$v" 10.9.0.11/24
  del_twice terway-chainer eth0
  expect_same node "$s0" "$node"
  expect_same pod "$p0" "$pod"
  expect_released terway-chainer eth0
  expect_no_files "host-local lease" "$dir/ipam" ! -name lock ! -name 'last_reserved_ip.*'
}

# multus VERSION: the pod's cluster network first, then erdma-cni standalone as net1.
scenario_multus() {
  local v="$1" s0 p0 s1 p1 cap='{"deviceID": "eth1"}'
  s0="$(clients_snapshot "$node")" p0="$(clients_snapshot "$pod")"
  run add k8s-pod-network eth0
  cp "$dir/out" "$dir/result"
  expect_primary
  clients_settle "$node"
  clients_settle "$pod"
  s1="$(clients_snapshot "$node")" p1="$(clients_snapshot "$pod")"

  run add erdma net1 "$cap"
  cp "$dir/out" "$dir/result"
  expect_result_basics "$v"
  expect_result "only net1" '[.interfaces[].name] == ["net1"]'
  expect_our_interface net1 10.9.0.50/24
  expect_pod net1 10.9.0.50/24
  expect_default_via_eth0
  [[ -f $dir/ipam-erdma/erdma/10.9.0.50 ]] || fail "no host-local lease for 10.9.0.50"
  expect_check erdma net1 "$v" "$cap"
  del_twice erdma net1 "$cap"
  expect_same "node (cluster network still attached)" "$s1" "$node"
  expect_same "pod (cluster network still attached)" "$p1" "$pod"
  expect_released erdma net1
  expect_no_files "host-local lease of erdma" "$dir/ipam-erdma" ! -name lock ! -name 'last_reserved_ip.*'

  run del k8s-pod-network eth0
  expect_same node "$s0" "$node"
  expect_same pod "$p0" "$pod"
  expect_released k8s-pod-network eth0
}

# portmap VERSION: the terway chain with portmap after us; portmap parses the result we pass
# on, picks the primary's address for its DNAT, and hands our interface on untouched.
scenario_portmap() {
  local v="$1" s0 p0 nat cap='{"portMappings": [{"hostPort": 18080, "containerPort": 80, "protocol": "tcp"}]}'
  s0="$(clients_snapshot "$node")" p0="$(clients_snapshot "$pod")"
  run add terway-portmap eth0 "$cap"
  cp "$dir/out" "$dir/result"
  expect_result_basics "$v"
  expect_primary
  expect_our_interface erdma0 10.9.0.11/24
  expect_pod erdma0 10.9.0.11/24
  nat="$(ip netns exec "$node" iptables -w -t nat -S)"
  grep -q -- "--dport 18080 .*-j DNAT --to-destination $eth0_ip:80" <<<"$nat" ||
    fail "node: no DNAT of port 18080 to $eth0_ip:80: $(grep DNAT <<<"$nat" | tr '\n' ';')"
  if grep -q -- "--to-destination 10\.9\.0\." <<<"$nat"; then fail "portmap forwards to erdma0's address"; fi
  # portmap 1.1.1's CHECK looks for its DNAT chain in ip6tables too, where an IPv4-only pod
  # has none (containernetworking/plugins#819, fixed after 1.1.1): it fails after ours passed.
  expect_chain_check terway-portmap "$v" 10.9.0.11/24 "$cap" \
    '^could not check ipv6 dnat: chain CNI-DN-[0-9a-f]+ not found in iptables table nat$'
  del_twice terway-portmap eth0 "$cap"
  expect_same node "$s0" "$node"
  expect_same pod "$p0" "$pod"
  expect_released terway-portmap eth0
  if ip netns exec "$node" iptables -w -t nat -S | grep -q -- "--to-destination"; then
    fail "node: portmap's DNAT is still there"
  fi
}

# tuning VERSION: erdma-cni standalone as net1 with tuning after it working on our
# interface; DEL runs tuning's restore first, then our move home.
scenario_tuning() {
  local v="$1" s0 p0 link
  s0="$(clients_snapshot "$node")" p0="$(clients_snapshot "$pod")"
  run add erdma-tuned net1
  cp "$dir/out" "$dir/result"
  expect_result_basics "$v"
  expect_our_interface net1 10.9.0.11/24
  expect_pod net1 10.9.0.11/24
  link="$(ip -n "$pod" -d -j link show dev net1)"
  jq -e '.[0] | .mtu == 1400 and .promiscuity > 0' <<<"$link" >/dev/null ||
    fail "pod: tuning's MTU 1400 and promiscuous mode are not on net1: $(jq -c '.[0] | {mtu, promiscuity}' <<<"$link")"
  [[ "$(ip netns exec "$pod" cat /proc/sys/net/ipv4/conf/net1/arp_ignore)" == 1 ]] ||
    fail "pod: tuning's net.ipv4.conf.net1.arp_ignore is not 1"
  [[ -n "$(find "$dir/tuning" -type f 2>/dev/null)" ]] || fail "tuning kept no backup of net1"
  expect_check erdma-tuned net1 "$v"
  del_twice erdma-tuned net1
  expect_same node "$s0" "$node"
  expect_same pod "$p0" "$pod"
  expect_released erdma-tuned net1
  expect_no_files "tuning backup" "$dir/tuning"
}

# ---- main ---------------------------------------------------------------------------------

echo "cnitool: $cnitool (libcni $(dpkg-query -W -f='${Version}' golang-github-appc-cni-dev)," \
  "plugins $(dpkg-query -W -f='${Version}' containernetworking-plugins)), erdma-cni: $ERDMA_CNI"
passed=0 failed=0 failures=()
for s in "${scenarios[@]}"; do
  for v in "${versions[@]}"; do
    start=$SECONDS
    new_case "$s" "$v"
    set +e
    (
      set -e
      "scenario_$s" "$v"
    ) >"$dir/log" 2>&1
    rc=$?
    set -e
    end_case
    if ((rc == 0)); then
      passed=$((passed + 1))
      printf 'ok    %-8s %-6s (%d s)\n' "$s" "$v" $((SECONDS - start))
    else
      failed=$((failed + 1))
      failures+=("$s $v")
      printf 'FAIL  %-8s %-6s (%d s)\n' "$s" "$v" $((SECONDS - start))
      sed 's/^/  /' "$dir/log"
    fi
  done
done
echo "$passed passed, $failed failed"
((failed == 0)) || { echo "failed: ${failures[*]}"; exit 1; }
