# vm-kernels: 7.3 6.12
# Issue 3, scenario 3: errors on a real kernel, each with nothing left behind.
#  - switching the RDMA netns mode (the journal's first step, rdma-mode) while a netns exists
#    (EBUSY): code 111, boot-time fix, the mode as it was;
#  - a device whose driver refuses to move (6.12's rxe: EOPNOTSUPP): code 113.
# shellcheck shell=bash  # run by /init with bash
# shellcheck source=SCRIPTDIR/../guest/lib.sh
source /vm/lib.sh
# shellcheck source=SCRIPTDIR/../guest/plugin.sh
source /vm/plugin.sh

kmajor="$(uname -r | cut -d. -f1)"
VM_PLAN=(ebusy-code ebusy-fix ebusy-untouched ebusy-no-state ebusy-mode eopnotsupp-code eopnotsupp-untouched
  eopnotsupp-no-rxe eopnotsupp-no-state)
if ! need_module rdma_rxe ib_uverbs rdma_ucm; then
  skip_rest "rdma_rxe is not built for $(uname -r)"
  exit 0
fi
topo_down
rdma system set netns shared
topo_up 1
ip netns add pa
before="$(ip -4 addr show eth1; ip -4 route)"
out="$(cni ADD pa /run/netns/pa net1 "$(conf '{"netnsMode":"exclusive","setSystemMode":true,"softRoce":true}')")"
expect_match ebusy-code '"code":111' "$out"
expect_match ebusy-fix 'EBUSY.*netns_mode=0' "$out"
expect_eq ebusy-untouched "$before" "$(ip -4 addr show eth1; ip -4 route)"
expect_eq ebusy-no-state "" "$(ls "$DATA/erdma" 2>/dev/null)"
expect_match ebusy-mode 'netns shared' "$(rdma system show netns)"
topo_down

if ((kmajor >= 7)); then
  skip eopnotsupp-code "$(uname -r)'s rxe can move between netns; the refusal is shown on 6.12"
  skip eopnotsupp-untouched "see eopnotsupp-code"
  skip eopnotsupp-no-rxe "see eopnotsupp-code"
  skip eopnotsupp-no-state "see eopnotsupp-code"
else
  rdma system set netns exclusive
  topo_up 1
  ip netns add pa
  before="$(ip -4 addr show eth1; ip -4 route)"
  out="$(cni ADD pa /run/netns/pa net1 "$(conf '{"netnsMode":"exclusive","softRoce":true}')")"
  expect_match eopnotsupp-code '"code":113' "$out"
  expect_eq eopnotsupp-untouched "$before" "$(ip -4 addr show eth1; ip -4 route)"
  expect_eq eopnotsupp-no-rxe "" "$(rdma dev | grep rxe_pa)"
  expect_eq eopnotsupp-no-state "" "$(ls "$DATA/erdma" 2>/dev/null)"
  topo_down
  rdma system set netns shared
fi
exit 0
