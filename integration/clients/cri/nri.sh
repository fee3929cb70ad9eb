# nri.sh: scenario 6 of test.sh, sourced by `test.sh nri` once containerd 1.7
# (trixie's, NRI on) answers and the pool recipe is its CNI config. Uses
# test.sh's helpers (cri, check, eq, run_sandbox, pause_pid, lifecycle_end, ...).
# shellcheck shell=bash
# shellcheck disable=SC2154 # scratch, here, tag, py, sock, ...: test.sh's

echo "== 6. NRI: erdma-cni-nri gives the annotated sandbox's containers what RDMA needs, others nothing"

# The container: a static program printing its RLIMIT_MEMLOCK, NCCL_* and
# /dev/infiniband (nri-probe.c), packed as an image.
gcc -static -O2 -s -Wall -Wextra -Werror -o "$scratch/nri-probe" "$here/nri-probe.c"
probe_image="localhost/erdma-cni-test/nri-probe:$tag"
"$py" "$here/make-image.py" "$scratch/nri-probe" "$probe_image" "$scratch/nri-probe.tar"
ctr -a "$sock" -n k8s.io images import --snapshotter overlayfs "$scratch/nri-probe.tar" >/dev/null ||
  die "ctr images import of the probe image"

# The node's RDMA devices as the agent reads them from sysfs: rxe_nri (the
# annotated pod's rail) and rxe_other (no pod's). Major 231 is uverbs'; no
# driver of this kernel has it, nor misc minor 250, which the checks below
# rely on.
grep -qE '^[[:space:]]*231 ' /proc/devices && die "this kernel has a driver for major 231: open() cannot tell the device cgroup's answer"
sysfs="$scratch/sys"
for d in uverbs7:rxe_nri:231:199 uverbs6:rxe_other:231:198; do
  IFS=: read -r node_name ibdev major minor <<<"$d"
  mkdir -p "$sysfs/class/infiniband_verbs/$node_name"
  echo "$ibdev" >"$sysfs/class/infiniband_verbs/$node_name/ibdev"
  echo "$major:$minor" >"$sysfs/class/infiniband_verbs/$node_name/dev"
done
mkdir -p "$sysfs/class/misc/rdma_cm"
echo 10:250 >"$sysfs/class/misc/rdma_cm/dev"
# A VM's flat PCIe tree: rxe_nri's function and a GPU on the one root bus, no
# NUMA node; the GPU as the NVIDIA driver lists it (procfs) and as the device
# plugin gives it to a container (/dev/nvidia0, 195:0, made here: no driver
# needs to be behind it).
pci_function() { # BDF: the function's sysfs directory
  local at="$sysfs/devices/pci0000:00/$1"
  mkdir -p "$at" "$sysfs/bus/pci/devices"
  echo -1 >"$at/numa_node"
  ln -sfn "$at" "$sysfs/bus/pci/devices/$1"
  echo "$at"
}
ln -sfn "$(pci_function 0000:00:07.0)" "$sysfs/class/infiniband_verbs/uverbs7/device"
pci_function 0000:00:06.0 >/dev/null
procfs="$scratch/proc"
mkdir -p "$procfs/driver/nvidia/gpus/0000:00:06.0"
printf 'Model: \t\t NVIDIA H20\nBus Location: \t 0000:00:06.0\nDevice Minor: \t 0\n' \
  >"$procfs/driver/nvidia/gpus/0000:00:06.0/information"
mknod "$scratch/nvidia0" c 195 0
topo_dir="$scratch/topo"

agent_pid=""
agent_registrations() { grep -c "registered with containerd" "$scratch/nri.log" 2>/dev/null || true; }
wait_registered() { # N: waits (10 s) for the agent's Nth registration
  for _ in $(seq 100); do
    (($(agent_registrations) >= $1)) && return 0
    sleep 0.1
  done
  echo "    the agent did not register a ${1}th time; its log:"
  sed 's/^/    /' "$scratch/nri.log" 2>/dev/null
  return 1
}
start_agent() { # its log appended to nri.log; the node file from the environment (nriMemlock)
  ERDMA_CNI_TEST_SYSFS="$sysfs" ERDMA_CNI_TEST_PROCFS="$procfs" "$ERDMA_CNI_NRI" --socket "$scratch/nri.sock" \
    --topology-dir "$topo_dir" >>"$scratch/nri.log" 2>&1 &
  agent_pid=$!
}
stop_agent() {
  kill -TERM "$agent_pid" 2>/dev/null
  wait "$agent_pid" 2>/dev/null || true
  agent_pid=""
}

# probe SANDBOX_ID NAME CNAME [MAJOR:MINOR...]: runs the probe as container
# CNAME of the sandbox NAME; prints cri.py's JSON (id, create_ms, start_ms,
# exit_code, output).
probe() {
  local id="$1" name="$2"
  shift 2
  cri container "$id" "$name" "uid-$name-$$" "$scratch/pods/$name" "/$tag" "$probe_image" "$@"
}
field() { "$py" -c 'import json,sys; v=json.load(sys.stdin)[sys.argv[1]]; print("\n".join(v) if isinstance(v, list) else v)' "$1"; }

start_agent
check "nri: the agent registered with containerd" wait_registered 1
id_g="$(run_sandbox gpu network.alibabacloud.com/erdma=true)" || die "RunPodSandbox (annotated)"
pid_g="$(pause_pid "$id_g")"
id_p="$(run_sandbox web)" || die "RunPodSandbox (plain)"
pid_p="$(pause_pid "$id_p")"
check "nri: the annotated sandbox has the ENI as erdma0 with its rule and table" pod_has_eni "$pid_g"
check "nri: the plain sandbox has no erdma0" eq "$(in_pod "$pid_p" ip -o link show dev erdma0 2>/dev/null || true)" ""

# What erdma-cni's ADD records on a node with RDMA in shared mode: each
# rail's RDMA device (this kernel has none, so the states written here lack it).
give_rdma_device() { # SANDBOX_ID DEVICE: sets rdmaDevice in the sandbox's rail states
  "$py" - "$scratch/erdma-data" "$1" "$2" <<'PY'
import json, os, sys
root, cid, dev = sys.argv[1:4]
done = 0
for d, _, files in os.walk(root):
    for f in files:
        p = os.path.join(d, f)
        try:
            s = json.load(open(p))
        except (ValueError, OSError):
            continue
        # A rail's own state: the group's names no device.
        if isinstance(s, dict) and s.get("containerID") == cid and "podIfName" in s and not s.get("group"):
            s["rdmaDevice"], s["rdmaMode"] = dev, "shared"
            with open(p + ".tmp", "w") as out:
                json.dump(s, out)
            os.chmod(p + ".tmp", os.stat(p).st_mode & 0o7777)
            os.replace(p + ".tmp", p)
            done += 1
sys.exit(0 if done else 1)
PY
}
check "nri: the annotated sandbox's rail state is found and given its RDMA device" give_rdma_device "$id_g" rxe_nri

gpu="$(CRI_DEVICES="$scratch/nvidia0=/dev/nvidia0" probe "$id_g" gpu trainer 231:198)" ||
  die "the annotated sandbox's container"
web="$(probe "$id_p" web server 231:199)" || die "the plain sandbox's container"
echo "$gpu" | field output | sed 's/^/    trainer: /'
echo "$web" | field output | sed 's/^/    server:  /'
host_memlock="$(ulimit -Sl) $(ulimit -Hl)"
[[ $host_memlock == "unlimited unlimited" ]] || host_memlock="$(($(ulimit -Sl) * 1024)) $(($(ulimit -Hl) * 1024))"

check "nri: the annotated sandbox's container exited 0" eq "$(echo "$gpu" | field exit_code)" 0
check "nri: its RLIMIT_MEMLOCK is the node file's nriMemlock ($nri_memlock)" \
  grep -qxF "memlock $nri_memlock_want" <(echo "$gpu" | field output)
check "nri: its NCCL_IB_HCA names its rail's RDMA device, NCCL_TOPO_FILE the topology file" \
  eq "$(echo "$gpu" | field output | grep '^env ' | sort)" "env NCCL_IB_HCA==rxe_nri:1
env NCCL_TOPO_FILE=/run/erdma-cni/nccl-topo.xml"
check "nri: the topology file puts its GPU and its rail under one switch" \
  eq "$(echo "$gpu" | field output | grep '^topo ')" 'topo <system version="1">
topo   <cpu numaid="-1">
topo     <pci busid="ffff:ff:01.0" class="0x060400" link_speed="16 GT/s" link_width="16">
topo       <pci busid="0000:00:07.0"/>
topo       <pci busid="0000:00:06.0"/>
topo     </pci>
topo   </cpu>
topo </system>'
check "nri: the container cannot write the topology file (EROFS)" \
  eq "$(echo "$gpu" | field output | grep '^topo-write ')" "topo-write EROFS"
check "nri: the topology file is on the node under the agent's directory, by sandbox" \
  test -f "$topo_dir/$id_g/$(echo "$gpu" | field id).xml"
# Past the device cgroup, open() reaches the kernel, which has no driver for
# them: ENXIO for a char major nobody registered, ENODEV for a misc minor.
check "nri: it has its rail's uverbs node and rdma_cm, and the device cgroup lets it open them" \
  eq "$(echo "$gpu" | field output | grep '^dev ' | sort)" "dev /dev/infiniband/rdma_cm 10:250 ENODEV
dev /dev/infiniband/uverbs7 231:199 ENXIO"
check "nri: the other device's node is not there, and one it makes is refused by the device cgroup (EPERM)" \
  eq "$(echo "$gpu" | field output | grep '^mknod ')" "mknod 231:198 EPERM"
check "nri: the agent logged what it gave the annotated sandbox's container" \
  grep -qE "pod default/gpu container trainer: RLIMIT_MEMLOCK=[0-9]+ /dev/infiniband/uverbs7 /dev/infiniband/rdma_cm NCCL_IB_HCA==rxe_nri:1 NCCL_TOPO_FILE=/run/erdma-cni/nccl-topo.xml $topo_dir/$id_g/[0-9a-f]+.xml at /run/erdma-cni/nccl-topo.xml \([0-9]+ us\)" "$scratch/nri.log"

check "nri: the plain sandbox's container exited 0" eq "$(echo "$web" | field exit_code)" 0
check "nri: the plain sandbox's container has the runtime's RLIMIT_MEMLOCK, no NCCL_*, no /dev/infiniband" \
  eq "$(echo "$web" | field output | grep -v '^mknod ')" "memlock $host_memlock"
check "nri: the device cgroup refuses the plain sandbox's container the rail's device (EPERM)" \
  eq "$(echo "$web" | field output | grep '^mknod ')" "mknod 231:199 EPERM"
check "nri: the agent logged nothing of the plain sandbox" eq "$(grep -F 'pod default/web ' "$scratch/nri.log" || true)" ""

# Container start with and without the agent, side by side (figures, not a
# verdict: the benchmark's job).
start_times() { # SANDBOX_ID NAME CNAME: create+start wall, ms, of five containers
  local i
  for i in 1 2 3 4 5; do probe "$1" "$2" "$3-$i" | "$py" -c 'import json,sys; r=json.load(sys.stdin); print(r["create_ms"] + r["start_ms"])'; done |
    sort -n | tr '\n' ' '
}
with_g="$(start_times "$id_g" gpu t)" with_p="$(start_times "$id_p" web s)"
stop_agent
without_g="$(start_times "$id_g" gpu u)" without_p="$(start_times "$id_p" web v)"
echo "    container create+start, ms, five each (sorted): annotated pod with the agent: $with_g; without: $without_g"
echo "    plain pod with the agent: $with_p; without: $without_p"
down="$(probe "$id_g" gpu trainer-down)" || die "the annotated sandbox's container with the agent down"
check "nri: with the agent down the annotated sandbox's container starts as without it" \
  eq "$(echo "$down" | field exit_code) $(echo "$down" | field output | grep -v '^mknod ')" "0 memlock $host_memlock"
start_agent
check "nri: the agent started again registers again" wait_registered 2

check "nri: StopPodSandbox of the plain sandbox succeeds" cri stop "$id_p"
check "nri: RemovePodSandbox of the plain sandbox succeeds" cri remove "$id_p"
lifecycle_end "$id_g" gpu
check "nri: the sandbox's topology files went with it" test ! -e "$topo_dir/$id_g"

# The runtime restarts: the agent registers again, and a container of a
# sandbox run after the restart gets what the first did. (The sandboxes go
# first: this containerd keeps their netns mounts in a mount namespace of its
# own, which a restart loses; a node's containerd keeps them in /run/netns.)
kill -TERM "$containerd_pid"
for _ in $(seq 50); do kill -0 "$containerd_pid" 2>/dev/null || break; sleep 0.1; done
start_containerd
check "nri: after containerd restarts the agent registers with it again" wait_registered 3
id_r="$(run_sandbox gpu2 network.alibabacloud.com/erdma=true)" || die "RunPodSandbox (annotated, after the restart)"
pause_pid "$id_r" >/dev/null
check "nri: the new annotated sandbox's rail state is given its RDMA device" give_rdma_device "$id_r" rxe_nri
again="$(probe "$id_r" gpu2 trainer)" || die "the annotated sandbox's container after the restart"
check "nri: its container has the node's RLIMIT_MEMLOCK and NCCL_IB_HCA" \
  eq "$(echo "$again" | field output | grep -E '^(memlock|env) ')" "memlock $nri_memlock_want
env NCCL_IB_HCA==rxe_nri:1"
lifecycle_end "$id_r" gpu2
# Its lines: registrations, adjustments, connections that ended or could
# not be made while containerd restarted; nothing else (no handler error).
check "nri: the agent logged nothing unexpected" eq "$(grep -vE ': registered with containerd |: pod default/gpu2? container [a-z0-9-]+: RLIMIT_MEMLOCK=|: the runtime closed the NRI connection after |: connect to the runtime.s NRI socket ' "$scratch/nri.log" || true)" ""
