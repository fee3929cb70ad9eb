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
  stop ID                           StopPodSandbox
  remove ID                         RemovePodSandbox
  list                              ListPodSandbox; prints one id per line

Exits 0 on success; a failed call prints the gRPC status on stderr and exits 1.
"""

import json
import sys

TIMEOUT = 60  # seconds per call; RunPodSandbox runs the whole CNI chain


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
            name, uid, log_dir, cgroup_parent = args[:4]
            annotations = dict(a.split("=", 1) for a in args[4:])
            config = api.PodSandboxConfig(
                metadata=api.PodSandboxMetadata(name=name, uid=uid, namespace="default", attempt=0),
                hostname=name,
                log_directory=log_dir,
                labels={"app": name},
                annotations=annotations,
                linux=api.LinuxPodSandboxConfig(
                    cgroup_parent=cgroup_parent,
                    security_context=api.LinuxSandboxSecurityContext(
                        namespace_options=api.NamespaceOption(
                            network=api.POD, pid=api.CONTAINER, ipc=api.POD))),
            )
            r = rt.RunPodSandbox(api.RunPodSandboxRequest(config=config), timeout=TIMEOUT)
            print(r.pod_sandbox_id)
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
