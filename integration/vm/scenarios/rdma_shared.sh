# vm-kernels: 7.3
# Issue 3, scenario 1 and 4: shared mode. Two pods each get their own ENI stand-in from
# erdma-cni in move mode with Soft-RoCE on, and exchange rdma_cm traffic (rping,
# ib_write_bw -R) through the plugin's addresses and policy routes; the RoCE packet
# counters rise on both devices. Pairing by the port's netdev is shown on a real rxe.
# shellcheck shell=bash  # run by /init with bash
# shellcheck source=SCRIPTDIR/../guest/lib.sh
source /vm/lib.sh
# shellcheck source=SCRIPTDIR/../guest/plugin.sh
source /vm/plugin.sh

VM_PLAN=(mode-shared add-a add-b result-names-rxe rxe-in-a rxe-active policy-rule rping ib-write-bw
  counters-a counters-b check-a del-a del-b eth1-home rxe-gone no-state pair-port-netdev)
if ! need_module rdma_rxe ib_uverbs rdma_ucm; then
  skip_rest "rdma_rxe is not built for $(uname -r)"
  exit 0
fi
topo_down
check mode-shared rdma system set netns shared
topo_up 2
ip netns add pa
ip netns add pb
ip -n pa link set lo up
ip -n pb link set lo up
C='{"netnsMode":"shared","softRoce":true}'
out="$(cni ADD pa /run/netns/pa net1 "$(conf "$C" eth1)")"
expect_match add-a '"name":"net1"' "$out"
expect_match result-names-rxe '"rdmaDevice":"rxe_pa_net1".*"sandbox":"/run/netns/pa"|"sandbox":"/run/netns/pa".*"rdmaDevice":"rxe_pa_net1"|"rdmaDevice":"rxe_pa_net1"' "$out"
check_output add-b '"rdmaDevice":"rxe_pb_net1"' cni ADD pb /run/netns/pb net1 "$(conf "$C" eth2)"
check_output rxe-in-a 'rxe_pa_net1/1 .*netdev net1' in_ns pa rdma link show
wait_for 10 sh -c 'ibv_devinfo -d rxe_pa_net1 | grep -q PORT_ACTIVE && ibv_devinfo -d rxe_pb_net1 | grep -q PORT_ACTIVE'
check_output rxe-active PORT_ACTIVE ibv_devinfo -d rxe_pb_net1
check_output policy-rule '^200:.*from 10.9.0.11 lookup 200' in_ns pa ip rule

in_ns pa timeout 90 rping -s -a 10.9.0.11 -p 7174 -C 3 >/tmp/rping-s.out 2>&1 &
check_output rping 'ping data: rdma-ping-2' retry 10 in_ns pb timeout 30 rping -c -v -a 10.9.0.11 -p 7174 -C 3
wait
in_ns pa timeout 90 ib_write_bw -R -d rxe_pa_net1 -n 200 -s 65536 >/tmp/bw-s.out 2>&1 &
check_output ib-write-bw 'BW average' retry 10 in_ns pb timeout 60 ib_write_bw -R -d rxe_pb_net1 -n 200 -s 65536 10.9.0.11
wait
sent="$(cat /sys/class/infiniband/rxe_pb_net1/ports/1/hw_counters/sent_pkts 2>/dev/null || echo 0)"
rcvd="$(cat /sys/class/infiniband/rxe_pa_net1/ports/1/hw_counters/rcvd_pkts 2>/dev/null || echo 0)"
if ((sent > 100)); then ok counters-b; else fail counters-b "rxe_pb_net1 sent only $sent packets"; fi
if ((rcvd > 100)); then ok counters-a; else fail counters-a "rxe_pa_net1 received only $rcvd packets"; fi

check check-a cni CHECK pa /run/netns/pa net1 "$(conf "$C" eth1)"
check del-a cni DEL pa /run/netns/pa net1 "$(conf "$C" eth1)"
check del-b cni DEL pb /run/netns/pb net1 "$(conf "$C" eth2)"
check_output eth1-home 'inet 10.9.0.11/24' ip addr show eth1
check_fails rxe-gone sh -c 'rdma dev | grep -q rxe_p'
expect_eq no-state "" "$(ls "$DATA/erdma" 2>/dev/null)"

# Pairing by the port's netdev: an rxe made on eth1 on the node selects eth1.
rdma link add rxe_node type rxe netdev eth1
wait_for 10 sh -c 'ibv_devinfo -d rxe_node | grep -q PORT_ACTIVE'
PC="{\"cniVersion\":\"1.0.0\",\"name\":\"erdma\",\"type\":\"erdma-cni\",\"device\":{\"rdma\":\"rxe_node\"},\"rdma\":{\"netnsMode\":\"shared\"},\"dataDir\":\"$DATA\",\"logFile\":\"$LOG\"}"
: >"$LOG"
cni ADD pa /run/netns/pa net1 "$PC" >/dev/null
check_output pair-port-netdev 'rxe_node.*(selects netdev eth1|pairs with eth1) .*by port-netdev' cat "$LOG"
cni DEL pa /run/netns/pa net1 "$PC" >/dev/null
rdma link delete rxe_node 2>/dev/null
topo_down
exit 0
