# common.sh: shared by the VM harness scripts (sourced, not run).
# Sets: VM_HERE, VM_REPO, BUILD_DIR, VM_CACHE (exported).
# shellcheck shell=bash

VM_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VM_REPO="$(cd "$VM_HERE/../.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$VM_REPO/build}"
VM_CACHE="${VM_CACHE:-$BUILD_DIR/vm-cache}"
export BUILD_DIR VM_CACHE

# vm_host_packages: the packages of packages.txt, one a line.
vm_host_packages() {
  sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$VM_HERE/packages.txt"
}

# vm_missing_packages: those of packages.txt that are not installed, one a line.
vm_missing_packages() {
  local p
  for p in $(vm_host_packages); do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

# vm_ensure_packages: installs what packages.txt lists and is missing, from the
# system's own (bookworm) sources. Returns 1 if something is still missing.
vm_ensure_packages() {
  local missing
  missing="$(vm_missing_packages | tr '\n' ' ')"
  [[ -z ${missing// /} ]] && return 0
  if ((EUID != 0)) || [[ -n ${VM_NO_INSTALL:-} ]]; then
    echo "vm: missing packages: $missing(apt-get install $missing)" >&2
    return 1
  fi
  echo "vm: installing $missing" >&2
  local -a pkgs
  read -ra pkgs <<<"$missing"
  export DEBIAN_FRONTEND=noninteractive
  if apt-get update -qq >&2; then
    apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300 "${pkgs[@]}" >&2
  fi
  missing="$(vm_missing_packages | tr '\n' ' ')"
  [[ -z ${missing// /} ]] && return 0
  echo "vm: could not install: $missing" >&2
  return 1
}
