# vm-kernels: 7.3
# Issue 6: macvlan and ipvlan children of one ENI stand-in. Two pods get macvlan
# children of eth1 in shared RDMA mode with a Soft-RoCE device on each child, and
# exchange rdma_cm traffic (rping) child to child; eth1 itself never changes. Then
# ipvlan in l2, l3 and l3s (this kernel has ipvlan; the build machines' does not),
# and macvlan and ipvlan refusing to share a parent with a clear error.
# shellcheck shell=bash  # run by /init with bash
# shellcheck source=SCRIPTDIR/../guest/lib.sh
source /vm/lib.sh
# shellcheck source=SCRIPTDIR/../guest/plugin.sh
source /vm/plugin.sh

VM_PLAN=(mode-shared add-a add-b macvlan-kind eth1-untouched rxe-on-child rxe-active diag-port diag-gid
  diag-pairing rping check-a
  mixed-refused del-a del-b children-gone eth1-after no-state ipvlan-l2 ipvlan-l2-mac ipvlan-l2-ping
  ipvlan-l3 ipvlan-l3s ipvlan-del)
if ! need_module rdma_rxe ib_uverbs rdma_ucm macvlan ipvlan; then
  skip_rest "rdma_rxe, macvlan or ipvlan is not built for $(uname -r)"
  exit 0
fi
topo_down
check mode-shared rdma system set netns shared
topo_up 1
ip netns add pa
ip netns add pb
ip -n pa link set lo up
ip -n pb link set lo up

# child MODE OPTIONS_JSON ADDRESS: a standalone config for a child of eth1 with a static address.
child() {
  conf '{"netnsMode":"shared","softRoce":true}' eth1 | jq -c --arg mode "$1" --argjson opts "$2" --arg addr "$3" \
    '. + {mode: $mode, ($mode): $opts, ipam: {type: "static", addresses: [{address: $addr, gateway: "10.9.0.1"}]}}'
}
eth1_before="$(ip -d link show eth1 | sed 's/ promiscuity [0-9]*//'; ip addr show eth1; ip route show dev eth1)"

out="$(cni ADD pa /run/netns/pa net1 "$(child macvlan '{"mode":"bridge"}' 10.9.0.101/24)")"
expect_match add-a '"rdmaDevice":"rxe_pa_net1"' "$out"
check_output add-b '"rdmaDevice":"rxe_pb_net1"' cni ADD pb /run/netns/pb net1 "$(child macvlan '{"mode":"bridge"}' 10.9.0.102/24)"
check_output macvlan-kind 'macvlan mode bridge' in_ns pa ip -d link show net1
expect_eq eth1-untouched "$eth1_before" "$(ip -d link show eth1 | sed 's/ promiscuity [0-9]*//'; ip addr show eth1; ip route show dev eth1)"
check_output rxe-on-child 'rxe_pa_net1/1 .*netdev net1' in_ns pa rdma link show
wait_for 10 sh -c 'ibv_devinfo -d rxe_pa_net1 | grep -q PORT_ACTIVE && ibv_devinfo -d rxe_pb_net1 | grep -q PORT_ACTIVE'
check_output rxe-active PORT_ACTIVE ibv_devinfo -d rxe_pb_net1
# erdma-cni diag from the node, looking at pod a: the port, its GID for the
# pod's address on the child, and the pairing.
check_output diag-port 'port 1: PORT_ACTIVE, link layer Ethernet, netdev net1' erdma-cni diag --netns /run/netns/pa
check_output diag-gid 'gid [0-9]+ 0000:0000:0000:0000:0000:ffff:0a09:0065 RoCE v2 net1' erdma-cni diag --netns /run/netns/pa
check_output diag-pairing 'net1 .* -> rxe_pa_net1 \(by port-netdev\)' erdma-cni diag --netns /run/netns/pa

in_ns pa timeout 90 rping -s -a 10.9.0.101 -p 7175 -C 3 >/tmp/rping-s.out 2>&1 &
check_output rping 'ping data: rdma-ping-2' retry 10 in_ns pb timeout 30 rping -c -v -a 10.9.0.101 -p 7175 -C 3
wait
# CHECK gets the ADD result as prevResult, as runtimes pass it.
check check-a cni CHECK pa /run/netns/pa net1 "$(child macvlan '{"mode":"bridge"}' 10.9.0.101/24 | jq -c --argjson r "$out" '.prevResult = $r')"

# ipvlan on a parent that has macvlan children: refused, explained, nothing left.
ip netns add pc
check_fails_with mixed-refused '"code":[0-9]+.*eth1 cannot take a ipvlan child: it already has children of another kind' \
  cni ADD pc /run/netns/pc net1 "$(child ipvlan '{"mode":"l2"}' 10.9.0.103/24)"

check del-a cni DEL pa /run/netns/pa net1 "$(child macvlan '{"mode":"bridge"}' 10.9.0.101/24)"
check del-b cni DEL pb /run/netns/pb net1 "$(child macvlan '{"mode":"bridge"}' 10.9.0.102/24)"
check_fails children-gone sh -c 'ip -n pa link show net1 || ip -n pb link show net1 || ip -n pc link show net1 || rdma dev | grep -q rxe_p'
expect_eq eth1-after "$eth1_before" "$(ip -d link show eth1 | sed 's/ promiscuity [0-9]*//'; ip addr show eth1; ip route show dev eth1)"
expect_eq no-state "" "$(ls "$DATA/erdma" 2>/dev/null)"

# ipvlan: the child shares eth1's MAC; l2 reaches the gateway.
eth1_mac="$(cat /sys/class/net/eth1/address)"
IC="$(child ipvlan '{"mode":"l2"}' 10.9.0.104/24 | jq -c '.rdma = {"netnsMode":"shared","required":false}')"
cni ADD pa /run/netns/pa net1 "$IC" >/dev/null
check_output ipvlan-l2 'ipvlan +mode l2 ' ip -n pa -d link show net1
check_output ipvlan-l2-mac "link/ether $eth1_mac" in_ns pa ip link show net1
check ipvlan-l2-ping in_ns pa ping -c1 -W3 -I 10.9.0.104 10.9.0.1
cni DEL pa /run/netns/pa net1 "$IC" >/dev/null
for m in l3 l3s; do
  IC="$(child ipvlan "{\"mode\":\"$m\"}" 10.9.0.105/24 | jq -c '.rdma = {"netnsMode":"shared","required":false}')"
  cni ADD pb /run/netns/pb net1 "$IC" >/dev/null
  check_output "ipvlan-$m" "ipvlan +mode $m " ip -n pb -d link show net1
  cni DEL pb /run/netns/pb net1 "$IC" >/dev/null
done
check_fails ipvlan-del sh -c 'ip -n pa link show net1 || ip -n pb link show net1 || ls '"$DATA"'/erdma/* 2>/dev/null | grep -q .'
topo_down
exit 0
