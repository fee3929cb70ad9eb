# lib.sh: assertions for VM scenarios.   Use:  source /vm/lib.sh
#
# Every assertion prints one verdict line and records it for /init's count:
#   VM-TEST ok <scenario>/<name>
#   VM-TEST fail <scenario>/<name>: <reason>      (followed by the command's output, indented)
#   VM-TEST skip <scenario>/<name>: <feature missing>
# Names are short and must not contain ": ". Each assertion returns 0 when it passed
# (or skipped) and 1 when it failed, so a scenario can stop early:
#   check rxe-added rdma link add rxe0 type rxe netdev veth0 || { skip_rest "no rxe0"; exit 0; }
# Do not use `set -e` in a scenario: a failed check is a verdict, not a crash. A
# scenario that exits non-zero or reports nothing is counted as one more failure.
#
#   check NAME CMD...                    CMD exits 0
#   check_fails NAME CMD...              CMD exits non-zero
#   check_output NAME REGEX CMD...       CMD exits 0 and its output (stdout+stderr) matches REGEX (grep -E)
#   check_fails_with NAME REGEX CMD...   CMD exits non-zero and its output matches REGEX
#   expect_eq NAME EXPECTED ACTUAL       the strings are equal
#   expect_match NAME REGEX STRING       STRING matches REGEX
#   ok NAME / fail NAME REASON / skip NAME REASON
#   skip_rest REASON                     a skip for each name in VM_PLAN (an array the scenario
#                                        sets) that has no verdict yet
#   wait_for SECONDS CMD...              retries CMD every 0.2 s until it succeeds (no verdict)
#   retry TIMES CMD...                   runs CMD up to TIMES times, 1 s apart, until it exits 0;
#                                        its output passes through (for a client whose server
#                                        may not listen yet:  check_output NAME RE retry 10 CMD...)
#   need_module MOD...                   modprobe each; returns 1 (no verdict) if one is missing
#   in_ns NS CMD...                      ip netns exec NS CMD (put `timeout` after this, never before)
#   last_output                          the output of the last check*
#
# VM_VERBOSE=1 prints the output of passing checks too.
# shellcheck shell=bash

: "${VM_RESULTS:=/tmp/vm-results}"
: "${VM_SCENARIO:=$(basename "${0%.sh}")}"
VM_LAST_OUTPUT="$(mktemp /tmp/vm-out.XXXXXX)"
VM_PLAN=()
declare -A VM_DONE=()

_vm_name() {
  local n="$1"
  n="${n//: /-}"
  echo "$VM_SCENARIO/$n"
}

_vm_show_output() {
  [[ -s $VM_LAST_OUTPUT ]] || return 0
  tail -n "${VM_OUTPUT_LINES:-25}" "$VM_LAST_OUTPUT" | tr -d '\r' | sed 's/^/    | /'
}

ok() {
  VM_DONE["$1"]=1
  echo "VM-TEST ok $(_vm_name "$1")"
  echo ok >>"$VM_RESULTS"
  return 0
}

fail() {
  local reason="${2:-failed}"
  VM_DONE["$1"]=1
  echo "VM-TEST fail $(_vm_name "$1"): ${reason//$'\n'/ }"
  echo fail >>"$VM_RESULTS"
  return 1
}

skip() {
  local reason="${2:-skipped}"
  VM_DONE["$1"]=1
  echo "VM-TEST skip $(_vm_name "$1"): ${reason//$'\n'/ }"
  echo skip >>"$VM_RESULTS"
  return 0
}

# _vm_run CMD...: runs CMD with its output in VM_LAST_OUTPUT; returns its status.
_vm_run() {
  "$@" >"$VM_LAST_OUTPUT" 2>&1 </dev/null
}

_vm_cmd_text() {
  local s="$*"
  ((${#s} > 120)) && s="${s:0:117}..."
  echo "$s"
}

check() {
  local name="$1" rc
  shift
  _vm_run "$@"
  rc=$?
  if ((rc == 0)); then
    ok "$name"
    [[ -n ${VM_VERBOSE:-} ]] && _vm_show_output
    return 0
  fi
  fail "$name" "exit $rc: $(_vm_cmd_text "$@")"
  _vm_show_output
  return 1
}

check_fails() {
  local name="$1" rc
  shift
  _vm_run "$@"
  rc=$?
  if ((rc != 0)); then
    ok "$name"
    [[ -n ${VM_VERBOSE:-} ]] && _vm_show_output
    return 0
  fi
  fail "$name" "succeeded but should have failed: $(_vm_cmd_text "$@")"
  _vm_show_output
  return 1
}

check_output() {
  local name="$1" re="$2" rc
  shift 2
  _vm_run "$@"
  rc=$?
  if ((rc != 0)); then
    fail "$name" "exit $rc: $(_vm_cmd_text "$@")"
    _vm_show_output
    return 1
  fi
  if ! grep -Eq -- "$re" "$VM_LAST_OUTPUT"; then
    fail "$name" "output does not match /$re/: $(_vm_cmd_text "$@")"
    _vm_show_output
    return 1
  fi
  ok "$name"
  [[ -n ${VM_VERBOSE:-} ]] && _vm_show_output
  return 0
}

check_fails_with() {
  local name="$1" re="$2" rc
  shift 2
  _vm_run "$@"
  rc=$?
  if ((rc == 0)); then
    fail "$name" "succeeded but should have failed: $(_vm_cmd_text "$@")"
    _vm_show_output
    return 1
  fi
  if ! grep -Eq -- "$re" "$VM_LAST_OUTPUT"; then
    fail "$name" "failed (exit $rc) but output does not match /$re/: $(_vm_cmd_text "$@")"
    _vm_show_output
    return 1
  fi
  ok "$name"
  return 0
}

expect_eq() {
  if [[ "$2" == "$3" ]]; then
    ok "$1"
    return 0
  fi
  fail "$1" "expected '$2', got '$3'"
}

expect_match() {
  if grep -Eq -- "$2" <<<"$3"; then
    ok "$1"
    return 0
  fi
  fail "$1" "'$(_vm_cmd_text "$3")' does not match /$2/"
}

last_output() {
  cat "$VM_LAST_OUTPUT"
}

# skip_rest REASON: a skip for every name in VM_PLAN not yet reported.
skip_rest() {
  local n
  for n in "${VM_PLAN[@]}"; do
    [[ -n ${VM_DONE[$n]:-} ]] || skip "$n" "$1"
  done
}

wait_for() {
  local secs="$1" deadline
  shift
  deadline=$(($(date +%s) + secs))
  until "$@" >/dev/null 2>&1; do
    (($(date +%s) >= deadline)) && return 1
    sleep 0.2
  done
  return 0
}

retry() {
  local times="$1" i
  shift
  for ((i = 1; i <= times; i++)); do
    "$@" && return 0
    ((i < times)) && sleep 1
  done
  return 1
}

need_module() {
  local m
  for m in "$@"; do
    modprobe "$m" >/dev/null 2>&1 || return 1
  done
  return 0
}

in_ns() {
  local ns="$1"
  shift
  ip netns exec "$ns" "$@"
}
