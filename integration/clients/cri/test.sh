#!/usr/bin/env bash
# test.sh [nri]: erdma-cni driven by containerd's CRI plugin, as kubelet drives it.
#
# A private containerd (Debian's, with runc) runs inside a private "node"
# network namespace that holds a veth stand-in for a secondary ENI (eth1,
# 10.9.0.11/24, gateway 10.9.0.1 in a "vpc" namespace). Its CNI config chains
# Debian's ptp + host-local (standing in for Terway) and erdma-cni in move
# mode with the io.kubernetes.cri.pod-annotations capability. A small CRI
# client (cri.py, stubs generated from the CRI api.proto of Debian's
# containerd source package) runs pod sandboxes whose pause image is built
# here from pause.c. Nothing of erdma-cni's is mocked and no part of the
# chain is ours except erdma-cni: containerd decides the CNI calls.
#
# Scenarios (docs/clients.md):
#   1. a sandbox annotated network.alibabacloud.com/erdma-smcr=true gets the
#      ENI, and the annotation reaches erdma-cni, which on this kernel without
#      SMC sets nothing of SMC-R (no sysctl, IPv6 stays on) and says so once
#   2. while it holds the ENI, a second sandbox fails with erdma-cni's code 11
#      and containerd's clean-up DEL leaves the first pod's ENI alone
#   3. StopPodSandbox brings the ENI home; RemovePodSandbox makes containerd
#      DEL again with an empty netns and no prevResult, which succeeds
#   4. a sandbox without the annotation gets the ENI and no SMC-R step
#   5. one node conflist for every pod: erdma-cni's entry becomes a pool a pod
#      asks for by annotation (network.alibabacloud.com/erdma=true); a plain
#      sandbox and a GPU-shaped one run side by side: the plain one passes
#      through (the ptp result alone, eth1 stays on the node, no state), the
#      other gets the ENI
#
# With the argument nri, scenario 6 alone, against containerd 1.7 from
# Debian's trixie suite (fetch-containerd.sh: unpacked in BUILD_DIR, never
# installed) with NRI on and the agent erdma-cni-nri connected to it:
#   6. the pool recipe again; a container of the annotated sandbox gets what
#      the agent adds (RLIMIT_MEMLOCK, its rail's uverbs node and rdma_cm with
#      their device cgroup rules, NCCL_IB_HCA), a container of the plain one
#      gets nothing; with the agent stopped both start as without it; when
#      containerd restarts, the agent registers again. This kernel has no
#      RDMA: the annotated sandbox's state gets the RDMA device a node with
#      RDMA records (rdmaDevice, shared mode: nothing for DEL to move), and the
#      agent reads its uverbs and rdma_cm numbers from a sysfs tree laid out
#      here (ERDMA_CNI_TEST_SYSFS, test builds), numbers no driver of this
#      kernel has: open() then answers ENXIO where the device cgroup lets the
#      container through and EPERM where it does not.
#
# Environment: ERDMA_CNI (the binary; default BUILD_DIR/erdma-cni), ERDMA_CNI_NRI
# (the agent; default BUILD_DIR/erdma-cni-nri), BUILD_DIR
# (default <repo>/build; the CRI stubs are cached in BUILD_DIR/clients-cache/cri),
# CRI_KEEP=1 keeps the scratch dir for a look after a failure.
# Exit: 0 all checks passed, 1 a check failed, 77 skipped (not root, or a
# package of packages.txt missing; with nri: trixie's containerd cannot be
# fetched), with the reason on stdout.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$repo/build}"
ERDMA_CNI="${ERDMA_CNI:-$BUILD_DIR/erdma-cni}"
ERDMA_CNI_NRI="${ERDMA_CNI_NRI:-$BUILD_DIR/erdma-cni-nri}"
mode="${1:-plain}"
[[ $mode == plain || $mode == nri ]] || { echo "usage: $0 [nri]" >&2; exit 2; }
py=/usr/bin/python3 # Debian's, which has python3-grpcio; not whatever python3 is first on PATH

skip() {
  echo "SKIPPED: $*"
  exit 77
}

((EUID == 0)) || skip "the containerd CRI test needs root (network namespaces, containerd, runc)"
missing=()
while read -r p; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/packages.txt")
((${#missing[@]} == 0)) ||
  skip "Debian packages missing: ${missing[*]} (apt-get install ${missing[*]}; integration/bootstrap.sh installs them)"
[[ -x $ERDMA_CNI ]] || { echo "cri: no erdma-cni binary at $ERDMA_CNI (build it first)" >&2; exit 1; }
ERDMA_CNI="$(realpath "$ERDMA_CNI")"

start=$SECONDS
stubs="$("$here/fetch-cri-api.sh" "$BUILD_DIR/clients-cache/cri" | tail -n1)"
containerd_bin="" # the system's containerd, shim and ctr, on PATH
if [[ $mode == nri ]]; then
  [[ -x $ERDMA_CNI_NRI ]] || { echo "cri: no erdma-cni-nri binary at $ERDMA_CNI_NRI (build it first)" >&2; exit 1; }
  ERDMA_CNI_NRI="$(realpath "$ERDMA_CNI_NRI")"
  containerd_bin="$("$here/fetch-containerd.sh" "$BUILD_DIR/clients-cache/containerd-trixie" | tail -n1)" ||
    skip "containerd 1.7 from Debian's trixie suite cannot be fetched (fetch-containerd.sh, above): the NRI test needs it"
  # Its shim before the system's: containerd finds containerd-shim-runc-v2 on PATH.
  export PATH="$containerd_bin:$PATH"
fi

# ---------------------------------------------------------------- scratch and teardown
# Names carry this shell's pid, so that runs side by side do not meet and a run
# killed before its trap ran (ctest's timeout) is recognised and swept by the next.
tag="ecni-cri-$$"
node="$tag-node"
vpc="$tag-vpc"
containerd_pid=""
rc=0

# remove_run TAG: ends the processes of the run TAG (those whose command line
# names its scratch dir: containerd and the shims, which outlive it by design;
# then the pause processes it recorded) and removes its namespaces and files.
remove_run() {
  local t="$1" d pid dir
  for dir in "${TMPDIR:-/tmp}/$t".*; do
    [[ -d $dir && ! -f $dir/KEPT ]] || continue
    for d in /proc/[0-9]*; do
      pid="${d#/proc/}"
      { tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null | grep -qF -- "$dir/" && kill -KILL "$pid" 2>/dev/null
    done
    if [[ -f $dir/pause.pids ]]; then
      while read -r pid; do
        [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == pause ]] && kill -KILL "$pid" 2>/dev/null
      done <"$dir/pause.pids"
    fi
    # What containerd keeps outside its dirs for a sandbox it did not get to
    # remove: libcni's cached results and the shim's socket (named as
    # containerd's runtime/v2/shim SocketAddress names it).
    if [[ -f $dir/sandboxes ]]; then
      while read -r id; do
        rm -f /var/lib/cni/results/*-"$id"-* \
          "/run/containerd/s/$(printf '%s' "$dir/containerd.sock/k8s.io/$id" | sha256sum | cut -d' ' -f1)"
      done <"$dir/sandboxes"
    fi
    sleep 0.2
    # The sandboxes' cgroups (cgroupfs, v1 and the v2 hierarchy) are under /TAG.
    for d in /sys/fs/cgroup/*/"$t"/* /sys/fs/cgroup/*/"$t"; do
      [[ -d $d ]] && rmdir "$d" 2>/dev/null
    done
    # containerd's mounts live in its own mount namespace and went with it;
    # should any have reached this one, they go before the files.
    { grep -F " $dir/" /proc/self/mountinfo || true; } | awk '{print $5}' | sort -r | xargs -r -n1 umount -l
    if [[ $t == "$tag" && -n ${CRI_KEEP:-} && $rc != 0 ]]; then
      touch "$dir/KEPT"
      echo "cri: scratch dir kept: $dir"
    else
      rm -rf "$dir"
    fi
  done
  ip netns del "$t-node" 2>/dev/null || true
  ip netns del "$t-vpc" 2>/dev/null || true
}

for n in /run/netns/ecni-cri-*-node "${TMPDIR:-/tmp}"/ecni-cri-*.*; do
  [[ -e $n && $n =~ /ecni-cri-([0-9]+)[-.] ]] || continue
  owner="${BASH_REMATCH[1]}"
  ((owner != $$)) && ! kill -0 "$owner" 2>/dev/null && remove_run "ecni-cri-$owner"
done

# Short: containerd's socket paths must fit in sun_path (108 bytes).
scratch="$(mktemp -d "${TMPDIR:-/tmp}/$tag.XXXXXX")"
sock="$scratch/containerd.sock"

teardown() {
  rc=$?
  trap - EXIT INT TERM
  set +e
  if [[ -n $containerd_pid ]] && kill -0 "$containerd_pid" 2>/dev/null; then
    # Sandboxes a failed check left behind: containerd stops them (CNI DEL included).
    for id in $(cri list 2>/dev/null); do
      cri stop "$id" >/dev/null 2>&1
      cri remove "$id" >/dev/null 2>&1
    done
    kill -TERM "$containerd_pid"
    for _ in $(seq 50); do kill -0 "$containerd_pid" 2>/dev/null || break; sleep 0.1; done
  fi
  remove_run "$tag"
  exit "$rc"
}
trap teardown EXIT
trap 'exit 130' INT TERM

cri() { "$py" "$here/cri.py" "$stubs" "$sock" "$@"; }
in_node() { ip netns exec "$node" "$@"; }
in_pod() { # PID CMD...: CMD in the network namespace of the sandbox whose pause process is PID
  local pid="$1"
  shift
  nsenter --net="/proc/$pid/ns/net" "$@"
}
node_state() { in_node "$py" "$here/netstate.py" "$@"; }
pod_state() { # PID ARGS...
  local pid="$1"
  shift
  in_pod "$pid" "$py" "$here/netstate.py" "$@"
}

passed=0 failed=0
check() { # DESCRIPTION CMD...: a check that fails the test but lets the others run
  local what="$1"
  shift
  if "$@"; then
    echo "ok - $what"
    passed=$((passed + 1))
  else
    echo "FAIL - $what"
    failed=$((failed + 1))
  fi
}
eq() { # GOT WANT
  [[ "$1" == "$2" ]] && return 0
  echo "    got:  '$1'"
  echo "    want: '$2'"
  return 1
}
dump_logs() {
  echo "---- containerd log (errors and CNI lines)"
  grep -iE 'level=(error|warning|fatal)|cni|erdma' "$scratch/containerd.log" | tail -n 40 || true
  echo "---- erdma-cni log"
  cat "$scratch/erdma-cni.log" 2>/dev/null || true
}
die() {
  echo "FAIL - $*"
  dump_logs
  echo "$passed passed, $((failed + 1)) failed"
  exit 1
}

# ---------------------------------------------------------------- the node
# DAD off so that snapshots never catch an address `tentative`.
ip netns add "$node"
ip netns add "$vpc"
for ns in "$node" "$vpc"; do
  ip netns exec "$ns" sh -c 'echo 0 >/proc/sys/net/ipv6/conf/all/accept_dad; echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad'
  ip -n "$ns" link set lo up
done
ip -n "$vpc" link add br0 type bridge
ip -n "$vpc" addr add 10.9.0.1/24 dev br0
ip -n "$vpc" link set br0 up
ip -n "$node" link add eth1 type veth peer name eni1 netns "$vpc"
ip -n "$vpc" link set eni1 master br0 up
ip -n "$node" addr add 10.9.0.11/24 dev eth1 noprefixroute
ip -n "$node" link set eth1 up
# The node agent's routes through a secondary ENI, below the primary NIC's.
ip -n "$node" route add 10.9.0.0/24 dev eth1 proto static scope link src 10.9.0.11 metric 200
ip -n "$node" route add default via 10.9.0.1 dev eth1 metric 200
eth1_mac="$(ip -n "$node" -j link show dev eth1 | "$py" -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')"

# ---------------------------------------------------------------- containerd
mkdir -p "$scratch"/{cni/bin,cni/net.d,pods,erdma-data,host-local}
for p in /usr/lib/cni/*; do ln -s "$p" "$scratch/cni/bin/"; done
ln -s "$ERDMA_CNI" "$scratch/cni/bin/erdma-cni"

gcc -static -O2 -s -Wall -Wextra -Werror -o "$scratch/pause" "$here/pause.c"
pause_image="localhost/erdma-cni-test/pause:$tag"
"$py" "$here/make-image.py" "$scratch/pause" "$pause_image" "$scratch/pause.tar"

# net.ipv4.tcp_ecn: per network namespace, 2 in a new one; 1 shows erdma-cni wrote it.
smc_sysctl=net.ipv4.tcp_ecn
smc_value=1
subst=(-e "s|@SCRATCH@|$scratch|g" -e "s|@PAUSE_IMAGE@|$pause_image|g" -e "s|@SNAPSHOTTER@|overlayfs|g"
  -e "s|@CNI_VERSION@|1.0.0|g" -e "s|@SMC_SYSCTL@|$smc_sysctl|g" -e "s|@SMC_SYSCTL_VALUE@|$smc_value|g")
sed "${subst[@]}" "$here/containerd.toml.in" >"$scratch/containerd.toml"
sed "${subst[@]}" "$here/conflist.json.in" >"$scratch/cni/net.d/10-erdma-cri-test.conflist"
pool_conflist() { # FILE: prints the conflist FILE with erdma-cni's entry a pool of eth1 (pods ask by annotation)
  "$py" - "$1" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
e = c["plugins"][1]
e["device"] = {"pool": {"names": ["eth1"]}}
print(json.dumps(c, indent=2))
PY
}
if [[ $mode == nri ]]; then
  pool_conflist "$scratch/cni/net.d/10-erdma-cri-test.conflist" >"$scratch/pool.conflist"
  mv "$scratch/pool.conflist" "$scratch/cni/net.d/10-erdma-cri-test.conflist"
fi

node_before="$(node_state snapshot)"
node_ecn="$(in_node cat /proc/sys/net/ipv4/tcp_ecn)" # a new netns's default
[[ $node_ecn != "$smc_value" ]] || die "$smc_sysctl is $smc_value by default here: it cannot show erdma-cni's write"

# containerd runs in the node netns as it runs in a real node's root netns, in a
# mount namespace of its own whose /sys is the node netns's sysfs (as under
# ip netns exec, which however loses the cgroup mounts under /sys that runc
# needs: they are carried over here).
mkdir -p "$scratch/cgroup"
# The node file (docs/security.md), passed down through containerd's
# environment: the test's dataDir and log live under $scratch; eth1 carries
# the node's only default route.
# With nri, the agent's nriMemlock too: unlimited, as on a node; where root
# here lacks CAP_SYS_RESOURCE, runc (which sets the limit with the runtime's
# privileges) cannot raise a hard limit, so the test asks for half of its own.
nri_memlock="" nri_memlock_want=""
if [[ $mode == nri ]]; then
  if prlimit --memlock=unlimited:unlimited true 2>/dev/null; then
    nri_memlock=unlimited nri_memlock_want="unlimited unlimited"
  else
    half=$(($(ulimit -Hl) / 2))
    nri_memlock="${half}Ki" nri_memlock_want="$((half * 1024)) $((half * 1024))"
    echo "cri: NOTE: root here cannot raise RLIMIT_MEMLOCK (no CAP_SYS_RESOURCE): nriMemlock is $nri_memlock, below the runtime's hard limit"
  fi
fi
printf '{"dataDirs": ["%s/"], "logFiles": ["%s/"], "allowNodeDevices": ["eth1"]%s}\n' "$scratch" "$scratch" \
  "${nri_memlock:+, \"nriMemlock\": \"$nri_memlock\"}" >"$scratch/node.json"
chmod 0644 "$scratch/node.json"
export ERDMA_CNI_NODE_CONFIG="$scratch/node.json"
# start_containerd: starts it in the background (containerd_pid), its log
# appended to containerd.log, and waits for its CRI to answer.
start_containerd() {
  # shellcheck disable=SC2016 # $1.. are the inner shell's
  nsenter --net="/run/netns/$node" unshare --mount --propagation slave -- sh -c '
    set -e
    mount --rbind /sys/fs/cgroup "$1"
    mount -t sysfs sysfs /sys
    mount --rbind "$1" /sys/fs/cgroup
    umount -l "$1"
    shift
    exec "$@"' sh "$scratch/cgroup" containerd --config "$scratch/containerd.toml" >>"$scratch/containerd.log" 2>&1 &
  containerd_pid=$!
  for _ in $(seq 100); do
    [[ -S $sock ]] && cri version >/dev/null 2>&1 && break
    kill -0 "$containerd_pid" 2>/dev/null || die "containerd exited at start"
    sleep 0.2
  done
  version="$(cri version)" || die "containerd answers no CRI Version call"
}
if [[ $mode == nri ]]; then
  # NRI on, its socket and plugin directories the test's own; the runtime's
  # time limits as containerd 1.7 sets them by default.
  cat >>"$scratch/containerd.toml" <<EOF
[plugins."io.containerd.nri.v1.nri"]
  disable = false
  disable_connections = false
  socket_path = "$scratch/nri.sock"
  plugin_path = "$scratch/nri/plugins"
  plugin_config_path = "$scratch/nri/conf.d"
  plugin_registration_timeout = "5s"
  plugin_request_timeout = "2s"
EOF
  mkdir -p "$scratch/nri/plugins" "$scratch/nri/conf.d"
fi
start_containerd
echo "cri: runtime $version${containerd_bin:+ (Debian trixie, from $containerd_bin)}; CRI stubs from $(cat "$BUILD_DIR/clients-cache/cri/api.proto.source")"
ctr -a "$sock" -n k8s.io images import --snapshotter overlayfs "$scratch/pause.tar" >/dev/null ||
  die "ctr images import of the pause image"

# ---------------------------------------------------------------- helpers per sandbox
run_sandbox() { # NAME [ANNOTATION...]: prints the sandbox id
  local name="$1"
  shift
  mkdir -p "$scratch/pods/$name"
  cri run "$name" "uid-$name-$$" "$scratch/pods/$name" "/$tag" "$@"
}
sandbox_field() { # ID FIELD
  cri status "$1" | "$py" -c "import json,sys; print(json.load(sys.stdin)['$2'])"
}
pause_pid() { # ID: prints the pid of the sandbox's pause process, and records both for teardown
  local pid
  echo "$1" >>"$scratch/sandboxes"
  pid="$(sandbox_field "$1" pid)"
  echo "$pid" >>"$scratch/pause.pids"
  echo "$pid"
}
log_of() { # ID: erdma-cni's log lines of this sandbox
  grep -F " cid=$1 " "$scratch/erdma-cni.log" || true
}
node_has_eth1_home() {
  eq "$(node_state addr4 eth1)" "10.9.0.11/24" &&
    eq "$(ip -n "$node" -j link show dev eth1 | "$py" -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')" "$eth1_mac"
}
node_as_before() {
  local now
  for _ in $(seq 30); do
    now="$(node_state snapshot)"
    [[ $now == "$node_before" ]] && return 0
    sleep 0.1
  done
  diff <(echo "$node_before") <(echo "$now") | sed 's/^/    /'
  return 1
}
data_dir_empty() {
  local files
  files="$(find "$scratch/erdma-data" -type f -printf '    left: %P\n')"
  [[ -z $files ]] && return 0
  echo "$files"
  return 1
}
pod_has_eni() { # PID: erdma0 in the pod with the ENI's address, policy rule and table
  local pid="$1" table
  eq "$(pod_state "$pid" addr4 erdma0)" "10.9.0.11/24" || return 1
  table="$(pod_state "$pid" rule-table 10.9.0.11 200)"
  [[ -n $table ]] || { echo "    no rule 'from 10.9.0.11' at priority 200"; in_pod "$pid" ip rule | sed 's/^/    /'; return 1; }
  eq "$(pod_state "$pid" default-via "$table")" "10.9.0.1"
}
lifecycle_end() { # ID NAME: stop and remove the sandbox, checking what containerd made erdma-cni do
  local id="$1" name="$2" dels
  check "$name: StopPodSandbox succeeds" cri stop "$id"
  check "$name: after StopPodSandbox eth1 is home in the node with its address and MAC" node_has_eth1_home
  check "$name: the node's links, addresses, routes and rules are as before the pod" node_as_before
  check "$name: erdma-cni's DEL put the device back" grep -qF "detached: eth1 is back on the node" <(log_of "$id")
  check "$name: RemovePodSandbox succeeds" cri remove "$id"
  dels="$(log_of "$id" | grep -E ': DEL netns=' || true)"
  # containerd's first DEL carries the netns path; RemovePodSandbox stops the
  # sandbox again and, its netns closed, DELs once more with CNI_NETNS empty.
  check "$name: containerd sent DEL twice, the second with an empty netns" \
    eq "$(echo "$dels" | sed -E 's/.*: DEL netns=(.*)$/\1/; s/.+/<path>/; s/^$/<empty>/' | tr '\n' ' ')" "<path> <empty> "
  check "$name: the second DEL found nothing left to do" \
    grep -qF "no state for this attachment: nothing to do" <(log_of "$id")
  # Warnings expected on this kernel: no RDMA netlink (rdma not configured), no SMC netlink.
  check "$name: erdma-cni logged no error and no unexpected warning" \
    eq "$(log_of "$id" | grep -E 'Z (warn|error) \[' | grep -vE 'kernel has no (RDMA|SMC)' || true)" ""
  check "$name: no sandbox is left in containerd" eq "$(cri list)" ""
  check "$name: erdma-cni's data dir holds no state" data_dir_empty
  # The attachment record ADD wrote before its first step (the node file's
  # attachmentsDir, its default here): DEL removes it with the state.
  check "$name: erdma-cni's attachment record is gone" \
    eq "$(find /run/erdma-cni-attachments -name "*$id*" 2>/dev/null)" ""
  check "$name: libcni's cached result is gone" eq "$(find /var/lib/cni/results -name "*$id*" 2>/dev/null)" ""
  check "$name: eth1 is still home after RemovePodSandbox" node_has_eth1_home
}

finish() {
  echo "cri: $((SECONDS - start)) s"
  ((failed == 0)) || dump_logs
  echo "$passed passed, $failed failed"
  ((failed == 0))
}

if [[ $mode == nri ]]; then
  # shellcheck source=SCRIPTDIR/nri.sh
  source "$here/nri.sh"
  finish
  exit
fi

# ---------------------------------------------------------------- 1. annotated sandbox
echo "== 1. RunPodSandbox with network.alibabacloud.com/erdma-smcr=true"
id_a="$(run_sandbox smcr network.alibabacloud.com/erdma-smcr=true)" || die "RunPodSandbox (annotated)"
pid_a="$(pause_pid "$id_a")"
check "smcr: the sandbox is READY" eq "$(sandbox_field "$id_a" state)" SANDBOX_READY
check "smcr: the sandbox's cgroups are under /$tag (removed at teardown)" grep -qF ":/$tag/$id_a" "/proc/$pid_a/cgroup"
check "smcr: containerd ran erdma-cni's ADD with the sandbox's netns" \
  eq "$(log_of "$id_a" | sed -nE 's/.*: ADD netns=(.*)$/\1/p')" "$(sandbox_field "$id_a" netns)"
check "smcr: the pod IP is the primary plugin's (ptp)" eq "$(sandbox_field "$id_a" ip | cut -d. -f1-3)" 172.30.99
check "smcr: eth1 left the node" eq "$(ip -n "$node" link show dev eth1 2>/dev/null || true)" ""
check "smcr: erdma0 in the pod has 10.9.0.11/24, the rule at priority 200 and a default via 10.9.0.1" pod_has_eni "$pid_a"
check "smcr: erdma-cni recorded the attachment (what lifecycle_end finds gone after DEL)" \
  test -n "$(find /run/erdma-cni-attachments -name "*$id_a*" 2>/dev/null)"
pod_pings_gateway() { in_pod "$1" ping -c1 -W2 -I 10.9.0.11 10.9.0.1 >/dev/null; }
check "smcr: the pod reaches the gateway from its ENI address" pod_pings_gateway "$pid_a"
# This kernel has no SMC: the annotation reaches erdma-cni, which then sets
# nothing of SMC-R (its sysctl steps run in the VM scenario smcr.sh).
check "smcr: $smc_sysctl keeps a new netns's default in the pod ($node_ecn): no SMC, no SMC-R" \
  eq "$(in_pod "$pid_a" cat /proc/sys/net/ipv4/tcp_ecn)" "$node_ecn"
check "smcr: IPv6 stays on in the pod" eq "$(in_pod "$pid_a" cat /proc/sys/net/ipv6/conf/all/disable_ipv6)" 0
check "smcr: $smc_sysctl unchanged on the node" eq "$(in_node cat /proc/sys/net/ipv4/tcp_ecn)" "$node_ecn"
check "smcr: erdma-cni took the annotation and said once that without SMC it sets nothing (onUnsupported: warn)" \
  eq "$(log_of "$id_a" | grep -c "nothing of SMC-R is set in this pod")" 1

# ---------------------------------------------------------------- 2. the ENI is taken
echo "== 2. a second sandbox while the first holds the ENI"
if id_b="$(run_sandbox busy 2>"$scratch/busy.err")"; then
  pause_pid "$id_b" >/dev/null
  check "busy: RunPodSandbox fails while the ENI is held" false
else
  sed 's/^/    /' "$scratch/busy.err"
  check "busy: RunPodSandbox fails with erdma-cni's error naming the sandbox that holds eth1" \
    grep -qF "plugin type=\"erdma-cni\" failed (add): device eth1 is in use by container $id_a" "$scratch/busy.err"
  id_b="$(sed -nE 's/.*failed to setup network for sandbox "([0-9a-f]+)".*/\1/p' "$scratch/busy.err")"
  echo "${id_b:-none}" >>"$scratch/sandboxes"
  # containerd undoes a failed network setup with a DEL of the whole chain.
  check "busy: containerd's clean-up DEL reached erdma-cni and found nothing of this sandbox to undo" \
    eq "$(log_of "${id_b:-none}" | sed -nE 's/.*: (DEL netns=.+|no state for this attachment.*)$/\1/p' | sed -E 's/=.+/=<path>/')" \
    "DEL netns=<path>
no state for this attachment: nothing to do"
fi
check "busy: the first pod still has its ENI after containerd's clean-up DEL" pod_has_eni "$pid_a"
check "busy: containerd holds only the first sandbox" eq "$(cri list)" "$id_a"

echo "== 3. StopPodSandbox and RemovePodSandbox of the annotated sandbox"
lifecycle_end "$id_a" smcr

# ---------------------------------------------------------------- 4. plain sandbox
echo "== 4. RunPodSandbox without the annotation"
id_c="$(run_sandbox plain)" || die "RunPodSandbox (plain)"
pid_c="$(pause_pid "$id_c")"
check "plain: erdma0 in the pod has 10.9.0.11/24, the rule at priority 200 and a default via 10.9.0.1" pod_has_eni "$pid_c"
check "plain: $smc_sysctl keeps a new netns's default ($node_ecn)" eq "$(in_pod "$pid_c" cat /proc/sys/net/ipv4/tcp_ecn)" "$node_ecn"
check "plain: IPv6 stays on" eq "$(in_pod "$pid_c" cat /proc/sys/net/ipv6/conf/all/disable_ipv6)" 0
check "plain: erdma-cni did no SMC-R step (log)" eq "$(log_of "$id_c" | grep -F 'SMC' || true)" ""
lifecycle_end "$id_c" plain

# ---------------------------------------------------------------- 5. every pod of the node
echo "== 5. the pool recipe: a plain sandbox passes through, an annotated one gets the ENI"
conflist="$scratch/cni/net.d/10-erdma-cri-test.conflist"
pool_conflist "$conflist" >"$scratch/pool.conflist"
events_before="$(grep -c 'receiving change event from cni conf dir' "$scratch/containerd.log" || true)"
# Written in place: containerd 1.6 reloads on a WRITE event and ignores a
# CREATE (which a rename into the directory is).
cat "$scratch/pool.conflist" >"$conflist"
for _ in $(seq 50); do
  (($(grep -c 'receiving change event from cni conf dir' "$scratch/containerd.log" || true) > events_before)) && break
  sleep 0.1
done
sleep 0.5 # the reload follows the event
id_p="$(run_sandbox web)" || die "RunPodSandbox (plain, pool recipe)"
pid_p="$(pause_pid "$id_p")"
id_g="$(run_sandbox gpu network.alibabacloud.com/erdma=true)" || die "RunPodSandbox (annotated, pool recipe)"
pid_g="$(pause_pid "$id_g")"
check "pool: both sandboxes are READY side by side" \
  eq "$(sandbox_field "$id_p" state) $(sandbox_field "$id_g" state)" "SANDBOX_READY SANDBOX_READY"
check "pool: the plain sandbox has the primary plugin's IP" eq "$(sandbox_field "$id_p" ip | cut -d. -f1-3)" 172.30.99
check "pool: the plain sandbox has no erdma0" eq "$(in_pod "$pid_p" ip -o link show dev erdma0 2>/dev/null || true)" ""
check "pool: erdma-cni passed the plain sandbox through (one log line)" \
  eq "$(log_of "$id_p" | grep -c 'ADD passed through' || true)" 1
check "pool: the annotated sandbox has the ENI as erdma0 with its rule and table" pod_has_eni "$pid_g"
check "pool: eth1 left the node for the annotated sandbox" eq "$(ip -n "$node" link show dev eth1 2>/dev/null || true)" ""
check "pool: StopPodSandbox of the plain sandbox succeeds" cri stop "$id_p"
check "pool: RemovePodSandbox of the plain sandbox succeeds" cri remove "$id_p"
check "pool: the plain sandbox's DELs found nothing to do" \
  eq "$(log_of "$id_p" | grep -c 'no state for this attachment: nothing to do' || true)" 2
check "pool: erdma-cni logged no warning or error for the plain sandbox" \
  eq "$(log_of "$id_p" | grep -E 'Z (warn|error) \[' || true)" ""
check "pool: the annotated sandbox still has the ENI" pod_has_eni "$pid_g"
lifecycle_end "$id_g" gpu
finish
