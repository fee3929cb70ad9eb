"""What every check of deploy/ shares: the findings, the names of the
cluster's objects, and reading a manifest's fields."""
import re

INSTALLER = "/usr/sbin/erdma-cni-install"
RESOURCE_ANNOTATION = "k8s.v1.cni.cncf.io/resourceName"
NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
SMCR_ANNOTATION = "network.alibabacloud.com/erdma-smcr"
POOL_ANNOTATION = "network.alibabacloud.com/erdma"
POD_ANNOTATIONS_CAPABILITY = "io.kubernetes.cri.pod-annotations"
NODE_DIRS = {"/opt/cni/bin": "--bin-dir", "/etc/cni/net.d": "--conf-dir"}
DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# A GPU node's taint: the DaemonSet, and the example pods meant for GPU nodes, must still run there.
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


def containers_of(pod_spec):
    return [("initContainers", c) for c in pod_spec.get("initContainers") or []] + [
        ("containers", c) for c in pod_spec.get("containers") or []
    ]


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


def mount_of(path, mounts):
    """The volumeMount whose mountPath holds `path` (the deepest), and the
    path below it ("" for the mount point itself); (None, None) when none."""
    best = None
    for m in mounts:
        mp = str(m.get("mountPath", "")).rstrip("/")
        if (path == mp or path.startswith(mp + "/")) and (best is None or len(mp) > len(best[0])):
            best = (mp, m)
    if best is None:
        return None, None
    return best[1], path[len(best[0]):].lstrip("/")
