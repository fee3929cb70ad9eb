"""The recipes: the erdma-cni entries the ConfigMap carries (one data key
per recipe, <recipe>.json) and the example pods of each (pods-<recipe>.yaml)."""
import json
import re

from common import (
    GPU_TAINT,
    POD_ANNOTATIONS_CAPABILITY,
    POOL_ANNOTATION,
    SMCR_ANNOTATION,
    containers_of,
    find,
    get,
    mount_of,
    tolerates,
)

# Keys of an entry that the runtime reads, not erdma-cni (libcni's).
LIBCNI_KEYS = {"capabilities"}
HOSTNAME = "kubernetes.io/hostname"


def documented_keys(config_md):
    """docs/config.md's table of keys: each key (a.b) and the text of its row."""
    rows, in_keys = {}, False
    with open(config_md) as f:
        for line in f:
            if line.startswith("## "):
                in_keys = line.strip() == "## Keys"
            elif in_keys and line.startswith("| `"):
                cells = line.split("|")
                for key in re.findall(r"`([^`]+)`", cells[1]):
                    rows[key] = "|".join(cells[2:])
    return rows


def undocumented_keys(entry, rows, prefix=""):
    """The key paths of an entry that docs/config.md does not list: a key is
    known by a row of its own or of a key below it, a row `parent.*`, or its
    name in backquotes in the parent's row. An object is looked into only
    where rows go deeper."""
    out = []
    parent = prefix[:-1]
    for k, v in entry.items():
        path = prefix + k
        if not prefix and k in LIBCNI_KEYS:
            continue
        deeper = any(r.startswith(path + ".") for r in rows)
        known = path in rows or deeper or (parent and (parent + ".*" in rows or f"`{k}`" in rows.get(parent, "")))
        if not known:
            out.append(path)
        elif isinstance(v, dict) and deeper:
            out.extend(undocumented_keys(v, rows, path + "."))
    return out


def check_configmap(where, doc, rows, entries):
    """A ConfigMap of entries: each data key <recipe>.json holds one JSON
    object of type erdma-cni with keys erdma-cni knows."""
    if doc.get("apiVersion") != "v1":
        find(where, f"apiVersion: v1 expected, got {doc.get('apiVersion')!r}")
    data = doc.get("data")
    if not isinstance(data, dict) or not data:
        find(where, "data: missing or empty (one key per recipe, <recipe>.json)")
        return
    ns = get(doc, "metadata", "namespace") or "default"
    name = get(doc, "metadata", "name")
    for key, text in data.items():
        kw = f"{where}: data.{key}"
        if not re.match(r"^[a-z0-9][-a-z0-9]*\.json$", key):
            find(kw, "an entry's key is <recipe>.json, the recipe in lower case and dashes")
            continue
        if not isinstance(text, str):
            find(kw, "not a string (use a | block)")
            continue
        try:
            entry = json.loads(text)
        except ValueError as e:
            find(kw, f"not JSON: {e}")
            continue
        if not isinstance(entry, dict) or entry.get("type") != "erdma-cni":
            find(kw, 'not a JSON object with "type": "erdma-cni"')
            continue
        for path in undocumented_keys(entry, rows):
            find(kw, f"key {path} is not in docs/config.md's table of keys (a typo? the plugin ignores keys it does not know)")
        entries[(ns, name, key)] = entry


def entry_source(cw, what, path, mounts, volumes, ns):
    """The (namespace, ConfigMap, key) an --entry path in a container reads,
    or None (with a finding) when it is not a file of a ConfigMap volume."""
    m, rel = mount_of(path, mounts)
    if m is None:
        find(cw, f"{what}: --entry {path} is in no volume mount (mount the entry's ConfigMap)")
        return None
    v = volumes.get(m.get("name")) or {}
    cm = v.get("configMap")
    if not isinstance(cm, dict):
        find(cw, f"{what}: --entry {path} is on volume {m.get('name')}, which is not a configMap volume")
        return None
    if m.get("subPath"):
        find(cw, f"{what}: volumeMount {m.get('name')} uses subPath, which the kubelet never updates when the ConfigMap changes; mount the directory")
        return None
    items = cm.get("items")
    key = rel if not items else next((i.get("key") for i in items if i.get("path") == rel), None)
    if not key:
        find(cw, f"{what}: --entry {path}: no item of volume {m.get('name')} has path {rel}")
        return None
    return (ns, cm.get("name"), key)


def asks(entry, pod):
    """Whether the pod asks for what the entry attaches, as the plugin reads it
    (docs/deploy.md): mode none the SMC-R annotation; device.resource a limit
    of it; device.pool alone the pool annotation. None: every pod asks."""
    annotations = get(pod, "metadata", "annotations") or {}
    if entry.get("mode") == "none":
        return annotations.get(SMCR_ANNOTATION) == "true"
    resource = get(entry, "device", "resource")
    if resource:
        return any(resource in (get(c, "resources", "limits") or {}) for _, c in containers_of(pod.get("spec") or {}))
    if get(entry, "device", "pool") is not None:
        return annotations.get(POOL_ANNOTATION) == "true"
    return None


def how_to_ask(entry):
    if entry.get("mode") == "none":
        return f'the annotation {SMCR_ANNOTATION}: "true"'
    if get(entry, "device", "resource"):
        return f"resources.limits {get(entry, 'device', 'resource')}"
    return f'the annotation {POOL_ANNOTATION}: "true"'


def is_plain(pod):
    annotations = get(pod, "metadata", "annotations") or {}
    if SMCR_ANNOTATION in annotations or POOL_ANNOTATION in annotations:
        return False
    for _, c in containers_of(pod.get("spec") or {}):
        for part in ("limits", "requests"):
            if any("erdma" in r or "rdma" in r for r in get(c, "resources", part) or {}):
                return False
    return True


def selects(selector, labels):
    """A labelSelector (matchLabels, matchExpressions In and Exists) against labels."""
    if not isinstance(selector, dict) or not selector:
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions") or []:
        op, k = e.get("operator"), e.get("key")
        if op == "In" and labels.get(k) not in (e.get("values") or []):
            return False
        if op == "Exists" and k not in labels:
            return False
        if op not in ("In", "Exists"):
            return False
    return True


def check_recipe_pods(entries, pods_by_file, node_selector):
    """Each recipe has pods-<recipe>.yaml: a pod that asks, an SMC-R pod that
    asks, and a plain pod meant for the node of one that asks; all on the
    DaemonSet's nodes and tolerating a GPU node's taint."""
    recipes = {key[: -len(".json")]: (cm, key, entry) for (_, cm, key), entry in entries.items()}
    for name in pods_by_file:
        recipe = name[len("pods-"): -len(".yaml")]
        if name.startswith("pods-") and recipe not in recipes:
            find(name, f"no recipe {recipe}.json in the entry ConfigMap for these pods")
    for recipe, (cm, key, entry) in sorted(recipes.items()):
        name = f"pods-{recipe}.yaml"
        pods = pods_by_file.get(name)
        if not pods:
            find(name, f"missing: the example pods of recipe {key} (ConfigMap {cm})")
            continue
        how = how_to_ask(entry)
        askers = [(w, p) for w, p in pods if asks(entry, p)]
        if not askers:
            find(name, f"no pod asks for what {key} attaches ({how})")
        if not any((get(p, "metadata", "annotations") or {}).get(SMCR_ANNOTATION) == "true" for _, p in askers):
            find(name, f'no SMC-R pod: one with {SMCR_ANNOTATION}: "true" that also asks ({how}); '
                       "the annotation alone passes through")
        plain = [(w, p) for w, p in pods if is_plain(p)]
        if not plain:
            find(name, "no plain pod (no erdma resource, no erdma annotation)")
        for w, p in plain:
            terms = get(p, "spec", "affinity", "podAffinity", "requiredDuringSchedulingIgnoredDuringExecution") or []
            if not any(t.get("topologyKey") == HOSTNAME and
                       any(selects(t.get("labelSelector"), get(a, "metadata", "labels") or {}) for _, a in askers)
                       for t in terms):
                find(w, f"the plain pod is not bound to the node of a pod that asks: a required podAffinity on {HOSTNAME} selecting its labels")
        caps = entry.get("capabilities") or {}
        for w, p in pods:
            ns = get(p, "spec", "nodeSelector") or {}
            for k, v in node_selector.items():
                if ns.get(k) != v:
                    find(w, f"nodeSelector {k}: {v!r} missing: the pod belongs on a node where the DaemonSet put the entry")
            if not tolerates(get(p, "spec", "tolerations"), GPU_TAINT):
                find(w, "tolerations: a GPU node's nvidia.com/gpu:NoSchedule taint is not tolerated")
            annotations = get(p, "metadata", "annotations") or {}
            used = [a for a in (SMCR_ANNOTATION, POOL_ANNOTATION) if a in annotations]
            if used and caps.get(POD_ANNOTATIONS_CAPABILITY) is not True:
                find(w, f"{used[0]}: recipe {key} lacks the capability {POD_ANNOTATIONS_CAPABILITY}, so the annotation never reaches erdma-cni")
            if entry.get("mode") != "none" and asks(entry, p):
                added = [a for _, c in containers_of(p.get("spec") or {})
                         for a in get(c, "securityContext", "capabilities", "add") or []]
                privileged = any(get(c, "securityContext", "privileged") for _, c in containers_of(p.get("spec") or {}))
                if "IPC_LOCK" not in added and not privileged:
                    find(w, "no container has IPC_LOCK: RDMA memory registration pins memory")
