# vm-kernels: 7.3 6.12
# smoke: proves the VM harness itself: the plugin runs, Soft-RoCE works (device, port,
# netns mode, rdma_cm traffic between two netns in shared mode) and SMC is there.
# What a kernel lacks is a skip, detected, never assumed: Debian's 7.3 is built without
# SMC; 6.12's rxe does not work from inside a netns (notes: kernel.md).
# shellcheck shell=bash  # run by /init with bash
# shellcheck source=SCRIPTDIR/../guest/lib.sh
source /vm/lib.sh

kmajor="$(uname -r | cut -d. -f1)"
ADDR_A=198.18.7.1 ADDR_B=198.18.7.2 # RFC 2544 benchmarking range: never a real host

# --- the plugin ----------------------------------------------------------------------
check_output plugin-version '[0-9]+\.[0-9]+' erdma-cni --version
check_output plugin-cni-version '"supportedVersions"' env CNI_COMMAND=VERSION erdma-cni

# --- Soft-RoCE in the root netns -------------------------------------------------------
VM_PLAN=(modprobe-rdma rdma-netns-mode set-exclusive is-exclusive set-shared is-shared
  rxe-add rxe-listed rxe-port-netdev rxe-port-active rxe-del)
if ! modinfo rdma_rxe >/dev/null 2>&1; then
  skip_rest "rdma_rxe is not built for $(uname -r)"
else
  check modprobe-rdma modprobe -a rdma_rxe ib_uverbs rdma_ucm
  check_output rdma-netns-mode '^netns (shared|exclusive)' rdma system
  # The mode can change only while no netns but the root one exists: do it first.
  check set-exclusive rdma system set netns exclusive
  check_output is-exclusive '^netns exclusive' rdma system
  check set-shared rdma system set netns shared
  check_output is-shared '^netns shared' rdma system

  ip link add veth0 type veth peer name veth1
  ip link set veth0 up
  ip link set veth1 up
  check rxe-add rdma link add rxe0 type rxe netdev veth0
  check_output rxe-listed '(^|[[:space:]])rxe0:' rdma dev
  check_output rxe-port-netdev 'rxe0/1 .*netdev veth0' rdma link show
  # The port turns ACTIVE once the netdev has carrier; give it a moment.
  wait_for 10 sh -c 'ibv_devinfo -d rxe0 | grep -q PORT_ACTIVE'
  check_output rxe-port-active 'state:[[:space:]]+PORT_ACTIVE' ibv_devinfo -d rxe0
  check rxe-del rdma link delete rxe0
  ip link del veth0 2>/dev/null
fi

# --- netns mode is locked while another netns exists (7.3 and earlier alike) ----------
VM_PLAN=(mode-busy-with-netns)
if modinfo rdma_rxe >/dev/null 2>&1; then
  ip netns add smoke-other
  check_fails_with mode-busy-with-netns 'busy|Busy|EBUSY' rdma system set netns exclusive
  ip netns del smoke-other
else
  skip_rest "no RDMA in $(uname -r)"
fi

# --- rdma_cm traffic between two netns, shared mode, rxe created inside each ----------
VM_PLAN=(pods-rxe-a pods-rxe-b pods-port-active rping rping-server rxe-counters)
if ! modinfo rdma_rxe >/dev/null 2>&1; then
  skip_rest "rdma_rxe is not built for $(uname -r)"
elif ((kmajor < 7)); then
  skip_rest "rxe inside a netns needs the 7.x kernel (kernel.md: $(uname -r)'s rxe does not work from a pod netns)"
else
  ip netns add pa
  ip netns add pb
  ip link add va netns pa type veth peer name vb netns pb
  in_ns pa ip addr add "$ADDR_A/24" dev va
  in_ns pb ip addr add "$ADDR_B/24" dev vb
  in_ns pa ip link set va up
  in_ns pb ip link set vb up
  in_ns pa ip link set lo up
  in_ns pb ip link set lo up
  check pods-rxe-a in_ns pa rdma link add rxe_a type rxe netdev va
  check pods-rxe-b in_ns pb rdma link add rxe_b type rxe netdev vb
  wait_for 10 sh -c 'ibv_devinfo -d rxe_a | grep -q PORT_ACTIVE && ibv_devinfo -d rxe_b | grep -q PORT_ACTIVE'
  check_output pods-port-active 'PORT_ACTIVE' in_ns pa ibv_devinfo -d rxe_a
  # `timeout` goes inside `ip netns exec` (kernel.md); the server serves one client.
  # rdma_cm listeners do not show in ss: the client retries until the server is up.
  in_ns pa timeout 90 rping -s -a "$ADDR_A" -p 7174 -C 3 >/tmp/rping-server.out 2>&1 &
  server=$!
  check_output rping 'ping data: rdma-ping-2' retry 10 in_ns pb timeout 30 rping -c -v -a "$ADDR_A" -p 7174 -C 3
  wait "$server"
  rc=$?
  if ((rc == 0)); then ok rping-server; else
    fail rping-server "rping -s exited with $rc"
    sed 's/^/    | /' /tmp/rping-server.out | tail -n 10
  fi
  sent="$(cat /sys/class/infiniband/rxe_b/ports/1/hw_counters/sent_pkts 2>/dev/null || echo 0)"
  rcvd="$(cat /sys/class/infiniband/rxe_a/ports/1/hw_counters/rcvd_pkts 2>/dev/null || echo 0)"
  if ((sent > 0 && rcvd > 0)); then ok rxe-counters; else
    fail rxe-counters "RoCE packet counters did not rise (rxe_b sent $sent, rxe_a received $rcvd)"
  fi
  in_ns pa rdma link delete rxe_a 2>/dev/null
  in_ns pb rdma link delete rxe_b 2>/dev/null
  ip netns del pa
  ip netns del pb
fi

# --- SMC --------------------------------------------------------------------------------
VM_PLAN=(modprobe-smc smc-socket-ipproto smc-socket-af-smc smc-sysctls smc-sysctls-per-netns)
if ! modinfo smc >/dev/null 2>&1; then
  skip_rest "smc is not built for $(uname -r)"
else
  check modprobe-smc modprobe -a smc smc_diag
  check_output smc-socket-ipproto '^ok' smc_probe inet
  check_output smc-socket-af-smc '^ok' smc_probe smc
  # shellcheck disable=SC2012 # kernel sysctl names, listed as the netns's are below
  root_knobs="$(ls /proc/sys/net/smc 2>/dev/null | tr '\n' ' ')"
  expect_match smc-sysctls '(^| )wmem( |$)' "$root_knobs"
  ip netns add smc-ns
  ns_knobs="$(ip netns exec smc-ns ls /proc/sys/net/smc 2>/dev/null | tr '\n' ' ')"
  expect_eq smc-sysctls-per-netns "$root_knobs" "$ns_knobs"
  ip netns del smc-ns
fi
exit 0
