#!/usr/bin/python3
"""Checks the manifests in deploy/: each parses, and carries what a cluster
needs to run it as docs/install.md describes. With ERDMA_CNI_INSTALL and
ERDMA_CNI set (ctest sets them), the installer commands the DaemonSets run
are also run, as written, on a scratch copy of a Terway node's directories.

usage: validate.py DEPLOY_DIR     exit 0 all good, 1 a finding, 77 skipped
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("SKIPPED: python3-yaml is not installed (apt-get install python3-yaml)")
    sys.exit(77)

INSTALLER = "/usr/sbin/erdma-cni-install"
RESOURCE_ANNOTATION = "k8s.v1.cni.cncf.io/resourceName"
NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
SMCR_ANNOTATION = "network.alibabacloud.com/erdma-smcr"
NODE_DIRS = {"/opt/cni/bin": "--bin-dir", "/etc/cni/net.d": "--conf-dir"}
DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# A GPU node's taint: the DaemonSet must still run there.
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}

findings = []


def find(where, msg):
    findings.append(f"{where}: {msg}")


def get(obj, *path):
    for key in path:
        if not isinstance(obj, dict) or key not in obj:
            return None
        obj = obj[key]
    return obj


def tolerates(tolerations, taint):
    """Kubernetes' rule: one toleration matches the taint's key, value and effect."""
    for t in tolerations or []:
        effect_ok = not t.get("effect") or t["effect"] == taint["effect"]
        op = t.get("operator", "Equal")
        if op == "Exists":
            key_ok = not t.get("key") or t["key"] == taint["key"]
            if key_ok and effect_ok:
                return True
        elif op == "Equal" and t.get("key") == taint["key"] and str(t.get("value", "")) == taint["value"]:
            if effect_ok:
                return True
    return False


def check_common(where, doc):
    for key in ("apiVersion", "kind"):
        if not isinstance(doc.get(key), str) or not doc[key]:
            find(where, f"{key}: missing")
    name = get(doc, "metadata", "name")
    if not isinstance(name, str) or not DNS1123.match(name):
        find(where, f"metadata.name: missing or not a DNS name: {name!r}")
    for field in ("labels", "annotations"):
        for k, v in (get(doc, "metadata", field) or {}).items():
            # YAML true is a bool; the API server refuses anything but strings.
            if not isinstance(v, str):
                find(where, f"metadata.{field}.{k}: {v!r} must be a string (quote it)")


def containers_of(pod_spec):
    return [("initContainers", c) for c in pod_spec.get("initContainers") or []] + [
        ("containers", c) for c in pod_spec.get("containers") or []
    ]


def check_image(where, c):
    image = c.get("image")
    if not isinstance(image, str) or not image:
        find(where, "image: missing")
    elif "@" not in image and (":" not in image.rsplit("/", 1)[-1]):
        find(where, f"image {image}: no tag; pin a version")


def arg_value(args, flag):
    for i, a in enumerate(args):
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
        if a == flag and i + 1 < len(args):
            return args[i + 1]
    return None


def installer_commands(c):
    """The installer command lines of a container: its command+args, its probe's."""
    out = []
    cmd = (c.get("command") or []) + (c.get("args") or [])
    if cmd and cmd[0] == INSTALLER:
        out.append(("command", cmd[1:]))
    probe = get(c, "readinessProbe", "exec", "command") or []
    if probe and probe[0] == INSTALLER:
        out.append(("readinessProbe", probe[1:]))
    return out


def check_daemonset(where, doc):
    if doc.get("apiVersion") != "apps/v1":
        find(where, f"apiVersion: apps/v1 expected, got {doc.get('apiVersion')!r}")
    spec = doc.get("spec") or {}
    selector = get(spec, "selector", "matchLabels") or {}
    labels = get(spec, "template", "metadata", "labels") or {}
    if not selector:
        find(where, "spec.selector.matchLabels: missing")
    for k, v in selector.items():
        if labels.get(k) != v:
            find(where, f"spec.selector.matchLabels.{k}={v} does not match the template's labels")
    pod = get(spec, "template", "spec") or {}
    if not pod.get("nodeSelector"):
        find(where, "nodeSelector: missing (the DaemonSet belongs on RDMA nodes only)")
    if not tolerates(pod.get("tolerations"), GPU_TAINT):
        find(where, "tolerations: a GPU node's nvidia.com/gpu:NoSchedule taint is not tolerated")
    volumes = {v.get("name"): v for v in pod.get("volumes") or []}
    host_paths = {}
    containers = containers_of(pod)
    if not containers:
        find(where, "no containers")
    for kind, c in containers:
        cw = f"{where}: {kind}/{c.get('name')}"
        check_image(cw, c)
        sc = c.get("securityContext")
        if not isinstance(sc, dict):
            find(cw, "securityContext: missing")
            sc = {}
        if sc.get("privileged"):
            find(cw, "privileged: copying files into root-owned dirs needs none")
        if sc.get("allowPrivilegeEscalation") is not False:
            find(cw, "securityContext.allowPrivilegeEscalation: must be false")
        if sc.get("readOnlyRootFilesystem") is not True:
            find(cw, "securityContext.readOnlyRootFilesystem: must be true")
        if "ALL" not in (get(sc, "capabilities", "drop") or []):
            find(cw, "securityContext.capabilities.drop: must hold ALL")
        if get(sc, "capabilities", "add"):
            find(cw, "securityContext.capabilities.add: the installer needs no capability (root's uid owns the files)")
        if not get(c, "resources", "requests"):
            find(cw, "resources.requests: missing")
        for m in c.get("volumeMounts") or []:
            v = volumes.get(m.get("name"))
            if v is None:
                find(cw, f"volumeMount {m.get('name')}: no such volume")
                continue
            if "hostPath" not in v:
                find(cw, f"volumeMount {m.get('name')}: not a hostPath volume")
                continue
            host_paths[m.get("mountPath")] = get(v, "hostPath", "path")
        for what, args in installer_commands(c):
            for node_dir, flag in NODE_DIRS.items():
                inside = arg_value(args, flag)
                if inside is None:
                    find(cw, f"{what}: {flag} missing (the node's {node_dir} is mounted elsewhere)")
                elif host_paths.get(inside) != node_dir:
                    find(cw, f"{what}: {flag}={inside} is not the mount of the node's {node_dir}")
    for path in NODE_DIRS:
        if path not in host_paths.values():
            find(where, f"no hostPath volume mounts the node's {path}")


def check_nad(where, doc, nads):
    if doc.get("apiVersion") != "k8s.cni.cncf.io/v1":
        find(where, f"apiVersion: k8s.cni.cncf.io/v1 expected, got {doc.get('apiVersion')!r}")
    resource = get(doc, "metadata", "annotations", RESOURCE_ANNOTATION)
    if not isinstance(resource, str) or not resource:
        find(where, f"metadata.annotations.{RESOURCE_ANNOTATION}: missing (Multus passes no deviceID without it)")
    config = get(doc, "spec", "config")
    if not isinstance(config, str):
        find(where, "spec.config: missing or not a string of JSON")
        return
    try:
        conf = json.loads(config)
    except ValueError as e:
        find(where, f"spec.config: not JSON: {e}")
        return
    if conf.get("type") != "erdma-cni":
        find(where, f"spec.config: type {conf.get('type')!r}, expected erdma-cni")
    for key in ("cniVersion", "name"):
        if not isinstance(conf.get(key), str):
            find(where, f"spec.config: {key} missing")
    ns = get(doc, "metadata", "namespace") or "default"
    nads[(ns, get(doc, "metadata", "name"))] = resource


def check_pod(where, doc, nads, seen):
    if doc.get("apiVersion") != "v1":
        find(where, f"apiVersion: v1 expected, got {doc.get('apiVersion')!r}")
    annotations = get(doc, "metadata", "annotations") or {}
    containers = [c for _, c in containers_of(doc.get("spec") or {})]
    if not containers:
        find(where, "no containers")
    for c in containers:
        check_image(f"{where}: {c.get('name')}", c)
    ns = get(doc, "metadata", "namespace") or "default"
    if NETWORKS_ANNOTATION in annotations:
        seen.add("exclusive")
        for net in str(annotations[NETWORKS_ANNOTATION]).split(","):
            net = net.strip()
            net_ns, _, net_name = net.rpartition("/")
            key = (net_ns or ns, net_name)
            if key not in nads:
                find(where, f"{NETWORKS_ANNOTATION}: no NetworkAttachmentDefinition {key[0]}/{key[1]} in deploy/")
                continue
            limits = [get(c, "resources", "limits") or {} for c in containers]
            if not any(nads[key] in lim for lim in limits):
                find(where, f"no container asks for {nads[key]} (resources.limits): Multus would pass no device")
        caps = [a for c in containers for a in get(c, "securityContext", "capabilities", "add") or []]
        if "IPC_LOCK" not in caps:
            find(where, "no container has IPC_LOCK: RDMA memory registration pins memory")
    if SMCR_ANNOTATION in annotations:
        seen.add("smcr")
        if annotations[SMCR_ANNOTATION] != "true":
            find(where, f'{SMCR_ANNOTATION}: must be the string "true", got {annotations[SMCR_ANNOTATION]!r}')


def run(argv, expect_rc, expect_out, where):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if p.returncode != expect_rc or (expect_out and expect_out not in p.stdout):
        find(where, f"{' '.join(argv)} exited {p.returncode} (expected {expect_rc}"
             f"{', output with ' + repr(expect_out) if expect_out else ''}):\n{p.stdout}{p.stderr}")
    return p


def run_installer_commands(daemonsets):
    """The DaemonSets' installer commands, as written, against a scratch node."""
    installer = os.environ.get("ERDMA_CNI_INSTALL")
    plugin = os.environ.get("ERDMA_CNI")
    if not installer or not plugin:
        print("note: ERDMA_CNI_INSTALL/ERDMA_CNI not set; the DaemonSets' commands were not run")
        return
    root = tempfile.mkdtemp(prefix="erdma-deploy-")
    try:
        host = os.path.join(root, "host")
        os.makedirs(host + "/opt/cni/bin")
        os.makedirs(host + "/etc/cni/net.d")
        with open(host + "/etc/cni/net.d/10-terway.conflist", "w") as f:
            json.dump({"cniVersion": "0.4.0", "name": "terway-chainer",
                       "plugins": [{"type": "terway", "eniip_virtual_type": "IPVlan"},
                                   {"type": "portmap", "capabilities": {"portMappings": True}}]}, f, indent=2)

        def localize(args):
            out = [a.replace("=/host/", "=" + host + "/") for a in args if not a.startswith("--every")]
            return [installer] + out

        commands = [(where, what, args) for where, c in daemonsets for what, args in installer_commands(c)]
        if not any(args and args[0] == "install" for _, _, args in commands):
            find("deploy", "no DaemonSet runs erdma-cni-install install")
        # In the order a cluster sees them: probe fails, install, probe passes, uninstall.
        for where, what, args in commands:
            if args[0] == "check":
                run(localize(args) + ["--source", plugin], 1, "differs:", f"{where} {what} before install")
        for where, what, args in commands:
            if args[0] == "install":
                run(localize(args) + ["--source", plugin, "--dry-run"], 0,
                    "would have inserted the erdma-cni entry at position 1 (after terway)", f"{where} {what}")
                run(localize(args) + ["--source", plugin], 0, "inserted the erdma-cni entry", f"{where} {what}")
        for where, what, args in commands:
            if args[0] == "check":
                run(localize(args) + ["--source", plugin], 0, "ok:", f"{where} {what} after install")
        for where, what, args in commands:
            if args[0] == "uninstall":
                run(localize(args), 0, "removed the erdma-cni entry", f"{where} {what}")
                if os.path.exists(host + "/opt/cni/bin/erdma-cni") == ("--remove-binary" in args):
                    find(f"{where} {what}", "the binary is not where --remove-binary says it should be")
    finally:
        shutil.rmtree(root)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    deploy = sys.argv[1]
    files = sorted(f for f in os.listdir(deploy) if f.endswith((".yaml", ".yml")))
    if not files:
        find(deploy, "no manifests")
    nads, seen, daemonsets, pods, count = {}, set(), [], [], 0
    for name in files:
        try:
            with open(os.path.join(deploy, name)) as f:
                docs = [d for d in yaml.safe_load_all(f) if d is not None]
        except yaml.YAMLError as e:
            find(name, f"not YAML: {e}")
            continue
        for i, doc in enumerate(docs):
            where = f"{name}[{i}] {doc.get('kind') if isinstance(doc, dict) else '?'}"
            if not isinstance(doc, dict):
                find(where, "not a mapping")
                continue
            count += 1
            check_common(where, doc)
            kind = doc.get("kind")
            if kind == "DaemonSet":
                check_daemonset(where, doc)
                for _, c in containers_of(get(doc, "spec", "template", "spec") or {}):
                    daemonsets.append((where, c))
            elif kind == "NetworkAttachmentDefinition":
                check_nad(where, doc, nads)
            elif kind == "Pod":
                pods.append((where, doc))
            else:
                find(where, f"kind {kind!r}: this check knows DaemonSet, NetworkAttachmentDefinition and Pod")
    for where, doc in pods:  # after every NAD is known
        check_pod(where, doc, nads, seen)
    for example in ("exclusive", "smcr"):
        if example not in seen:
            find(deploy, f"no example pod of the {example} kind")
    run_installer_commands(daemonsets)
    for f in findings:
        print("FAIL " + f)
    print(f"{count} manifests in {len(files)} files, {len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
