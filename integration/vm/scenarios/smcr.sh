# vm-kernels: 6.12 7.3
# Issue 4, VM part: SMC-R in the pod on a kernel with SMC (Debian's 6.12; 7.3 is built
# without CONFIG_SMC and skips everything, saying so).
#  1. The default smcr config asks for net.smc.tcp2smc, which only Alibaba Cloud Linux 3
#     has: ADD fails with code 114 naming it, and leaves nothing behind.
#  2. Two pods get their ENI stand-ins by move mode with Soft-RoCE and the annotation in
#     runtimeConfig: the UEID is in the kernel's own dump from inside the pod netns, the
#     pod pnet tables stay empty (with pnetId auto the interface is the RDMA device's own
#     netdev, which the kernel pairs without PNET IDs), the sysctls are set in the pod
#     netns only, CHECK passes (and fails once a sysctl drifts).
#  3. An IPPROTO_SMC connection pod b -> pod a, seen through SMC sock_diag in the pods,
#     negotiates SMC-R with what the plugin configures.
#  4. DEL restores: pnet tables empty, sysctls back, the UEID gone after the last DEL.
#  5. Mode none (chained after a primary plugin, annotation through args.cni): prevResult
#     passes through unchanged, the pnet entry goes on eth0, nothing moves, DEL cleans.
# shellcheck shell=bash  # run by /init with bash
# shellcheck source=SCRIPTDIR/../guest/lib.sh
source /vm/lib.sh
# shellcheck source=SCRIPTDIR/../guest/plugin.sh
source /vm/plugin.sh

VM_PLAN=(modules default-code-114 default-names-tcp2smc default-untouched default-no-rxe default-no-state
  default-pod-clean annotation-bogus add-a add-b pnet-a pnet-b pnet-root-untouched ueid-a ueid-b
  wmem-a wmem-b wmem-root ipv6-off-a ipv6-off-b ipv6-on-root check-a check-b check-drift
  conn1-data conn1-client-diag conn1-server-diag del-a ueid-stays del-b ueid-gone pnet-clean-a pnet-clean-b wmem-back ipv6-back
  eth-home no-rxe no-state none-add none-passthrough none-pnet none-nothing-moved none-wmem
  none-ipv6-off none-check none-del none-pnet-clean none-sysctls-back none-eth0-stays none-no-state)
if ! modinfo smc >/dev/null 2>&1; then
  echo "VM-INFO smcr: $(uname -r) has no smc module (Debian builds 7.3 without CONFIG_SMC); SMC-R is tested on 6.12"
  skip_rest "smc is not built for $(uname -r)"
  exit 0
fi
if ! check modules modprobe -a smc smc_diag rdma_rxe ib_uverbs rdma_ucm crc32_generic; then
  skip_rest "a module is missing"
  exit 0
fi

info() { echo "VM-INFO smcr: $*"; }
pnet_id_of() { tr -d ':\n' <"/sys/class/net/$1/address" | tr a-f A-F; }
sysctl_in() { # sysctl_in NS|root NAME: the value in that netns
  local f="/proc/sys/${2//.//}"
  if [[ $1 == root ]]; then cat "$f"; else in_ns "$1" cat "$f"; fi
}

topo_down
rdma system set netns shared
topo_up 2
for ns in pa pb; do
  ip netns add "$ns"
  ip -n "$ns" link set lo up
done
id_a="$(pnet_id_of eth1)"
id_b="$(pnet_id_of eth2)"
root_wmem="$(sysctl_in root net.smc.wmem)"
pod_wmem="$(sysctl_in pa net.smc.wmem)" # a new netns's own default
wmem=1048576
[[ $root_wmem == "$wmem" || $pod_wmem == "$wmem" ]] && wmem=2097152
info "PNET IDs: eth1 $id_a, eth2 $id_b; net.smc.wmem root $root_wmem, new netns $pod_wmem, configured $wmem"
RDMA='{"netnsMode":"shared","softRoce":true}'
SMCR="{\"sysctls\":{\"net.smc.wmem\":\"$wmem\"},\"ueid\":\"ERDMA-CNI-TEST\",\"onUnsupported\":\"error\"}"
conf_a="$(conf_smcr "$RDMA" eth1 "$SMCR")"
conf_b="$(conf_smcr "$RDMA" eth2 "$SMCR")"
with_prev() { jq -c --argjson p "$2" '. + {prevResult: $p}' <<<"$1"; }

# --- 1. the default config: tcp2smc is not in this kernel ------------------------------
before="$(ip -4 addr show eth1; ip -4 route)"
check_fails_with default-code-114 '"code":114' cni ADD pa /run/netns/pa net1 "$(conf_smcr "$RDMA" eth1 '{}')"
expect_match default-names-tcp2smc 'net\.smc\.tcp2smc.*Alibaba Cloud Linux 3' "$(last_output)"
info "default config: $(last_output)"
expect_eq default-untouched "$before" "$(ip -4 addr show eth1; ip -4 route)"
expect_eq default-no-rxe "" "$(rdma dev | grep rxe_pa)"
expect_eq default-no-state "" "$(ls "$DATA/erdma" 2>/dev/null)"
expect_eq default-pod-clean "0 $pod_wmem lo" \
  "$(sysctl_in pa net.ipv6.conf.all.disable_ipv6) $(sysctl_in pa net.smc.wmem) $(ip -n pa -o link | awk -F': ' '{print $2}' | xargs)$(in_ns pa smc_dump pnet)$(smc_dump ueid)"
check_fails_with annotation-bogus '"code":7.*erdma-smcr' cni ADD pa /run/netns/pa net1 "$(conf_smcr "$RDMA" eth1 "$SMCR" yes)"

# --- 2. two pods ----------------------------------------------------------------------
out_a="$(cni ADD pa /run/netns/pa net1 "$conf_a")"
expect_match add-a '"rdmaDevice":"rxe_pa_net1"' "$out_a" || tail -n 30 "$LOG"
out_b="$(cni ADD pb /run/netns/pb net1 "$conf_b")"
expect_match add-b '"rdmaDevice":"rxe_pb_net1"' "$out_b" || tail -n 30 "$LOG"
expect_eq pnet-a "" "$(in_ns pa smc_dump pnet 2>&1)"
expect_eq pnet-b "" "$(in_ns pb smc_dump pnet 2>&1)"
expect_eq pnet-root-untouched "" "$(smc_dump pnet)"
check_output ueid-a '^ERDMA-CNI-TEST$' in_ns pa smc_dump ueid
check_output ueid-b '^ERDMA-CNI-TEST$' in_ns pb smc_dump ueid
expect_eq wmem-a "$wmem" "$(sysctl_in pa net.smc.wmem)"
expect_eq wmem-b "$wmem" "$(sysctl_in pb net.smc.wmem)"
expect_eq wmem-root "$root_wmem" "$(sysctl_in root net.smc.wmem)"
expect_eq ipv6-off-a 1 "$(sysctl_in pa net.ipv6.conf.all.disable_ipv6)"
expect_eq ipv6-off-b 1 "$(sysctl_in pb net.ipv6.conf.all.disable_ipv6)"
expect_eq ipv6-on-root 0 "$(sysctl_in root net.ipv6.conf.all.disable_ipv6)"
check check-a cni CHECK pa /run/netns/pa net1 "$(with_prev "$conf_a" "$out_a")"
check check-b cni CHECK pb /run/netns/pb net1 "$(with_prev "$conf_b" "$out_b")"
in_ns pb sh -c "echo $pod_wmem >/proc/sys/net/smc/wmem"
check_fails_with check-drift 'net\.smc\.wmem' cni CHECK pb /run/netns/pb net1 "$(with_prev "$conf_b" "$out_b")"
in_ns pb sh -c "echo $wmem >/proc/sys/net/smc/wmem"

# --- 3. an IPPROTO_SMC connection pod b -> pod a --------------------------------------
wait_for 10 sh -c 'ibv_devinfo -d rxe_pa_net1 | grep -q PORT_ACTIVE && ibv_devinfo -d rxe_pb_net1 | grep -q PORT_ACTIVE'
# smc_round TAG: server in pa, client in pb, 64 KiB each way, both held open while
# `smc_dump diag` looks from inside each pod. Sets diag_a, diag_b, cli_out.
smc_round() {
  local tag="$1" srv cli
  : >/tmp/smc-srv.out
  : >/tmp/smc-cli.out
  in_ns pa timeout 120 smc_conn server 7000 8 >/tmp/smc-srv.out 2>&1 &
  srv=$!
  wait_for 10 grep -q listening /tmp/smc-srv.out
  in_ns pb timeout 120 smc_conn client 10.9.0.11 7000 8 65536 >/tmp/smc-cli.out 2>&1 &
  cli=$!
  wait_for 90 grep -q -e exchanged -e ': ' -e 'timed out' /tmp/smc-cli.out
  diag_b="$(in_ns pb smc_dump diag 2>&1)"
  diag_a="$(in_ns pa smc_dump diag 2>&1)"
  wait "$cli"
  wait "$srv"
  cli_out="$(cat /tmp/smc-cli.out)"
  info "$tag client: $cli_out; server: $(tr '\n' ' ' </tmp/smc-srv.out)"
  while read -r l; do info "$tag pod b diag: $l"; done <<<"$diag_b"
  while read -r l; do info "$tag pod a diag: $l"; done <<<"$diag_a"
}
# Negotiated: SMC-R, or a fallback that only happens once the CLC handshake agreed on
# SMC-R and the link was being set up (0x0201xxxx: TIMEOUT_CL/TIMEOUT_AL, on either side).
# 6.12's rxe cannot carry RDMA from inside a pod netns, so the latter is what 6.12 shows.
SMCR_NEGOTIATED='mode=SMCR|mode=TCP .*(fallback|peer_diagnosis)=0x0201'
smc_round conn1
expect_match conn1-data 'exchanged 65536 bytes' "$cli_out"
expect_match conn1-client-diag "$SMCR_NEGOTIATED" "$(grep 'dport=7000' <<<"$diag_b")"
expect_match conn1-server-diag "$SMCR_NEGOTIATED" "$(grep 'sport=7000' <<<"$diag_a" | grep -v state=LISTEN)"

# --- 4. DEL ---------------------------------------------------------------------------
check del-a cni DEL pa /run/netns/pa net1 "$conf_a"
check_output ueid-stays '^ERDMA-CNI-TEST$' smc_dump ueid
check del-b cni DEL pb /run/netns/pb net1 "$conf_b"
expect_eq ueid-gone "" "$(smc_dump ueid)"
expect_eq pnet-clean-a "" "$(in_ns pa smc_dump pnet 2>&1)"
expect_eq pnet-clean-b "" "$(in_ns pb smc_dump pnet 2>&1)"
expect_eq wmem-back "$pod_wmem $pod_wmem $root_wmem" \
  "$(sysctl_in pa net.smc.wmem) $(sysctl_in pb net.smc.wmem) $(sysctl_in root net.smc.wmem)"
expect_eq ipv6-back "0 0" \
  "$(sysctl_in pa net.ipv6.conf.all.disable_ipv6) $(sysctl_in pb net.ipv6.conf.all.disable_ipv6)"
expect_eq eth-home "inet 10.9.0.11/24 inet 10.9.0.12/24" \
  "$(ip -4 -o addr show eth1 | awk '{print $3, $4}') $(ip -4 -o addr show eth2 | awk '{print $3, $4}')"
expect_eq no-rxe "" "$(rdma dev | grep rxe_p)"
expect_eq no-state "" "$(ls "$DATA/erdma" 2>/dev/null)"

# --- 5. mode none ---------------------------------------------------------------------
# The primary plugin's work, by hand: a veth eth0 in the pod (Terway stand-in).
ip netns add pn
ip -n pn link set lo up
ip link add vt0 type veth peer name eth0 netns pn
ip link set vt0 up
ip -n pn addr add 198.18.5.2/24 dev eth0
ip -n pn link set eth0 up
pn_mac="$(in_ns pn cat /sys/class/net/eth0/address)"
PREV="{\"cniVersion\":\"1.1.0\",\"interfaces\":[{\"name\":\"eth0\",\"mac\":\"$pn_mac\",\"sandbox\":\"/run/netns/pn\"}],\"ips\":[{\"address\":\"198.18.5.2/24\",\"interface\":0}]}"
# The node's eRDMA device stand-in: rxe on eth1, for the RDMA checks of shared mode.
rdma link add rxe_node type rxe netdev eth1
wait_for 10 sh -c 'ibv_devinfo -d rxe_node | grep -q PORT_ACTIVE'
conf_none="$(conf '{"netnsMode":"shared"}' eth1 | jq -c --argjson p "$PREV" --arg w "$wmem" \
  '. + {mode: "none", smcr: {sysctls: {"net.smc.wmem": $w}}, args: {cni: {"erdma-smcr": "true"}}, prevResult: $p}')"
before="$(ip -o link show eth1; ip -4 addr show eth1)"
: >"$LOG"
out="$(cni ADD pn /run/netns/pn eth0 "$conf_none")"
rc=$?
if ((rc == 0)); then ok none-add; else fail none-add "exit $rc: $out"; fi
expect_eq none-passthrough "$(jq -S -c . <<<"$PREV")" "$(jq -S -c . <<<"$out" 2>&1)"
check_output none-pnet "^pnet $id_a eth eth0\$" in_ns pn smc_dump pnet
expect_eq none-nothing-moved "$before|eth0 lo" \
  "$(ip -o link show eth1; ip -4 addr show eth1)|$(ip -n pn -o link | awk -F': ' '{print $2}' | sed 's/@.*//' | sort | xargs)"
expect_eq none-wmem "$wmem" "$(sysctl_in pn net.smc.wmem)"
expect_eq none-ipv6-off 1 "$(sysctl_in pn net.ipv6.conf.all.disable_ipv6)"
info "mode none: pod pnet table: $(in_ns pn smc_dump pnet | tr '\n' ';') root pnet table: $(smc_dump pnet | tr '\n' ';')"
info "mode none log: $(grep -i -e smc -e pnet "$LOG" | sed 's/^[^ ]* [^ ]* [^ ]* [^:]*: //' | tr '\n' ';' | cut -c1-600)"
check none-check cni CHECK pn /run/netns/pn eth0 "$conf_none"
check none-del cni DEL pn /run/netns/pn eth0 "$conf_none"
expect_eq none-pnet-clean "" "$(in_ns pn smc_dump pnet 2>&1)"
expect_eq none-sysctls-back "$pod_wmem 0" \
  "$(sysctl_in pn net.smc.wmem) $(sysctl_in pn net.ipv6.conf.all.disable_ipv6)"
check_output none-eth0-stays 'inet 198\.18\.5\.2/24' ip -n pn addr show eth0
expect_eq none-no-state "" "$(ls "$DATA/erdma" 2>/dev/null)"
rdma link delete rxe_node 2>/dev/null
ip link del vt0 2>/dev/null
topo_down
exit 0
