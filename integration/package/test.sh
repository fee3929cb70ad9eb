#!/usr/bin/env bash
# The Debian package (cmake/package.cmake, docs/install.md): cpack builds it from the
# build tree into a scratch dir; its control data, its file list, the binaries it
# holds, and an install and removal with dpkg into a private root (its own dpkg
# database) are checked. With CI=true, on a machine where erdma-cni is not
# installed, also a real `dpkg -i` and `dpkg -r` on the system.
# Environment: BUILD_DIR (default build/). Exit 77 = skipped.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
BUILD_DIR="${BUILD_DIR:-$here/../../build}"

skip() {
  echo "SKIPPED: $*"
  exit 77
}
fail() {
  echo "FAIL: $*"
  exit 1
}
ok() { echo "ok: $*"; }

for tool in cpack dpkg-deb dpkg readelf; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (see integration/package/packages.txt)"
done
[[ -f $BUILD_DIR/CPackConfig.cmake ]] || fail "no $BUILD_DIR/CPackConfig.cmake: configure and build first"

work="$(mktemp -d /tmp/erdma-package.XXXXXX)"
trap 'rm -rf "$work"' EXIT

# Build.
start=$SECONDS
cpack --config "$BUILD_DIR/CPackConfig.cmake" -G DEB -B "$work/out" >"$work/cpack.log" 2>&1 ||
  fail "cpack failed: $(cat "$work/cpack.log")"
debs=("$work"/out/erdma-cni_*.deb)
if ((${#debs[@]} != 1)) || [[ ! -f ${debs[0]} ]]; then fail "expected one erdma-cni_*.deb, got: ${debs[*]}"; fi
deb="${debs[0]}"
version="$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' "$BUILD_DIR/CPackConfig.cmake")"
arch="$(dpkg --print-architecture)"
[[ ${deb##*/} == "erdma-cni_${version}_${arch}.deb" ]] || fail "file name ${deb##*/}"
# A build of a git checkout off its release tag names its commit (CMakeLists.txt).
src="$here/../.."
project="$(sed -n 's/^project(erdma-cni VERSION \([0-9.]*\) .*/\1/p' "$src/CMakeLists.txt")"
if commit="$(git -C "$src" rev-parse --short=12 HEAD 2>/dev/null)" &&
  ! git -C "$src" describe --tags --exact-match --match "v$project" >/dev/null 2>&1; then
  [[ $version == "$project.git$(git -C "$src" rev-list --count HEAD).$commit"* ]] ||
    fail "version $version does not name the commit $commit (configure again after a commit)"
  dpkg --compare-versions "$version" gt "$project" || fail "version $version does not sort after $project"
  dpkg --compare-versions "$version" lt "${project%.*}.$((${project##*.} + 1))" ||
    fail "version $version does not sort before the next release"
  ok "version $version: the commit $commit, after $project and before the next release"
fi
ok "cpack -G DEB built ${deb##*/} ($(stat -c %s "$deb") bytes) in $((SECONDS - start)) s"

# Control data.
field() { dpkg-deb -f "$deb" "$1"; }
[[ $(field Package) == erdma-cni ]] || fail "Package: $(field Package)"
[[ $(field Version) == "$version" ]] || fail "Version: $(field Version)"
[[ $(field Architecture) == "$arch" ]] || fail "Architecture: $(field Architecture)"
[[ -n $(field Maintainer) && -n $(field Description) ]] || fail "no Maintainer or Description"
depends="$(field Depends)"
ok "control: erdma-cni $version $arch, Depends: ${depends:-(none)}"

# Files: the plugin, the installer, the docs and examples; nothing else.
dpkg-deb -c "$deb" >"$work/list"
expect_file() {
  grep -qE "^$1 root/root +[0-9]+ [0-9-]+ [0-9:]+ \./$2\$" "$work/list" ||
    fail "not in the package as $1 root/root: $2
$(cat "$work/list")"
}
expect_file -rwxr-xr-x opt/cni/bin/erdma-cni
expect_file -rwxr-xr-x usr/sbin/erdma-cni-install
expect_file -rwxr-xr-x usr/sbin/erdma-cni-nri
for doc in README.md install.md deploy.md config.md errors.md troubleshooting.md security.md reliability.md nri.md \
  examples/daemonset.yaml examples/nad.yaml \
  examples/pod-exclusive-rdma.yaml examples/pods-none.yaml examples/pods-controller.yaml \
  examples/pods-controller-all-devices.yaml examples/pods-terway-erdma.yaml examples/pods-no-device-plugin.yaml \
  examples/uninstall-daemonset.yaml; do
  expect_file -rw-r--r-- "usr/share/doc/erdma-cni/$doc"
done
stray="$(awk '{print $6}' "$work/list" | grep -vE '^\./(opt/(cni/(bin/(erdma-cni)?)?)?|usr/(sbin/(erdma-cni-install|erdma-cni-nri)?|share/(doc/(erdma-cni/.*)?)?)?)?$' || true)"
[[ -z $stray ]] || fail "files outside the plugin, the installer, the NRI agent and the docs: $stray"
ok "files: /opt/cni/bin/erdma-cni, /usr/sbin/erdma-cni-install and erdma-cni-nri (0755), docs and examples (0644), root-owned, nothing else"

# The binaries themselves.
dpkg-deb -x "$deb" "$work/x"
plugin="$work/x/opt/cni/bin/erdma-cni"
installer="$work/x/usr/sbin/erdma-cni-install"
agent="$work/x/usr/sbin/erdma-cni-nri"
binaries=("$plugin" "$installer" "$agent")
for b in "${binaries[@]}"; do
  if readelf -S "$b" | grep -qE '\.debug_|\.symtab'; then fail "${b##*/} is not stripped"; fi
done
[[ $("$installer" --version) == "erdma-cni-install $version" ]] || fail "installer --version: $("$installer" --version)"
"$installer" --help | grep -q -- '--after TYPE' || fail "installer --help"
"$agent" --help 2>&1 | grep -q -- '--socket' || fail "agent --help: $("$agent" --help 2>&1)"
[[ $("$agent" --version) == "erdma-cni-nri $version" ]] || fail "agent --version: $("$agent" --version)"
out="$(CNI_COMMAND=VERSION "$plugin" </dev/null)"
[[ $(jq -r '.supportedVersions | join(",")' <<<"$out") == *1.0.0* ]] || fail "plugin VERSION: $out"
ok "the three binaries stripped and they run: installer and agent --version, --help; plugin VERSION: $(jq -c .supportedVersions <<<"$out")"
# Every page the binaries name (their --help, their messages) ships with them.
mapfile -t named < <(strings -n 6 "${binaries[@]}" | grep -oE '[a-z][a-z_-]*\.md' | sort -u)
((${#named[@]})) || fail "the binaries name no page; the check below would pass on nothing"
for page in "${named[@]}"; do
  [[ -f $work/x/usr/share/doc/erdma-cni/$page ]] ||
    fail "the binaries name $page, which the package does not ship (cmake/package.cmake)"
done
ok "every page the binaries name ships: ${named[*]}"

# Depends covers every shared library the binaries load, and names nothing
# when they load none (the static build that ships).
needed="$(for b in "${binaries[@]}"; do readelf -d "$b" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; done)"
if [[ -z $needed ]]; then
  [[ -z $depends ]] || fail "the binaries are static, yet Depends names: $depends"
  ok "the three binaries are static (no DT_NEEDED), and Depends is empty"
elif [[ $depends != *libc6* ]]; then
  fail "the binaries load shared libraries, yet Depends does not name libc6: $depends"
fi
alternatives="${depends//|/,}"
mapfile -t depends_names < <(sed -e 's/([^)]*)//g' -e 's/[[:space:]]//g' <<<"${alternatives//,/$'\n'}" | sed '/^$/d')
for b in "${binaries[@]}"; do
  while read -r lib; do
    # "libx.so.1 => /path (0x...)", or for the dynamic loader "/path/ld-linux-x86-64.so.2 (0x...)".
    path="$(ldd "$b" | awk -v l="$lib" '$1 == l && $2 == "=>" {print $3; exit}
      substr($1, length($1) - length(l)) == "/" l {print $1; exit}')"
    [[ -n $path ]] || fail "${b##*/} needs $lib, which this machine does not have"
    owner=""
    for p in "$path" "$(readlink -f "$path")" "${path/#\/usr\/lib/\/lib}" "$(readlink -f "$path" | sed 's#^/usr/lib#/lib#')"; do
      owner="$(dpkg -S "$p" 2>/dev/null | head -1 | cut -d: -f1)" || true
      [[ -n $owner ]] && break
    done
    [[ -n $owner ]] || fail "no Debian package owns $path (${b##*/} needs $lib)"
    printf '%s\n' "${depends_names[@]}" | grep -qx "$owner" ||
      fail "${b##*/} needs $lib from $owner, which Depends ($depends) lacks"
  done < <(readelf -d "$b" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
done
[[ -z $needed ]] || ok "Depends covers every DT_NEEDED library of the binaries"

# Install and remove with dpkg, into a root of its own.
r="$work/root"
mkdir -p "$r/var/lib/dpkg/info" "$r/var/lib/dpkg/updates" "$r/var/lib/dpkg/triggers"
touch "$r/var/lib/dpkg/status" "$r/var/lib/dpkg/available"
# The private database knows none of the system's packages: Depends cannot be met there.
dpkg --root="$r" --force-depends --force-not-root -i "$deb" >"$work/dpkg.log" 2>&1 ||
  fail "dpkg -i into $r failed: $(cat "$work/dpkg.log")"
[[ $(dpkg-query --admindir="$r/var/lib/dpkg" -W -f='${Status} ${Version}' erdma-cni) == "install ok installed $version" ]] ||
  fail "dpkg does not list erdma-cni as installed in $r"
for f in opt/cni/bin/erdma-cni usr/sbin/erdma-cni-install usr/sbin/erdma-cni-nri usr/share/doc/erdma-cni/install.md; do
  [[ -f $r/$f ]] || fail "dpkg -i did not put $f in place"
done
cmp -s "$r/opt/cni/bin/erdma-cni" "$plugin" || fail "the installed plugin differs from the package's"
"$r/usr/sbin/erdma-cni-install" --version >/dev/null || fail "the installed installer does not run"
dpkg --root="$r" --force-not-root -r erdma-cni >>"$work/dpkg.log" 2>&1 || fail "dpkg -r failed: $(cat "$work/dpkg.log")"
left="$(find "$r/opt" "$r/usr" 2>/dev/null || true)"
[[ -z $left ]] || fail "dpkg -r left: $left"
ok "dpkg -i and -r into a private root: files in place and running, then all gone"

# On a throwaway CI machine: the system's own dpkg.
if [[ ${CI:-} != true ]]; then
  echo "note: system-wide dpkg -i/-r not run (only with CI=true, on a throwaway machine)"
elif dpkg-query -W erdma-cni >/dev/null 2>&1 || [[ -e /opt/cni/bin/erdma-cni || -e /usr/sbin/erdma-cni-install ]]; then
  fail "CI=true but erdma-cni is already on this machine; the system install would clobber it"
elif ((EUID != 0)); then
  fail "CI=true but not root: cannot dpkg -i"
else
  dpkg -i "$deb" >"$work/sys.log" 2>&1 || fail "dpkg -i failed: $(cat "$work/sys.log")"
  trap 'dpkg -r erdma-cni >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
  [[ -x /opt/cni/bin/erdma-cni && -x /usr/sbin/erdma-cni-install ]] || fail "dpkg -i: files missing"
  [[ $(erdma-cni-install --version 2>/dev/null || /usr/sbin/erdma-cni-install --version) == "erdma-cni-install $version" ]] ||
    fail "the installed erdma-cni-install does not run"
  [[ $(CNI_COMMAND=VERSION /opt/cni/bin/erdma-cni </dev/null | jq -r .cniVersion) != null ]] ||
    fail "the installed plugin does not answer VERSION"
  dpkg -r erdma-cni >>"$work/sys.log" 2>&1 || fail "dpkg -r failed: $(cat "$work/sys.log")"
  [[ ! -e /opt/cni/bin/erdma-cni && ! -e /usr/sbin/erdma-cni-install && ! -e /usr/share/doc/erdma-cni ]] ||
    fail "dpkg -r left files"
  ok "system dpkg -i: the plugin and installer run from /opt/cni/bin and /usr/sbin; dpkg -r: gone"
fi
