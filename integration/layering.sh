#!/usr/bin/env bash
# layering.sh SOURCE_DIR    every project #include of a file under SOURCE_DIR names a
#                           layer its own layer may use (docs/architecture.md, "Layers"):
#                           the top-level folders, and the folders of cni/ inside
# layering.sh --self-test   the check fails on a tree that breaks the layers
set -euo pipefail

# The layer of a path: a file's, or the one an #include names.
layer_of() {
  case "$1" in
    base/*) echo base ;;
    netlink/*) echo netlink ;;
    conf/*) echo conf ;;
    ipam/*) echo ipam ;;
    kubelet/*) echo kubelet ;;
    cni/core/*) echo core ;;
    cni/state/*) echo state ;;
    cni/device/*) echo device ;;
    cni/journal/*) echo journal ;;
    cni/driver/*) echo driver ;;
    cni/command/*) echo command ;;
    cni/admin/*) echo admin ;;
    cni/main.cpp) echo main ;;
    cni/*) echo cni ;;
    install/main.cpp) echo install_main ;;
    install/*) echo install ;;
    nri/*) echo nri ;;
    *) echo "" ;;
  esac
}

# What each layer may include, its own layer with it. The plugin (cni/) is
# layered inside: its core (the context, the CNI environment, the journal's
# step types) at the bottom, then the state, the device choice, the journal
# (what each step does and undoes), the drivers, the commands on top.
plugin="base netlink conf ipam kubelet core state device journal driver command"
declare -A may=(
  [base]="base"
  [netlink]="base netlink"
  [conf]="base netlink conf"
  [ipam]="base netlink conf ipam"
  [kubelet]="base netlink conf kubelet"
  [core]="base netlink conf ipam kubelet core"
  [state]="base netlink conf ipam kubelet core state"
  [device]="base netlink conf ipam kubelet core state device"
  [journal]="base netlink conf ipam kubelet core state device journal"
  [driver]="base netlink conf ipam kubelet core state device journal driver"
  [command]="$plugin"
  [cni]=""
  [admin]="$plugin admin"
  [main]="$plugin admin"
  [install]="base netlink conf kubelet install"
  [install_main]="base netlink conf kubelet install driver"
  [nri]="$plugin nri"
)

check() {
  local src="${1%/}" bad=0 file rel own inc target
  while IFS= read -r -d '' file; do
    rel="${file#"$src"/}"
    own="$(layer_of "$rel")"
    [[ -n $own ]] || continue
    while IFS= read -r inc; do
      target="$(layer_of "$inc")"
      [[ -n $target ]] || continue
      if [[ " ${may[$own]} " != *" $target "* ]]; then
        echo "$rel ($own) includes $inc ($target): $own may include only ${may[$own]}"
        bad=1
      fi
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
  done < <(find "$src"/{base,netlink,conf,ipam,kubelet,cni,install,nri} -type f \( -name '*.cpp' -o -name '*.h' \) \
             -print0 2>/dev/null | sort -z)
  return "$bad"
}

if [[ ${1:-} == --self-test ]]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp"/{base,conf,cni/core,cni/state,cni/journal,cni/driver,cni/command,cni/admin,cni/odd,install}
  printf '#include "base/error.h"\n' >"$tmp/conf/good.cpp"
  printf '#include "cni/admin/diag.h"\n' >"$tmp/cni/command/up.cpp"
  printf '#include "ipam/ipam.h"\n' >"$tmp/conf/up.h"
  printf '#include "cni/command/run.h"\n' >"$tmp/cni/admin/good.cpp"
  printf '#include "cni/journal/steps.h"\n' >"$tmp/cni/state/up.h"
  printf '#include "cni/driver/rdma.h"\n' >"$tmp/cni/journal/up.cpp"
  printf '#include "cni/state/state.h"\n' >"$tmp/cni/core/up.h"
  printf '#include "cni/core/context.h"\n#include "cni/state/state.h"\n' >"$tmp/cni/driver/good.cpp"
  printf '#include "cni/core/context.h"\n' >"$tmp/cni/odd/new.cpp"
  # The installer's main alone hands the plugin's modes over.
  printf '#include "cni/driver/registry.h"\n' >"$tmp/install/main.cpp"
  printf '#include "cni/driver/registry.h"\n' >"$tmp/install/up.cpp"
  if out="$(check "$tmp")"; then
    echo "FAIL: a tree whose conf/ includes ipam/ and whose cni/command/ includes cni/admin/ passed"
    exit 1
  fi
  for want in "conf/up.h (conf) includes ipam/ipam.h" "cni/command/up.cpp (command) includes cni/admin/diag.h" \
    "cni/state/up.h (state) includes cni/journal/steps.h" "cni/journal/up.cpp (journal) includes cni/driver/rdma.h" \
    "cni/core/up.h (core) includes cni/state/state.h" "cni/odd/new.cpp (cni) includes cni/core/context.h" \
    "install/up.cpp (install) includes cni/driver/registry.h"; do
    grep -qF "$want" <<<"$out" || { echo "FAIL: not named: $want"; echo "$out"; exit 1; }
  done
  if grep -q -e "good" -e "install/main.cpp" <<<"$out"; then
    echo "FAIL: an include that follows the layers was refused: $out"
    exit 1
  fi
  echo "ok: the check refuses the includes against the layers, inside cni/ too, and passes the others"
  exit 0
fi

(($# == 1)) || { sed -n '2,4s/^# //p' "$0" >&2; exit 2; }
if check "$1"; then
  echo "ok: every include follows the layers"
else
  exit 1
fi
