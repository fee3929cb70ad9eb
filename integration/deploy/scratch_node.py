"""The DaemonSets' installer commands, as written, on a scratch copy of a
Terway node: each volume a directory (a hostPath the node's, a configMap
laid out as the kubelet lays it out), each path argument mapped through
the container's mounts."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time

from common import arg_value, find, get, installer_commands, mount_of

CONFLIST = "10-terway.conflist"
PATH_FLAGS = ("--bin-dir", "--conf-dir", "--entry", "--source", "--node-file")
NODE_FILE = "/etc/erdma-cni/node.json"  # where the plugin reads the node file


def run(argv, expect_rc, expect_out, where, no_warning=False):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    bad = p.returncode != expect_rc or (expect_out and expect_out not in p.stdout)
    if bad or (no_warning and "warning:" in p.stderr):
        find(where, f"{' '.join(argv)} exited {p.returncode} (expected {expect_rc}"
             f"{', output with ' + repr(expect_out) if expect_out else ''}"
             f"{', no warning' if no_warning else ''}):\n{p.stdout}{p.stderr}")
    return p


def project_configmap(dir, files):
    """A configMap volume as the kubelet writes it: the files in a timestamped
    directory, ..data a symlink to it, each name a symlink through ..data.
    Called again, it swaps ..data atomically, as the kubelet does on an update."""
    os.makedirs(dir, exist_ok=True)
    stamp = tempfile.mkdtemp(prefix=time.strftime("..%Y_%m_%d_%H_%M_%S."), dir=dir)
    for name, text in files.items():
        with open(os.path.join(stamp, name), "w") as f:
            f.write(text)
    tmp = os.path.join(dir, "..data_tmp")
    os.symlink(os.path.basename(stamp), tmp)
    os.replace(tmp, os.path.join(dir, "..data"))
    for name in files:
        link = os.path.join(dir, name)
        if not os.path.islink(link):
            os.symlink(os.path.join("..data", name), link)


class ScratchNode:
    def __init__(self, root, configmaps):
        self.root = root
        self.configmaps = configmaps  # (namespace, name) -> data
        self.projected = []  # (dir, the volume's configMap, namespace)
        os.makedirs(self.host("/opt/cni/bin"))
        os.makedirs(self.host("/etc/cni/net.d"))
        with open(self.host("/etc/cni/net.d/" + CONFLIST), "w") as f:
            json.dump({"cniVersion": "0.4.0", "name": "terway-chainer",
                       "plugins": [{"type": "terway", "eniip_virtual_type": "IPVlan"},
                                   {"type": "portmap", "capabilities": {"portMappings": True}}]}, f, indent=2)

    def host(self, path):
        return self.root + "/node" + path

    def volume_dir(self, volume, ns):
        """Where a volume lives on the scratch node; a configMap's is projected."""
        if "hostPath" in volume:
            return self.host(get(volume, "hostPath", "path"))
        cm = volume.get("configMap")
        if isinstance(cm, dict):
            dir = f"{self.root}/configmaps/{volume.get('name')}"
            if not os.path.exists(dir):
                self.project(dir, cm, self.configmaps.get((ns, cm.get("name"))) or {})
                self.projected.append((dir, cm, ns))
            return dir
        return None

    def project(self, dir, cm, data):
        items = cm.get("items") or [{"key": k, "path": k} for k in data]
        project_configmap(dir, {i["path"]: data[i["key"]] for i in items if i.get("key") in data})

    def localize(self, args, mounts, volumes, ns):
        """args with each path argument moved to the scratch node."""
        def move(value):
            m, rel = mount_of(value, mounts)
            dir = m and self.volume_dir(volumes.get(m.get("name")) or {}, ns)
            return (os.path.join(dir, rel) if rel else dir) if dir else value

        out, i = [], 0
        while i < len(args):
            a = args[i]
            flag, eq, value = a.partition("=")
            if flag in PATH_FLAGS and eq:
                out.append(f"{flag}={move(value)}")
            elif a in PATH_FLAGS and i + 1 < len(args):
                out += [a, move(args[i + 1])]
                i += 1
            elif not a.startswith("--every"):
                out.append(a)
            i += 1
        return out


def run_installer_commands(installer, plugin, daemonsets, configmaps, entries, entry_sources):
    """daemonsets: (where, container, volumes by name, namespace); configmaps:
    (namespace, name) -> {key: text}; entries: the valid recipes, by
    (namespace, ConfigMap, key); entry_sources: those the installer's --entry
    reads. Every recipe through a dry
    run, then in the order a cluster sees: the probe fails, install (dry run,
    then real), the probe passes, a ConfigMap edit switches the recipe,
    uninstall."""
    root = tempfile.mkdtemp(prefix="erdma-deploy-")
    kubelet = None
    try:
        # The node's kubelet, for the recipes with device.resource. A node file
        # the DaemonSet puts in place (--node-file, from a ConfigMap) names the
        # node's socket path: on the scratch node the fake kubelet's stands in.
        kubelet = FakeKubelet(root)
        node = ScratchNode(root, with_scratch_socket(configmaps, kubelet.socket))
        os.makedirs(os.path.dirname(node.host(NODE_FILE)))
        commands = []
        for where, c, volumes, ns in daemonsets:
            for what, args in installer_commands(c):
                local = [installer] + node.localize(args, c.get("volumeMounts") or [], volumes, ns)
                if args and args[0] in ("install", "check"):
                    # The node file's place on the scratch node; without
                    # --node-file, one that names the fake kubelet.
                    given = arg_value(args, "--node-file") is not None
                    local += ["--node-config", node.host(NODE_FILE) if given else kubelet.node_file]
                commands.append((f"{where} {what}", args, local))
        installs = [(w, local) for w, args, local in commands if args and args[0] == "install"]
        checks = [(w, local) for w, args, local in commands if args and args[0] == "check"]
        if not installs:
            find("deploy", "no DaemonSet runs erdma-cni-install install")
        src = ["--source", plugin]
        if installs:
            check_every_recipe(node, installs[0], configmaps, entries, src, kubelet)
        for w, local in checks:
            run(local + src, 1, "differs:", f"{w} before install")
        for w, local in installs:
            run(local + src + ["--dry-run"], 0, "would have inserted the erdma-cni entry at position 1 (after terway)", w)
            run(local + src, 0, "inserted the erdma-cni entry", w, no_warning=True)
            check_node_file(node, local, w)
        for w, local in checks:
            run(local + src, 0, "ok:", f"{w} after install")
        if installs:
            switch_recipe(node, installs, checks, configmaps, entries, entry_sources, src)
        for w, args, local in commands:
            if args and args[0] == "uninstall":
                run(local, 0, "removed the erdma-cni entry", w)
                if os.path.exists(node.host("/opt/cni/bin/erdma-cni")) == ("--remove-binary" in args):
                    find(w, "the binary is not where --remove-binary says it should be")
    finally:
        if kubelet:
            kubelet.stop()
        shutil.rmtree(root)


def with_entry(local, path):
    out = [a for a in local if not a.startswith("--entry=")]
    if "--entry" in out:
        i = out.index("--entry")
        del out[i:i + 2]
    return out + ["--entry", path]


class FakeKubelet:
    """test/fake_kubelet/ answering on a socket under root, and a node file
    naming it (node_file); dead_node_file names a socket nobody serves."""

    def __init__(self, root):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test/fake_kubelet")
        self.socket = f"{root}/kubelet.sock"
        self.node_file, self.dead_node_file = f"{root}/node.json", f"{root}/node-dead.json"
        for path, sock in ((self.node_file, self.socket), (self.dead_node_file, f"{root}/nobody.sock")):
            with open(path, "w") as f:
                json.dump({"podResourcesSocket": sock}, f)
            os.chmod(path, 0o644)
        self.log = open(f"{root}/kubelet.log", "w")
        self.proc = subprocess.Popen([f"{script}/fake_kubelet.py", "--socket", self.socket,
                                      "--pods", f"{script}/pods.json", "--mode", "get"],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(300):
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(self.socket)
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the fake kubelet did not start: {open(self.log.name).read()}")

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        self.log.close()


def check_every_recipe(node, install, configmaps, entries, src, kubelet):
    """Each recipe of the ConfigMap, given to the DaemonSet's install as a dry
    run on the node before install: the installer (with the plugin's own
    parser) takes it without a warning and inserts it as written; a recipe
    with device.resource only while the kubelet answers (the fake one), and
    is left out with exit 1 naming the socket while none does."""
    where, local = install
    # A node of its own, whose plugin is the source itself (a symlink): the
    # dry runs are about the entry, and skip reading the binary.
    bin_dir, conf_dir = f"{node.root}/recipes/bin", f"{node.root}/recipes/net.d"
    os.makedirs(bin_dir)
    shutil.copytree(node.host("/etc/cni/net.d"), conf_dir)
    os.symlink(src[1], f"{bin_dir}/erdma-cni")
    local = [a.replace(node.host("/opt/cni/bin"), bin_dir).replace(node.host("/etc/cni/net.d"), conf_dir)
             for a in local]
    for (ns, name), data in sorted(configmaps.items()):
        for key, text in sorted((k, t) for k, t in data.items() if (ns, name, k) in entries):
            path = f"{node.root}/recipe-{key}"
            with open(path, "w") as f:
                f.write(text)
            recipe = f"ConfigMap {ns}/{name} data.{key}"
            p = run(with_entry(local, path) + src + ["--dry-run"], 0,
                    "would have inserted the erdma-cni entry at position 1 (after terway)",
                    f"{recipe} as the entry of {where}", no_warning=True)
            if p.returncode == 0 and json.loads(text) not in conflist_entries(p.stdout):
                find(recipe, f"the dry run's conflist does not hold the entry as written:\n{p.stdout}")
            if "resource" in (json.loads(text).get("device") or {}):
                dead = [kubelet.dead_node_file if a == kubelet.node_file
                        else "--node-file=" + kubelet.dead_node_file if a.startswith("--node-file=")
                        else a for a in local]
                p = run(with_entry(dead, path) + src + ["--dry-run"], 1,
                        "no erdma-cni entry", f"{recipe} with no kubelet answering")
                if "nobody.sock" not in p.stderr or "does not answer" not in p.stderr:
                    find(recipe, f"with no kubelet answering, the installer does not name the socket:\n{p.stderr}")


def with_scratch_socket(configmaps, sock):
    """The ConfigMaps, a node file's podResourcesSocket (a data key node.json)
    moved to the scratch node's kubelet."""
    out = {}
    for key, data in configmaps.items():
        out[key] = dict(data)
        text = data.get("node.json")
        try:
            doc = json.loads(text) if text else None
        except ValueError:
            doc = None  # the installer says what is wrong with it
        if isinstance(doc, dict) and "podResourcesSocket" in doc:
            out[key]["node.json"] = json.dumps(dict(doc, podResourcesSocket=sock))
    return out


def check_node_file(node, local, where):
    """After install, the node file is the --node-file's text, root's, 0644."""
    src = arg_value(local, "--node-file")
    if src is None:
        return
    dest = node.host(NODE_FILE)
    try:
        st = os.lstat(dest)
        same = open(dest).read() == open(src).read()
    except OSError as e:
        find(where, f"install did not put the node file in place: {e}")
        return
    if not same or st.st_uid != 0 or (st.st_mode & 0o7777) != 0o644:
        find(where, f"{dest} is not --node-file's text as root's 0644 file (mode {oct(st.st_mode)}, uid {st.st_uid})")


def conflist_entries(out):
    """The erdma-cni entries of the conflist a dry run printed."""
    start = out.find("{")
    try:
        doc = json.loads(out[start:]) if start >= 0 else {}
    except ValueError:
        return []
    return [e for e in doc.get("plugins") or [] if e.get("type") == "erdma-cni"]


def switch_recipe(node, installs, checks, configmaps, entries, entry_sources, src):
    """An edit of the ConfigMap's selected key reaches the running DaemonSet:
    the kubelet swaps the projected file, the probe fails, the next install
    round updates the entry, the probe passes."""
    if not entry_sources:
        return
    ns, name, key = entry_sources[0]
    data = configmaps.get((ns, name)) or {}
    other = next((k for k in sorted(data)
                  if (ns, name, k) in entries and entries[(ns, name, k)] != entries[(ns, name, key)]), None)
    if other is None:
        return
    edited = dict(data, **{key: data[other]})
    for dir, cm, cm_ns in node.projected:
        if (cm_ns, cm.get("name")) == (ns, name):
            node.project(dir, cm, edited)
    where = f"ConfigMap {ns}/{name} data.{key} replaced by data.{other}"
    for w, local in checks:
        run(local + src, 1, "differs:", f"{where}: {w}")
    for w, local in installs:
        run(local + src, 0, "updated the erdma-cni entry", f"{where}: {w}")
    for w, local in checks:
        run(local + src, 0, "ok:", f"{where}: {w}")
