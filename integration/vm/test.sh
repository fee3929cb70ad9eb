#!/usr/bin/env bash
# test.sh [SCENARIO...]: every VM scenario on the kernels it names, one VM per kernel.
#
# A scenario names its kernels in a header line (default: 7.3):
#   # vm-kernels: 7.3 6.12
# A scenario with `# vm-numa: 2` (two NUMA nodes with PCI NICs, run.sh) gets a VM of its
# own per kernel, shared only with scenarios asking for the same: its NICs are not on
# the plain machine the others expect.
# With no arguments, all of integration/vm/scenarios/*.sh run. The last line is the
# combined verdict, `N passed, N failed[, N skipped]`; exit 0 when nothing failed,
# 77 when no VM could run at all (qemu missing), 1 otherwise.
#
# VM_JOBS=1 boots the kernels one after the other, streaming their consoles; by default
# they boot side by side (the guests wait on timers much of the time, so two TCG VMs on
# two cores take about as long as one: docs/vm.md).
# Everything run.sh reads (VM_TIMEOUT, ERDMA_CNI, BUILD_DIR, VM_CACHE, ...) applies.
set -uo pipefail

# shellcheck source=SCRIPTDIR/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if (($#)); then
  scenarios=("$@")
else
  scenarios=("$VM_HERE"/scenarios/*.sh)
fi

# by_kernel[VM]: the absolute paths of the scenarios of one VM, a line each. VM is
# the kernel series, with "@numa2" for the two-NUMA-node machine.
declare -A by_kernel=()
for s in "${scenarios[@]}"; do
  [[ -f $s ]] || { echo "test: no scenario file $s" >&2; exit 2; }
  kernels="$(sed -nE 's/^#[[:space:]]*vm-kernels:[[:space:]]*//p' "$s" | head -n1)"
  numa="$(sed -nE 's/^#[[:space:]]*vm-numa:[[:space:]]*([0-9]+).*/\1/p' "$s" | head -n1)"
  for k in ${kernels:-7.3}; do
    ((${numa:-1} > 1)) && k+="@numa$numa"
    by_kernel[$k]+="$(realpath "$s")"$'\n'
  done
done

mapfile -t series < <(printf '%s\n' "${!by_kernel[@]}" | sort -rV)
outdir="$(mktemp -d "${TMPDIR:-/tmp}/vm-test.XXXXXX")"
trap 'rm -rf "$outdir"' EXIT

start=$SECONDS
# Install what is missing once, before VMs start side by side (run.sh checks again).
vm_ensure_packages || true
if [[ ${VM_JOBS:-2} -gt 1 && ${#series[@]} -gt 1 ]]; then
  declare -A pid_of=()
  for k in "${series[@]}"; do
    mapfile -t files <<<"${by_kernel[$k]%$'\n'}"
    "$VM_HERE/run.sh" "${k%@*}" "${files[@]}" >"$outdir/$k.out" 2>&1 &
    pid_of[$k]=$!
  done
  # A signal interrupts `wait`; pass it on to the runs (each stops its own VM).
  trap 'kill -TERM "${pid_of[@]}" 2>/dev/null; wait; exit 130' INT TERM
  for k in "${series[@]}"; do
    wait "${pid_of[$k]}"
    echo $? >"$outdir/$k.rc"
  done
  trap - INT TERM
  for k in "${series[@]}"; do cat "$outdir/$k.out"; done
else
  for k in "${series[@]}"; do
    # Stream this kernel's run while it goes, and keep a copy for the tally.
    mapfile -t files <<<"${by_kernel[$k]%$'\n'}"
    "$VM_HERE/run.sh" "${k%@*}" "${files[@]}" 2>&1 | tee "$outdir/$k.out"
    echo "${PIPESTATUS[0]}" >"$outdir/$k.rc"
  done
fi

passed=0 failed=0 skipped=0 ran=0 rc=0
for k in "${series[@]}"; do
  krc="$(cat "$outdir/$k.rc")"
  last="$(tail -n1 "$outdir/$k.out")"
  if ((krc == 77)); then
    echo "== $k: SKIPPED (${last})"
    continue
  fi
  ran=$((ran + 1))
  if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)?$ ]]; then
    passed=$((passed + BASH_REMATCH[1]))
    failed=$((failed + BASH_REMATCH[2]))
    skipped=$((skipped + ${BASH_REMATCH[4]:-0}))
  else
    echo "== $k: run.sh gave no verdict line (exit $krc)"
    failed=$((failed + 1))
  fi
  ((krc != 0)) && rc=1
  echo "== $k: $last"
done
echo "== VM tests: ${#series[@]} VM(s), $((SECONDS - start))s"
((failed > 0)) && rc=1
if ((ran == 0)); then
  echo "SKIPPED: no VM could run (qemu-system-x86_64 missing)"
  exit 77
fi
summary="$passed passed, $failed failed"
((skipped > 0)) && summary+=", $skipped skipped"
echo "$summary"
exit "$rc"
