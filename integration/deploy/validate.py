#!/usr/bin/python3
"""Checks the manifests under deploy/: each parses, and carries what a
cluster needs to run it as docs/install.md describes. The entry ConfigMap:
each recipe (<recipe>.json) a JSON object of type erdma-cni with keys of
docs/config.md's table; the installer's --entry, in install and in its
readiness probe alike, one of its keys through a configMap volume; the
example pods of each recipe (pods-<recipe>.yaml). With ERDMA_CNI_INSTALL and
ERDMA_CNI set (ctest sets them), every recipe goes through the installer's
dry run, and the installer commands the DaemonSets run are run, as written,
on a scratch copy of a Terway node's directories (scratch_node.py).

usage: validate.py DEPLOY_DIR     exit 0 all good, 1 a finding, 77 skipped
"""
import json
import os
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree

try:
    import yaml
except ImportError:
    print("SKIPPED: python3-yaml is not installed (apt-get install python3-yaml)")
    sys.exit(77)

from common import (
    GPU_TAINT,
    NETWORKS_ANNOTATION,
    NODE_DIRS,
    RESOURCE_ANNOTATION,
    SMCR_ANNOTATION,
    DNS1123,
    arg_value,
    containers_of,
    find,
    findings,
    get,
    installer_commands,
    tolerates,
)
from recipes import check_configmap, check_recipe_pods, documented_keys, entry_source
from scratch_node import run_installer_commands

ENTRY_FLAG = "--entry"
# The kubelet's pod-resources dir, which the installer asks when an entry has device.resource.
POD_RESOURCES = "/var/lib/kubelet/pod-resources"
NODE_FILE_DIR = "/etc/erdma-cni"  # where the plugin reads node.json
NRI_TOPOLOGY_DIR = "/run/erdma-cni-nri"  # erdma-cni-nri's default --topology-dir
# Options of install that check and uninstall do not take.
INSTALL_ONLY = ("--every",)


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


def check_image(where, c):
    image = c.get("image")
    if not isinstance(image, str) or not image:
        find(where, "image: missing")
    elif "@" not in image and (":" not in image.rsplit("/", 1)[-1]):
        find(where, f"image {image}: no tag; pin a version")


WITH_VALUE = {"--bin-dir", "--conf-dir", "--conflist", "--after", "--position", "--entry", "--source", "--every"}


def options(args):
    """An installer command line's options as (flag, value) pairs, in order."""
    out, i = [], 1
    while i < len(args):
        flag, eq, value = args[i].partition("=")
        if not eq and flag in WITH_VALUE and i + 1 < len(args):
            value, i = args[i + 1], i + 1
        out.append((flag, value if (eq or flag in WITH_VALUE) else None))
        i += 1
    return out


def check_daemonset(where, doc, entry_refs):
    """entry_refs gets (where, what, (namespace, ConfigMap, key)) for each
    --entry, to be found among the ConfigMaps of deploy/."""
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
            if "configMap" in v:
                continue
            if "hostPath" not in v:
                find(cw, f"volumeMount {m.get('name')}: neither a hostPath nor a configMap volume")
                continue
            host_paths[m.get("mountPath")] = get(v, "hostPath", "path")
        commands = installer_commands(c)
        for what, args in commands:
            for node_dir, flag in NODE_DIRS.items():
                inside = arg_value(args, flag)
                if inside is None:
                    find(cw, f"{what}: {flag} missing (the node's {node_dir} is mounted elsewhere)")
                elif host_paths.get(inside) != node_dir:
                    find(cw, f"{what}: {flag}={inside} is not the mount of the node's {node_dir}")
            if args and args[0] in ("install", "check"):
                if arg_value(args, "--node-file") is None:
                    find(cw, f"{what}: --node-file missing: each node's {NODE_FILE_DIR}/node.json would be "
                             "written by hand (docs/install.md)")
                entry = arg_value(args, ENTRY_FLAG)
                if entry is None:
                    find(cw, f"{what}: {ENTRY_FLAG} missing: the installer would write its built-in entry, "
                             "not the recipe of the entry ConfigMap (docs/install.md)")
                else:
                    ns = get(doc, "metadata", "namespace") or "default"
                    entry_refs.append((cw, what, entry_source(cw, what, entry, c.get("volumeMounts") or [], volumes, ns)))
        check_probe(cw, commands)
        if (c.get("command") or [""])[0].endswith("/erdma-cni-nri"):
            topo = arg_value(c.get("args") or [], "--topology-dir")
            topo = NRI_TOPOLOGY_DIR if topo is None else topo
            own = {m.get("mountPath"): m for m in c.get("volumeMounts") or []}
            if topo and (topo not in own or own[topo].get("readOnly") or host_paths.get(topo) != topo):
                find(cw, f"--topology-dir {topo}: not the node's {topo} mounted writable at its own path; the "
                         "runtime bind-mounts the NCCL topology files from the node's path (docs/nri.md)")
    for path in NODE_DIRS:
        if path not in host_paths.values():
            find(where, f"no hostPath volume mounts the node's {path}")
    if any(args and args[0] == "install" and arg_value(args, "--node-file") is not None
           for _, c in containers for _, args in installer_commands(c)) and \
            host_paths.get(NODE_FILE_DIR) != NODE_FILE_DIR:
        find(where, f"no hostPath volume mounts the node's {NODE_FILE_DIR} at its own path: --node-file would be "
                    "written where the plugin does not read it")
    if any(args and args[0] == "install" for _, c in containers for _, args in installer_commands(c)) and \
            host_paths.get(POD_RESOURCES) != POD_RESOURCES:
        find(where, f"no hostPath volume mounts the node's {POD_RESOURCES} at its own path: an entry with "
                    "device.resource would stay out of the conflist, the kubelet's socket unreachable")


def check_node_configmap(where, doc):
    """The node file's ConfigMap: one key, node.json, a JSON object. What its
    keys say the installer judges, as the plugin will (run below)."""
    data = doc.get("data") or {}
    if set(data) != {"node.json"}:
        find(where, f"data: the node file's ConfigMap holds node.json alone, not {sorted(data)}")
    try:
        node = json.loads(data.get("node.json") or "")
    except ValueError as e:
        find(where, f"data.node.json: not JSON: {e}")
        return
    if not isinstance(node, dict):
        find(where, "data.node.json: not a JSON object (docs/config.md#node-file)")


def check_probe(cw, commands):
    """A container that runs install is Ready when check, with install's
    options less --every, passes: the node's conflist holds that entry."""
    installs = [args for what, args in commands if what == "command" and args and args[0] == "install"]
    if not installs:
        return
    probes = [args for what, args in commands if what == "readinessProbe" and args and args[0] == "check"]
    if not probes:
        find(cw, "readinessProbe: no erdma-cni-install check: a Ready pod must mean the node's conflist holds the entry")
        return
    want = [o for o in options(installs[0]) if o[0] not in INSTALL_ONLY]
    if sorted(options(probes[0])) != sorted(want):
        have = " ".join(f"{f}={v}" if v is not None else f for f, v in options(probes[0]))
        need = " ".join(f"{f}={v}" if v is not None else f for f, v in want)
        find(cw, f"readinessProbe: check {have} does not ask what install does ({need}); give it install's options")


def check_daemonsets_agree(daemonsets):
    """The uninstaller runs where the installer ran, on the same node files."""
    install = uninstall = None
    for where, doc in daemonsets:
        for _, c in containers_of(get(doc, "spec", "template", "spec") or {}):
            for what, args in installer_commands(c):
                if what == "command" and args and args[0] in ("install", "uninstall"):
                    if args[0] == "install":
                        install = (where, doc, args)
                    else:
                        uninstall = (where, doc, args)
    if not install or not uninstall:
        return
    (iw, idoc, iargs), (uw, udoc, uargs) = install, uninstall
    for field in ("nodeSelector", "tolerations"):
        a, b = get(idoc, "spec", "template", "spec", field), get(udoc, "spec", "template", "spec", field)
        if a != b:
            find(uw, f"{field} {b!r} differs from {iw}'s {a!r}: the uninstaller must run on every node the installer did")
    for flag in ("--conflist",) + tuple(NODE_DIRS.values()):
        if arg_value(iargs, flag) != arg_value(uargs, flag):
            find(uw, f"uninstall {flag}={arg_value(uargs, flag)} differs from install's {arg_value(iargs, flag)}")


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


def manifests(deploy):
    """Every *.yaml under deploy/, as paths relative to it."""
    out = []
    for dirpath, _, names in os.walk(deploy):
        for n in names:
            if n.endswith((".yaml", ".yml")):
                out.append(os.path.relpath(os.path.join(dirpath, n), deploy))
    return sorted(out)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    deploy = sys.argv[1]
    config_md = os.path.join(deploy, "..", "docs", "config.md")
    rows = documented_keys(config_md) if os.path.exists(config_md) else {}
    if not rows:
        find(config_md, "no table of keys: the entries' keys cannot be checked")
    files = manifests(deploy)
    if not files:
        find(deploy, "no manifests")
    nads, seen, count = {}, set(), 0
    daemonsets, containers, configmap_docs, entries, entry_refs, pods_by_file = [], [], [], {}, [], {}
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
                check_daemonset(where, doc, entry_refs)
                daemonsets.append((where, doc))
                pod = get(doc, "spec", "template", "spec") or {}
                volumes = {v.get("name"): v for v in pod.get("volumes") or []}
                ns = get(doc, "metadata", "namespace") or "default"
                containers += [(where, c, volumes, ns) for _, c in containers_of(pod)]
            elif kind == "ConfigMap":
                if "node.json" in (doc.get("data") or {}):
                    check_node_configmap(where, doc)
                else:
                    check_configmap(where, doc, rows, entries)
                configmap_docs.append(doc)
            elif kind == "NetworkAttachmentDefinition":
                check_nad(where, doc, nads)
            elif kind == "Pod":
                pods_by_file.setdefault(name, []).append((where, doc))
            else:
                find(where, f"kind {kind!r}: this check knows DaemonSet, ConfigMap, NetworkAttachmentDefinition and Pod")
    for where, doc in [p for pods in pods_by_file.values() for p in pods]:  # after every NAD is known
        check_pod(where, doc, nads, seen)
    for example in ("exclusive", "smcr"):
        if example not in seen:
            find(deploy, f"no example pod of the {example} kind")
    for where, what, source in entry_refs:
        if source and source not in entries:
            find(where, f"{what}: --entry reads key {source[2]} of ConfigMap {source[0]}/{source[1]}, "
                        "which deploy/ does not hold as a valid entry")
    check_daemonsets_agree(daemonsets)
    node_selector = {}
    for where, doc in daemonsets:
        if any(a and a[0] == "install" for _, c in containers_of(get(doc, "spec", "template", "spec") or {})
               for _, a in installer_commands(c)):
            node_selector = {k: v for k, v in (get(doc, "spec", "template", "spec", "nodeSelector") or {}).items()
                             if k != "kubernetes.io/os"}
    if not entries:
        find(deploy, "no ConfigMap holds an erdma-cni entry for the installer (docs/install.md)")
    check_recipe_pods(entries, pods_by_file, node_selector)
    installer, plugin = os.environ.get("ERDMA_CNI_INSTALL"), os.environ.get("ERDMA_CNI")
    if installer and plugin:
        configmaps = {}  # as written, for the installer to read
        for doc in configmap_docs:
            ns, cm = get(doc, "metadata", "namespace") or "default", get(doc, "metadata", "name")
            configmaps[(ns, cm)] = {k: v for k, v in (doc.get("data") or {}).items() if isinstance(v, str)}
        run_installer_commands(installer, plugin, containers, configmaps, entries,
                               [s for _, _, s in entry_refs if s in entries])
    else:
        print("note: ERDMA_CNI_INSTALL/ERDMA_CNI not set; the DaemonSets' commands were not run")
    for f in findings:
        print("FAIL " + f)
    print(f"{count} manifests in {len(files)} files, {len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
