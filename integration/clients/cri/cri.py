#!/usr/bin/python3
"""cri.py STUBS_DIR SOCKET COMMAND ...  -- a small CRI client, kubelet's side of the calls.

Talks CRI (runtime.v1) over gRPC to a containerd socket, with the Python
stubs that fetch-cri-api.sh generated in STUBS_DIR from the CRI api.proto of
Debian's containerd source package. Commands:

  version                           the runtime's name and version
  run NAME UID LOGDIR CGROUP_PARENT [KEY=VALUE...]
                                    RunPodSandbox with these pod annotations,
                                    its cgroups under CGROUP_PARENT (cgroupfs
                                    path); prints the sandbox id
  status ID                         PodSandboxStatus (verbose); prints one JSON
                                    object: id, state, ip, pid, netns
  container SANDBOX_ID NAME UID LOGDIR CGROUP_PARENT IMAGE CNAME [ARG...]
                                    CreateContainer CNAME from IMAGE with ARGs
                                    in the sandbox run as NAME UID LOGDIR
                                    CGROUP_PARENT, StartContainer, wait (30 s)
                                    for its exit, RemoveContainer; prints one
                                    JSON object: id, create_ms, start_ms,
                                    exit_code, output (its stdout, a line each);
                                    CRI_DEVICES="HOST=CONTAINER ..." in the
                                    environment gives it those device nodes
  stop ID                           StopPodSandbox
  remove ID                         RemovePodSandbox
  list                              ListPodSandbox; prints one id per line

Exits 0 on success; a failed call prints the gRPC status on stderr and exits 1.
"""

import json
import os
import sys
import time

TIMEOUT = 60  # seconds per call; RunPodSandbox runs the whole CNI chain


def sandbox_config(api, name, uid, log_dir, cgroup_parent, annotations):
    return api.PodSandboxConfig(
        metadata=api.PodSandboxMetadata(name=name, uid=uid, namespace="default", attempt=0),
        hostname=name,
        log_directory=log_dir,
        labels={"app": name},
        annotations=annotations,
        linux=api.LinuxPodSandboxConfig(
            cgroup_parent=cgroup_parent,
            security_context=api.LinuxSandboxSecurityContext(
                namespace_options=api.NamespaceOption(network=api.POD, pid=api.CONTAINER, ipc=api.POD))),
    )


def run_container(api, rt, sandbox_id, sandbox, image, name, *args):
    """Create, start, wait for, read and remove one container; what it did, as a dict."""
    config = api.ContainerConfig(
        metadata=api.ContainerMetadata(name=name, attempt=0),
        image=api.ImageSpec(image=image),
        args=list(args),
        log_path=name + ".log",
        linux=api.LinuxContainerConfig(),
        devices=[api.Device(container_path=c, host_path=h, permissions="rw")
                 for h, c in (d.split("=", 1) for d in os.environ.get("CRI_DEVICES", "").split())],
    )
    t0 = time.monotonic()
    cid = rt.CreateContainer(api.CreateContainerRequest(pod_sandbox_id=sandbox_id, config=config,
                                                        sandbox_config=sandbox), timeout=TIMEOUT).container_id
    t1 = time.monotonic()
    rt.StartContainer(api.StartContainerRequest(container_id=cid), timeout=TIMEOUT)
    t2 = time.monotonic()
    status = None
    for _ in range(300):
        status = rt.ContainerStatus(api.ContainerStatusRequest(container_id=cid), timeout=TIMEOUT).status
        if status.state == api.CONTAINER_EXITED:
            break
        time.sleep(0.1)
    output = []
    try:
        with open(status.log_path, encoding="utf-8", errors="replace") as f:
            for line in f:  # CRI's log format: TIME STREAM TAG TEXT
                parts = line.rstrip("\n").split(" ", 3)
                if len(parts) == 4 and parts[1] == "stdout":
                    output.append(parts[3])
    except OSError as e:
        output.append(f"cri.py: no log at {status.log_path}: {e}")
    rt.RemoveContainer(api.RemoveContainerRequest(container_id=cid), timeout=TIMEOUT)
    return {
        "id": cid,
        "create_ms": round((t1 - t0) * 1000, 1),
        "start_ms": round((t2 - t1) * 1000, 1),
        "exit_code": status.exit_code if status.state == api.CONTAINER_EXITED else None,
        "output": output,
    }


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    stubs, socket, command, args = argv[1], argv[2], argv[3], argv[4:]
    sys.path.insert(0, stubs)
    import grpc
    import api_pb2 as api
    import api_pb2_grpc as api_grpc

    channel = grpc.insecure_channel("unix://" + socket)
    rt = api_grpc.RuntimeServiceStub(channel)
    try:
        if command == "version":
            v = rt.Version(api.VersionRequest(version="v1"), timeout=TIMEOUT)
            print(v.runtime_name, v.runtime_version, v.runtime_api_version)
        elif command == "run" and len(args) >= 4:
            config = sandbox_config(api, *args[:4], dict(a.split("=", 1) for a in args[4:]))
            r = rt.RunPodSandbox(api.RunPodSandboxRequest(config=config), timeout=TIMEOUT)
            print(r.pod_sandbox_id)
        elif command == "container" and len(args) >= 7:
            print(json.dumps(run_container(api, rt, args[0], sandbox_config(api, *args[1:5], {}), *args[5:])))
        elif command == "status" and len(args) == 1:
            r = rt.PodSandboxStatus(api.PodSandboxStatusRequest(pod_sandbox_id=args[0], verbose=True),
                                    timeout=TIMEOUT)
            info = json.loads(r.info.get("info", "{}"))
            netns = ""
            for ns in info.get("runtimeSpec", {}).get("linux", {}).get("namespaces", []):
                if ns.get("type") == "network":
                    netns = ns.get("path", "")
            print(json.dumps({
                "id": r.status.id,
                "state": api.PodSandboxState.Name(r.status.state),
                "ip": r.status.network.ip,
                "pid": info.get("pid", 0),
                "netns": netns,
                "annotations": dict(r.status.annotations),
            }))
        elif command == "stop" and len(args) == 1:
            rt.StopPodSandbox(api.StopPodSandboxRequest(pod_sandbox_id=args[0]), timeout=TIMEOUT)
        elif command == "remove" and len(args) == 1:
            rt.RemovePodSandbox(api.RemovePodSandboxRequest(pod_sandbox_id=args[0]), timeout=TIMEOUT)
        elif command == "list" and not args:
            for s in rt.ListPodSandbox(api.ListPodSandboxRequest(), timeout=TIMEOUT).items:
                print(s.id)
        else:
            sys.exit(__doc__)
    except grpc.RpcError as e:
        print(f"cri.py {command}: {e.code().name}: {e.details()}", file=sys.stderr)
        return 1
    finally:
        channel.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
