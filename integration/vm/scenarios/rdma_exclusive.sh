# vm-kernels: 7.3
# Issue 3, scenario 2: exclusive mode. Two pods each see exactly their own RDMA device,
# the node sees neither, verbs traffic flows pod to pod (ibv_rc_pingpong -g, ib_write_bw
# -x); DEL returns the RDMA devices before the netdevs; a pod netns deleted without DEL
# leaves a state that DEL cleans up.
# shellcheck shell=bash  # run by /init with bash
# shellcheck source=SCRIPTDIR/../guest/lib.sh
source /vm/lib.sh
# shellcheck source=SCRIPTDIR/../guest/plugin.sh
source /vm/plugin.sh

VM_PLAN=(mode-exclusive add-a add-b a-sees-own b-sees-own node-sees-none node-lists-uverbs rdma-cm-numbers
  pingpong write-bw check-b
  del-a rdma-returned-first eth1-home netns-lost del-after-loss no-state mode-back)
if ! need_module rdma_rxe ib_uverbs rdma_ucm; then
  skip_rest "rdma_rxe is not built for $(uname -r)"
  exit 0
fi
topo_down
# The mode can change only while no other netns exists: before the topology.
check mode-exclusive rdma system set netns exclusive
topo_up 2
ip netns add pa
ip netns add pb
ip -n pa link set lo up
ip -n pb link set lo up
C='{"netnsMode":"exclusive","softRoce":true}'
check add-a cni ADD pa /run/netns/pa net1 "$(conf "$C" eth1)"
check add-b cni ADD pb /run/netns/pb net1 "$(conf "$C" eth2)"
devs() { in_ns "$1" ibv_devices | awk 'NR>2 {print $1}' | sort | tr '\n' ' '; }
expect_eq a-sees-own "rxe_pa_net1 " "$(devs pa)"
expect_eq b-sees-own "rxe_pb_net1 " "$(devs pb)"
expect_eq node-sees-none "" "$(ibv_devices | awk 'NR>2 {print $1}' | grep rxe_p | tr '\n' ' ')"
# What the NRI agent reads in the node's netns (nri/pods.cpp): a pod's uverbs node by its ibdev, in
# exclusive mode too, and rdma_cm's numbers.
uverbs_of() { grep -lx "$1" /sys/class/infiniband_verbs/uverbs*/ibdev 2>/dev/null | head -n1; }
check node-lists-uverbs test -n "$(uverbs_of rxe_pa_net1)"
check rdma-cm-numbers grep -qE '^10:[0-9]+$' /sys/class/misc/rdma_cm/dev
wait_for 10 sh -c 'ip netns exec pa ibv_devinfo | grep -q PORT_ACTIVE && ip netns exec pb ibv_devinfo | grep -q PORT_ACTIVE'

# Verbs with a TCP exchange of QP info, over the plugin's addresses and routes.
in_ns pa timeout 60 ibv_rc_pingpong -g 1 -d rxe_pa_net1 -n 100 >/tmp/pp-s.out 2>&1 &
check_output pingpong 'iters in' retry 10 in_ns pb timeout 30 ibv_rc_pingpong -g 1 -d rxe_pb_net1 -n 100 10.9.0.11
wait
in_ns pa timeout 60 ib_write_bw -x 1 -d rxe_pa_net1 -n 200 >/tmp/bw-s.out 2>&1 &
check_output write-bw 'BW average' retry 10 in_ns pb timeout 60 ib_write_bw -x 1 -d rxe_pb_net1 -n 200 10.9.0.11
wait
check check-b cni CHECK pb /run/netns/pb net1 "$(conf "$C" eth2)"

: >"$LOG"
check del-a cni DEL pa /run/netns/pa net1 "$(conf "$C" eth1)"
# The journal's inverse order: the RDMA device goes home before the netdev.
check_output rdma-returned-first 'RDMA device rxe_pa_net1 returned to the node(.|\n)*moved net1 back to the node as eth1' \
  sh -c "tr '\n' ' ' <$LOG"
check_output eth1-home 'inet 10.9.0.11/24' ip addr show eth1

# Pod b's netns dies without DEL: the veth dies with it, its rxe with the veth.
ip netns del pb
check netns-lost test -e "$DATA/erdma/@pb@net1"
check del-after-loss cni DEL pb "" net1 "$(conf "$C" eth2)"
expect_eq no-state "" "$(ls "$DATA/erdma" 2>/dev/null)"
topo_down
check mode-back rdma system set netns shared
exit 0
