#!/usr/bin/env bash
# The real erdma-cni-install on scratch copies of a node's CNI dirs
# (docs/install.md). One scenario per run, so ctest reports each:
#   test.sh node     install, second install, check, dry run, uninstall, errors, mode and backup
#   test.sh reader   a runtime reading the conflist and the binary never sees part of either
#   test.sh nocaps   everything works as root with no capability at all (the DaemonSet's
#                    securityContext), and what needs one fails cleanly (root)
#   test.sh strace   every write goes to a hidden temp file renamed over the final name
#   test.sh kubelet  an entry with device.resource stays out of the conflist while the kubelet does not answer
#   test.sh nodefile --node-file puts the node file in place, checked as the plugin checks it (root)
# Environment: ERDMA_CNI_INSTALL, ERDMA_CNI (default: build/). Exit 77 = skipped.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
INSTALLER="${ERDMA_CNI_INSTALL:-$repo/build/erdma-cni-install}"
PLUGIN="${ERDMA_CNI:-$repo/build/erdma-cni}"
scenario="${1:-}"

skip() {
  echo "SKIPPED: $*"
  exit 77
}
fail() {
  echo "FAIL: $*"
  exit 1
}
ok() { echo "ok: $*"; }

[[ -x $INSTALLER && -x $PLUGIN ]] || fail "build first: $INSTALLER and $PLUGIN"
command -v jq >/dev/null || skip "jq is not installed (apt-get install jq)"

root="$(mktemp -d "/tmp/erdma-install-$scenario.XXXXXX")"
reader_pid=""
cleanup() {
  [[ -n $reader_pid ]] && kill "$reader_pid" 2>/dev/null
  rm -rf "$root"
}
trap cleanup EXIT
bin="$root/opt/cni/bin"
conf="$root/etc/cni/net.d"
mkdir -p "$bin" "$conf"
chmod 0755 "$root" "$root/opt" "$root/opt/cni" "$bin" "$root/etc" "$root/etc/cni" "$conf"

# Terway's conflist in the layout the installer writes (two spaces, final
# newline), so that uninstall's result can be compared byte for byte.
write_terway() {
  cat >"$1" <<'JSON'
{
  "cniVersion": "0.4.0",
  "name": "terway-chainer",
  "plugins": [
    {
      "type": "terway",
      "eniip_virtual_type": "IPVlan",
      "network_policy_provider": "ebpf",
      "capabilities": {
        "bandwidth": true
      }
    },
    {
      "type": "portmap",
      "capabilities": {
        "portMappings": true
      },
      "externalSetMarkChain": "KUBE-MARK-MASQ"
    }
  ]
}
JSON
}

# run ARGS...: the installer on the scratch dirs; sets rc, out, err.
run() {
  local cmd="$1"
  shift
  rc=0
  out="$("$INSTALLER" "$cmd" --bin-dir "$bin" --conf-dir "$conf" "$@" 2>"$root/stderr")" || rc=$?
  err="$(cat "$root/stderr")"
}
expect_rc() {
  [[ $rc == "$1" ]] || fail "$2: exit $rc, expected $1
stdout: $out
stderr: $err"
}
# stamp FILE...: inode, mtime (ns) and sha256 of each, to tell "not written" from "rewritten".
stamp() {
  local f
  for f in "$@"; do
    if [[ -e $f ]]; then
      echo "$f $(stat -c '%i %.9Y %a' "$f") $(sha256sum <"$f")"
    else
      echo "$f absent"
    fi
  done
}
listing() { find "$1" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort | tr '\n' ' '; }

scenario_node() {
  local terway="$conf/10-terway.conflist" backup="$conf/10-terway.conflist.erdma-cni.bak"
  write_terway "$terway"
  cp "$terway" "$root/original"
  chmod 0640 "$terway"
  echo '{"cniVersion": "1.0.0", "name": "later", "plugins": [{"type": "bridge"}]}' >"$conf/20-later.conflist"
  cp "$conf/20-later.conflist" "$root/later"

  # First install: the runtime's first file (auto), after terway.
  run install --after terway --source "$PLUGIN"
  expect_rc 0 "first install"
  [[ $out == *"copied $PLUGIN to $bin/erdma-cni"* ]] || fail "first install did not say it copied: $out"
  [[ $out == *"inserted the erdma-cni entry at position 1 (after terway)"* ]] || fail "not inserted: $out"
  cmp -s "$PLUGIN" "$bin/erdma-cni" || fail "the binary differs from the source"
  [[ $(stat -c %a "$bin/erdma-cni") == 755 ]] || fail "binary mode $(stat -c %a "$bin/erdma-cni")"
  [[ $(jq -r '[.plugins[].type] | join(",")' "$terway") == terway,erdma-cni,portmap ]] ||
    fail "chain is $(jq -c '[.plugins[].type]' "$terway")"
  [[ $(jq -c '.plugins[1]' "$terway") == '{"type":"erdma-cni","mode":"none","capabilities":{"io.kubernetes.cri.pod-annotations":true},"smcr":{"enable":"annotation"},"logFile":"/var/log/erdma-cni.log"}' ]] ||
    fail "entry is $(jq -c '.plugins[1]' "$terway")"
  [[ $(jq -c 'del(.plugins[1])' "$terway") == "$(jq -c . "$root/original")" ]] ||
    fail "other entries or keys changed"
  [[ $(stat -c %a "$terway") == 640 ]] || fail "conflist mode $(stat -c %a "$terway"), was 640"
  cmp -s "$backup" "$root/original" || fail "the backup is not the original"
  [[ $(stat -c %a "$backup") == 640 ]] || fail "backup mode $(stat -c %a "$backup")"
  cmp -s "$conf/20-later.conflist" "$root/later" || fail "another conflist was touched"
  [[ $(listing "$conf") == "10-terway.conflist 10-terway.conflist.erdma-cni.bak 20-later.conflist " ]] ||
    fail "conf dir holds: $(listing "$conf")"
  [[ $(listing "$bin") == "erdma-cni " ]] || fail "bin dir holds: $(listing "$bin")"
  ok "install copies the binary, inserts the entry after terway, keeps mode, other keys and a backup"

  # Second install: nothing written at all.
  local before after
  before="$(stamp "$bin/erdma-cni" "$terway" "$backup")"
  sleep 0.05
  run install --after terway --source "$PLUGIN"
  expect_rc 0 "second install"
  after="$(stamp "$bin/erdma-cni" "$terway" "$backup")"
  [[ $before == "$after" ]] || fail "second install wrote:
$before
$after"
  [[ $out == *"$bin/erdma-cni up to date"* && $out == *"entry up to date at position 1"* ]] ||
    fail "second install output: $out"
  ok "a second install writes nothing (inode, mtime and content of binary, conflist, backup unchanged)"

  run check --after terway --source "$PLUGIN"
  expect_rc 0 "check after install"
  run check --position 0 --source "$PLUGIN"
  expect_rc 1 "check at another position"
  [[ $out == *"differs: $terway: install would have moved"* ]] || fail "check output: $out"
  ok "check passes when installed as asked and names the difference when not"

  # The primary plugin rewrites its conflist (Terway's init does on every
  # start), a little differently this time, and with another mode.
  jq '.plugins[1].externalSetMarkChain = "KUBE-MARK-MASQ-2"' "$root/original" >"$root/rewritten"
  cp "$root/rewritten" "$terway"
  chmod 0644 "$terway"
  run check --after terway --source "$PLUGIN"
  expect_rc 1 "check after the entry was lost"
  before="$(stamp "$bin/erdma-cni" "$terway" "$backup")"
  run install --after terway --source "$PLUGIN" --dry-run
  expect_rc 0 "dry run"
  [[ $out == *"would have inserted the erdma-cni entry"* && $out == *'"type": "erdma-cni"'* ]] ||
    fail "dry run output: $out"
  [[ $before == "$(stamp "$bin/erdma-cni" "$terway" "$backup")" ]] || fail "dry run wrote something"
  ok "dry run shows the new conflist and writes nothing"
  run install --after terway --source "$PLUGIN"
  expect_rc 0 "repair"
  [[ $out == *"inserted"* && $out != *copied* ]] || fail "repair output: $out"
  [[ $(stat -c %a "$terway") == 644 ]] || fail "mode of the rewritten file not kept: $(stat -c %a "$terway")"
  cmp -s "$backup" "$root/rewritten" || fail "the backup is not the file as it was before this change"
  ok "install repairs a rewritten conflist; the backup is the file before the last change"

  # An update of the entry, then uninstall.
  echo '{"type": "erdma-cni", "mode": "none", "capabilities": {"io.kubernetes.cri.pod-annotations": true}, "logLevel": "debug"}' >"$root/entry.json"
  cp "$terway" "$root/installed"
  run install --after terway --source "$PLUGIN" --entry "$root/entry.json"
  expect_rc 0 "update"
  [[ $out == *"updated the erdma-cni entry at position 1"* ]] || fail "update output: $out"
  [[ $(jq -r '.plugins[1].logLevel' "$terway") == debug ]] || fail "entry not updated"
  cmp -s "$backup" "$root/installed" || fail "backup is not the file before the update"
  ok "install updates the entry in place"

  cp "$terway" "$root/updated"
  run uninstall
  expect_rc 0 "uninstall"
  [[ $out == *"removed the erdma-cni entry at position 1"* ]] || fail "uninstall output: $out"
  cmp -s "$terway" "$root/rewritten" ||
    fail "uninstall did not give back the file before install: $(diff "$terway" "$root/rewritten")"
  cmp -s "$backup" "$root/updated" || fail "backup is not the file before uninstall"
  [[ -e $bin/erdma-cni ]] || fail "uninstall without --remove-binary removed the binary"
  before="$(stamp "$terway" "$backup")"
  run uninstall --remove-binary
  expect_rc 0 "second uninstall"
  [[ $out == *"no erdma-cni entry"* && $out == *"removed $bin/erdma-cni"* ]] || fail "second uninstall: $out"
  [[ $before == "$(stamp "$terway" "$backup")" ]] || fail "second uninstall rewrote the conflist"
  [[ ! -e $bin/erdma-cni ]] || fail "--remove-binary left the binary"
  run uninstall --remove-binary
  expect_rc 0 "third uninstall"
  ok "uninstall gives back the original byte for byte, keeps a backup, and is idempotent"

  # Errors: exit 1, the file and the fix named, nothing changed.
  local state
  expect_unchanged() {
    [[ $state == "$(stamp "$conf"/* "$bin/erdma-cni") $(listing "$conf")" ]] || fail "$1 changed files"
  }
  printf '{"cniVersion": "1.0.0", "name": "x", "plugins": [\n' >"$terway"
  state="$(stamp "$conf"/* "$bin/erdma-cni") $(listing "$conf")"
  run install --source "$PLUGIN"
  expect_rc 1 "install on a broken conflist"
  [[ $err == *"$terway: not JSON"*"line 2"* ]] || fail "message: $err"
  expect_unchanged "install on a broken conflist"
  ok "a conflist that is not JSON: exit 1, file and line named, nothing written (not even the binary)"

  jq '.plugins += [{"type": "erdma-cni"}, {"type": "erdma-cni", "mode": "none"}]' "$root/original" >"$terway"
  state="$(stamp "$conf"/* "$bin/erdma-cni") $(listing "$conf")"
  run install --source "$PLUGIN"
  expect_rc 1 "install with two entries"
  [[ $err == *"$terway: plugins: 2 entries of type erdma-cni"*"erdma-cni-install uninstall"* ]] ||
    fail "message: $err"
  expect_unchanged "install with two entries"
  run uninstall
  expect_rc 0 "uninstall of two entries"
  cmp -s "$terway" "$root/original" || fail "uninstall did not remove both entries"
  ok "two erdma-cni entries: install refuses naming the fix, uninstall removes both"

  echo '{"cniVersion": "1.0.0", "name": "single", "type": "bridge"}' >"$conf/05-single.conf"
  state="$(stamp "$conf"/* "$bin/erdma-cni") $(listing "$conf")"
  run install --source "$PLUGIN"
  expect_rc 1 "install when a .conf comes first"
  [[ $err == *"$conf/05-single.conf is the config the runtime loads first, and it is not a .conflist"* ]] ||
    fail "message: $err"
  expect_unchanged "install when a .conf comes first"
  run install --source "$PLUGIN" --conflist 10-terway.conflist --after calico
  expect_rc 1 "install after a missing type"
  [[ $err == *'no plugin of type "calico" in the chain (its types: terway, portmap)'* ]] || fail "message: $err"
  expect_unchanged "install after a missing type"
  echo '{"type": "erdma-cni", "mode": "mvoe"}' >"$root/bad-entry.json"
  run install --source "$PLUGIN" --conflist 10-terway.conflist --entry "$root/bad-entry.json"
  expect_rc 1 "install of a bad entry"
  [[ $err == *"$root/bad-entry.json: the erdma-cni entry is not a valid erdma-cni config: mode"* ]] ||
    fail "message: $err"
  expect_unchanged "install of a bad entry"
  echo '{"type": "erdma-cni", "mode": "none", "devcie": {"name": "eth1"}}' >"$root/devcie-entry.json"
  run install --source "$PLUGIN" --conflist 10-terway.conflist --entry "$root/devcie-entry.json" --dry-run
  expect_rc 1 "dry run of an entry with devcie"
  [[ $err == *"the erdma-cni entry is not a valid erdma-cni config: devcie: not a key of erdma-cni; did you mean device?"* ]] ||
    fail "message: $err"
  echo '{"type": "erdma-cni", "mdoe": "none"}' >"$root/mdoe-entry.json"
  run install --source "$PLUGIN" --conflist 10-terway.conflist --entry "$root/mdoe-entry.json"
  expect_rc 1 "install of an entry with mdoe"
  [[ $err == *"mdoe: not a key of erdma-cni; did you mean mode?"* ]] || fail "message: $err"
  expect_unchanged "install of an entry with mdoe"
  echo '{"type": "erdma-cni", "mode": "move", "device": {"name": "eth1"}}' >"$root/named-entry.json"
  run install --source "$PLUGIN" --conflist 10-terway.conflist --entry "$root/named-entry.json"
  expect_rc 1 "install of an entry that names one device for every pod"
  [[ $err == *"device.name: in a node conflist the entry runs for every pod of the node"*"device.resource"* ]] ||
    fail "message: $err"
  expect_unchanged "install of an entry that names one device for every pod"
  if [[ $EUID == 0 ]]; then
    echo '{"type": "erdma-cni", "mode": "none", "dataDir": "/var/lib/erdma-cni"}' >"$root/datadir-entry.json"
    echo '{"dataDirs": ["/run/erdma-cni"]}' >"$root/node.json"
    chmod 0644 "$root/node.json"
    run install --source "$PLUGIN" --conflist 10-terway.conflist --entry "$root/datadir-entry.json" \
      --node-config "$root/node.json"
    expect_rc 1 "install of an entry with a dataDir the node file does not allow"
    [[ $err == *'dataDir: "/var/lib/erdma-cni" is not allowed on this node ('"$root/node.json)"* ]] ||
      fail "message: $err"
    expect_unchanged "install of an entry with a dataDir the node file does not allow"
    echo '{"dataDirs": ["/var/lib/erdma-cni"]}' >"$root/node.json"
    run install --source "$PLUGIN" --conflist 10-terway.conflist --entry "$root/datadir-entry.json" \
      --node-config "$root/node.json" --dry-run
    expect_rc 0 "dry run of an entry with a dataDir the node file allows"
  fi
  cp "$terway" "$root/before-bad-installed"
  jq '.plugins += [{"type": "erdma-cni", "mode": "none", "mdoe": "none"}]' "$root/before-bad-installed" >"$terway"
  run check --source "$PLUGIN" --conflist 10-terway.conflist
  expect_rc 1 "check of a conflist whose entry the plugin would refuse"
  [[ $err == *"$terway: the erdma-cni entry is not a valid erdma-cni config: mdoe: not a key of erdma-cni"* ]] ||
    fail "message: $err"
  cp "$root/before-bad-installed" "$terway"
  state="$(stamp "$conf"/* "$bin/erdma-cni") $(listing "$conf")"
  run install --source "$PLUGIN" --conflist 30-none.conflist
  expect_rc 1 "install into a missing conflist"
  [[ $err == *"$conf/30-none.conflist does not exist"* ]] || fail "message: $err"
  run install --source "$root/original" --conflist 10-terway.conflist
  expect_rc 1 "install of a source that is not a binary"
  [[ $err == *"is not an executable"* ]] || fail "message: $err"
  expect_unchanged "install of a source that is not a binary"
  rc=0
  "$INSTALLER" install --bin-dir "$root/nope" --conf-dir "$conf" --conflist 10-terway.conflist \
    --source "$PLUGIN" 2>"$root/stderr" || rc=$?
  [[ $rc == 1 && $(cat "$root/stderr") == *"--bin-dir $root/nope is not a directory"* ]] ||
    fail "missing bin dir: exit $rc, $(cat "$root/stderr")"
  rc=0
  "$INSTALLER" install --after terway --last 2>/dev/null || rc=$?
  [[ $rc == 2 ]] || fail "usage error exit $rc"
  expect_unchanged "the missing bin dir and the usage error"
  ok "refusals (a .conf first, an unknown --after, a bad entry, a misspelt key, a device named for every pod, a dataDir the node file does not allow, no conflist, not a binary, no bin dir, usage) change nothing"

  ln -s 10-terway.conflist "$conf/00-link.conflist"
  run install --source "$PLUGIN" --conflist 00-link.conflist
  expect_rc 1 "install into a symlink"
  [[ $err == *"is a symbolic link"* ]] || fail "message: $err"
  ok "a conflist that is a symlink is refused, not replaced"
}

scenario_reader() {
  command -v python3 >/dev/null || skip "python3 is not installed"
  local terway="$conf/10-terway.conflist"
  # Large enough that a write in place would be read half done: 512 KiB.
  write_terway "$root/small"
  head -c 393216 /dev/zero | base64 -w0 >"$root/pad"
  jq --rawfile pad "$root/pad" '.plugins[0].padding = $pad' "$root/small" >"$terway"
  # Stripped (as the package ships it): 30 fsynced copies of the debug build would be slow.
  if command -v strip >/dev/null; then strip -o "$root/plugin-a" "$PLUGIN"; else cp "$PLUGIN" "$root/plugin-a"; fi
  cp "$root/plugin-a" "$root/plugin-b"
  printf 'another build' >>"$root/plugin-b"
  local caps='"capabilities": {"io.kubernetes.cri.pod-annotations": true}'
  printf '{"type": "erdma-cni", "mode": "none", %s, "logLevel": "%s"}\n' "$caps" debug >"$root/entry-a.json"
  printf '{"type": "erdma-cni", "mode": "none", %s, "logLevel": "%s"}\n' "$caps" info >"$root/entry-b.json"
  python3 "$here/reader.py" "$terway" "$bin/erdma-cni" "$root/plugin-a" "$root/plugin-b" "$root/stop" \
    >"$root/reader.out" &
  reader_pid=$!
  local i side
  for i in $(seq 1 30); do
    side=$((i % 2 == 0 ? 1 : 0))
    if ((i % 3 == 0)); then
      run uninstall
    else
      run install --after terway --source "$root/plugin-$([[ $side == 1 ]] && echo a || echo b)" \
        --entry "$root/entry-$([[ $side == 1 ]] && echo a || echo b).json"
    fi
    expect_rc 0 "round $i"
  done
  touch "$root/stop"
  wait "$reader_pid"
  reader_pid=""
  local summary
  summary="$(cat "$root/reader.out")"
  echo "reader: $summary"
  [[ $summary =~ reads=([0-9]+)\ torn=([0-9]+)\ conflist_versions=([0-9]+)\ binary_versions=([0-9]+) ]] ||
    fail "reader said: $summary"
  ((BASH_REMATCH[2] == 0)) || fail "the reader saw ${BASH_REMATCH[2]} torn files"
  ((BASH_REMATCH[1] >= 20)) || fail "the reader read only ${BASH_REMATCH[1]} times"
  ((BASH_REMATCH[3] >= 2 && BASH_REMATCH[4] >= 2)) || fail "the reader saw too few versions: $summary"
  [[ $(listing "$conf") == "10-terway.conflist 10-terway.conflist.erdma-cni.bak " ]] ||
    fail "left behind: $(listing "$conf")"
  ok "30 installs and uninstalls of a 512 KiB conflist and the binary under a reader: no torn read"
}

scenario_nocaps() {
  ((EUID == 0)) || skip "needs root (the DaemonSet runs as uid 0 with no capability)"
  command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
  local terway="$conf/10-terway.conflist"
  write_terway "$terway"
  chmod 0644 "$terway"
  chown 0:0 "$terway" "$conf" "$bin"
  # uid 0 with empty bounding, inheritable and ambient sets: no capability
  # survives the exec, as with capabilities: drop: [ALL].
  nocaps() {
    rc=0
    out="$(setpriv --reuid=0 --regid=0 --clear-groups --inh-caps=-all --ambient-caps=-all --bounding-set=-all \
      --no-new-privs "$INSTALLER" "$@" 2>"$root/stderr")" || rc=$?
    err="$(cat "$root/stderr")"
  }
  nocaps install --bin-dir "$bin" --conf-dir "$conf" --after terway --source "$PLUGIN"
  expect_rc 0 "install with no capability"
  [[ $(jq -r '.plugins[1].type' "$terway") == erdma-cni ]] || fail "not installed"
  nocaps check --bin-dir "$bin" --conf-dir "$conf" --after terway --source "$PLUGIN"
  expect_rc 0 "check with no capability"
  nocaps uninstall --bin-dir "$bin" --conf-dir "$conf" --remove-binary
  expect_rc 0 "uninstall with no capability"
  ok "install, check and uninstall as uid 0 with no capability (root-owned dirs 0755, conflist 0644)"

  # Proof that the capabilities were gone: a file root's uid does not own.
  nocaps install --bin-dir "$bin" --conf-dir "$conf" --after terway --source "$PLUGIN"
  chown 1000:1000 "$terway"
  chmod 0600 "$terway"
  nocaps uninstall --bin-dir "$bin" --conf-dir "$conf"
  expect_rc 1 "uninstall of a file owned by another uid, mode 0600, with no capability"
  [[ $err == *"open $terway: Permission denied"* ]] || fail "message: $err"
  chmod 0644 "$terway"
  local before
  before="$(stamp "$terway") $(listing "$conf")"
  nocaps uninstall --bin-dir "$bin" --conf-dir "$conf"
  expect_rc 1 "uninstall of a file owned by another uid, with no capability"
  [[ $err == *"$terway.erdma-cni.bak: cannot keep the owner 1000:1000 of the file being replaced (chown: Operation not permitted)"* ]] ||
    fail "message: $err"
  [[ $before == "$(stamp "$terway") $(listing "$conf")" ]] || fail "a failed uninstall changed files"
  run uninstall
  expect_rc 0 "the same uninstall with root's capabilities"
  [[ $(stat -c %u:%g "$terway") == 1000:1000 ]] || fail "owner not kept: $(stat -c %u:%g "$terway")"
  ok "without capabilities a file of another uid is refused cleanly; with them its owner is kept"
}

scenario_strace() {
  command -v strace >/dev/null || skip "strace is not installed (apt-get install strace)"
  strace -f -qq -o /dev/null true 2>/dev/null || skip "strace cannot trace here (ptrace not permitted)"
  local terway="$conf/10-terway.conflist" log="$root/trace"
  write_terway "$terway"
  local final
  for cmd in install uninstall; do
    local args=(--bin-dir "$bin" --conf-dir "$conf")
    [[ $cmd == install ]] && args+=(--source "$PLUGIN")
    rc=0
    strace -f -qq -s 1024 -e trace=open,openat,creat,truncate,rename,renameat,renameat2,link,linkat -o "$log" \
      "$INSTALLER" "$cmd" "${args[@]}" >/dev/null 2>&1 || rc=$?
    ((rc == 0)) || fail "$cmd under strace failed"
    local finals=("$terway" "$terway.erdma-cni.bak")
    [[ $cmd == install ]] && finals+=("$bin/erdma-cni")
    for final in "${finals[@]}"; do
      # Opened for writing, truncated or created under its final name: never.
      if grep -E "(open|openat|creat)\(.*\"$final\".*(O_WRONLY|O_RDWR|O_CREAT|O_TRUNC)|truncate\(\"$final\"" "$log"; then
        fail "$cmd wrote $final in place"
      fi
      # Reached by a rename from a hidden temp file in the same directory.
      local dir="${final%/*}" name="${final##*/}"
      grep -qE "rename(at2?)?\(.*\"$dir/\.$name\.erdma-cni-[A-Za-z0-9]{6}\", .*\"$final\"" "$log" ||
        fail "$cmd: no rename of a temp file onto $final:
$(grep rename "$log")"
    done
    # No temp name is one a runtime loads.
    if grep -oE "\"[^\"]*\.erdma-cni-[A-Za-z0-9]{6}\"" "$log" | grep -qE '\.(conf|conflist|json)"$'; then
      fail "a temp file has a name the runtime loads"
    fi
    ok "$cmd: ${#finals[@]} files written only as hidden temp files renamed onto their names"
  done
}

# With device.resource every ADD asks the kubelet: while the node file's socket does not answer, install
# leaves the entry out (and takes it out), check fails naming the socket, and the install loop puts the entry
# in once the kubelet answers.
scenario_kubelet() {
  [[ $EUID == 0 ]] || skip "the node file must be root's: run as root"
  local fake="$repo/test/fake_kubelet/fake_kubelet.py" py
  py="$(sed -n '1s/^#!//p' "$fake")"  # the fake kubelet's own interpreter
  "$py" -c 'import grpc, grpc_tools' 2>/dev/null ||
    skip "python3-grpcio or python3-grpc-tools is not installed for $py (the fake kubelet)"
  local terway="$conf/10-terway.conflist" sock="$root/kubelet.sock" i
  write_terway "$terway"
  cp "$terway" "$root/original"
  printf '{"podResourcesSocket": "%s"}\n' "$sock" >"$root/node.json"
  chmod 0644 "$root/node.json"
  echo '{"type": "erdma-cni", "mode": "move", "device": {"resource": "aliyun/erdma"}}' >"$root/entry.json"
  local args=(--source "$PLUGIN" --after terway --entry "$root/entry.json" --node-config "$root/node.json")
  run install "${args[@]}"
  expect_rc 1 "install while no kubelet answers"
  [[ $err == *"does not answer"*"$sock"*"left out of $terway"*"podResourcesSocket in the node file ($root/node.json)"* ]] ||
    fail "message: $err"
  cmp -s "$terway" "$root/original" || fail "the conflist changed: $(cat "$terway")"
  run check "${args[@]}"
  expect_rc 1 "check while no kubelet answers"
  [[ $err == *"does not answer"*"$sock"* ]] || fail "check message: $err"
  ok "no kubelet on the node file's socket: install leaves the entry out (exit 1), check fails naming the socket"

  start_kubelet() {
    "$fake" --socket "$sock" --pods "$repo/test/fake_kubelet/pods.json" --mode get --calls "$root/calls" \
      >"$root/kubelet.log" 2>&1 &
    reader_pid=$!
    for ((i = 0; i < 300; i++)); do
      # Bound is not yet listening: wait until a connection is accepted.
      "$py" -c 'import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "$sock" 2>/dev/null &&
        return 0
      sleep 0.1
    done
    fail "the fake kubelet did not start: $(cat "$root/kubelet.log")"
  }
  start_kubelet
  run install "${args[@]}"
  expect_rc 0 "install with the kubelet answering"
  [[ $(jq -r '.plugins[1].type' "$terway") == erdma-cni ]] || fail "entry not inserted: $(cat "$terway")"
  run check "${args[@]}"
  expect_rc 0 "check with the kubelet answering"
  # A kubelet that died leaves its socket file behind: the entry is taken out again.
  kill "$reader_pid"
  wait "$reader_pid" 2>/dev/null || true
  reader_pid=""
  run install "${args[@]}"
  expect_rc 1 "install once the kubelet died"
  [[ $err == *"does not answer"* ]] || fail "message: $err"
  [[ $(jq -r '[.plugins[].type] | index("erdma-cni")' "$terway") == null ]] ||
    fail "entry still there: $(cat "$terway")"
  ok "with the kubelet answering install puts the entry in and check passes; once it died, install takes it out"

  # The DaemonSet's loop: down at first, the entry comes once the kubelet answers.
  rm -f "$sock"
  "$INSTALLER" install --bin-dir "$bin" --conf-dir "$conf" "${args[@]}" --every 1 >"$root/loop.out" 2>&1 &
  local loop=$!
  sleep 1.5
  [[ $(jq -r '[.plugins[].type] | index("erdma-cni")' "$terway") == null ]] || fail "entry inserted with no kubelet"
  start_kubelet
  for ((i = 0; i < 100; i++)); do
    [[ $(jq -r '.plugins[1].type' "$terway") == erdma-cni ]] && break
    sleep 0.1
  done
  kill -TERM "$loop"
  wait "$loop" || true
  [[ $(jq -r '.plugins[1].type' "$terway") == erdma-cni ]] ||
    fail "the loop did not insert the entry once the kubelet answered: $(cat "$root/loop.out")"
  [[ $(grep -c "does not answer" "$root/loop.out") == 1 ]] ||
    fail "the loop should say once why it waits: $(cat "$root/loop.out")"
  ok "install --every: the entry goes in on the first round after the kubelet answers, the wait said once"
}

# The DaemonSet's node file: --node-file (its ConfigMap) written where the
# plugin reads it, root's 0644, before the binary and the entry; a node file
# the plugin would refuse, or one that forbids the entry's logFile, is
# refused with nothing written; check says whether the node holds it.
scenario_nodefile() {
  [[ $EUID == 0 ]] || skip "writing a node file of root's needs root"
  local terway="$conf/10-terway.conflist" dest="$root/etc/erdma-cni/node.json"
  write_terway "$terway"
  mkdir -m 0755 "$root/etc/erdma-cni" "$root/cm"
  local args=(--source "$PLUGIN" --after terway --node-config "$dest" --node-file "$root/cm/node.json")
  echo '{"dataDirs": ["/run/erdma-cni"], "logFiles": ["/var/log/erdma-cni.log"], "bogus": 1}' >"$root/cm/node.json"
  run install "${args[@]}"
  expect_rc 1 "install with a node file the plugin would refuse"
  [[ $err == *"--node-file $root/cm/node.json, nothing written"*"bogus"* ]] || fail "message: $err"
  [[ ! -e $dest && $(jq -r '.plugins | length' "$terway") == 2 ]] || fail "a refused node file changed the node"
  echo '{"dataDirs": ["/run/erdma-cni"], "logFiles": ["/var/log/other.log"]}' >"$root/cm/node.json"
  run install "${args[@]}"
  expect_rc 1 "install of an entry whose logFile the node file does not allow"
  [[ $err == *"logFile"*"/var/log/erdma-cni.log"* ]] || fail "message: $err"
  [[ ! -e $dest && $(jq -r '.plugins | length' "$terway") == 2 ]] || fail "a refused entry changed the node"
  ok "a node file the plugin would refuse, and one that forbids the entry, are refused; nothing written"

  echo '{"dataDirs": ["/run/erdma-cni"], "logFiles": ["/var/log/erdma-cni.log"]}' >"$root/cm/node.json"
  run check "${args[@]}"
  expect_rc 1 "check before install"
  [[ $out == *"differs: $dest does not hold $root/cm/node.json"* ]] || fail "check: $out"
  run install "${args[@]}"
  expect_rc 0 "install with --node-file"
  cmp -s "$dest" "$root/cm/node.json" || fail "the node file is not --node-file's text"
  [[ $(stat -c '%u %g %a %F' "$dest") == "0 0 644 regular file" ]] || fail "node file: $(stat -c '%u %g %a %F' "$dest")"
  [[ $(jq -r '.plugins[1].type' "$terway") == erdma-cni ]] || fail "the entry was not inserted"
  run check "${args[@]}"
  expect_rc 0 "check after install"
  [[ $out == *"ok: $dest holds $root/cm/node.json"* ]] || fail "check: $out"
  chmod 0666 "$dest"
  run check "${args[@]}"
  expect_rc 1 "check of a node file others may write"
  run install "${args[@]}"
  expect_rc 0 "install repairs the node file's mode"
  [[ $(stat -c '%a' "$dest") == 644 ]] || fail "mode not repaired: $(stat -c '%a' "$dest")"
  ok "install writes the node file (root's 0644) before the entry; check tells a node that holds it from one that does not"
}

case "$scenario" in
  node) scenario_node ;;
  nodefile) scenario_nodefile ;;
  kubelet) scenario_kubelet ;;
  reader) scenario_reader ;;
  nocaps) scenario_nocaps ;;
  strace) scenario_strace ;;
  *) echo "usage: $0 node|nodefile|kubelet|reader|nocaps|strace" >&2; exit 2 ;;
esac
