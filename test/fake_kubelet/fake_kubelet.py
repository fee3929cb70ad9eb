#!/usr/bin/python3
"""A fake kubelet: the pod-resources API v1 served on a unix socket.

It serves the pods of a JSON file (pods.json beside this script is the
suite's) with the real gRPC server of python3-grpcio, so a client meets
what a kubelet's socket gives: HTTP/2, gRPC status codes and trailers.

    fake_kubelet.py --socket PATH --pods FILE --mode MODE [--calls FILE] [--stubs DIR]
    fake_kubelet.py --stubs DIR --stubs-only

Modes:
  get            List, Get and GetAllocatableResources are served (kubelet 1.34+,
                 or 1.27+ with the KubeletPodResourcesGet feature gate)
  unimplemented  Get answers UNIMPLEMENTED (kubelet before 1.27)
  disabled       Get answers UNKNOWN "PodResources API Get method disabled"
                 (kubelet 1.27-1.33 without the feature gate)
  ratelimit      the first call of the server's life answers RESOURCE_EXHAUSTED
                 (the kubelet's rate limiter), later calls as in "get"
  slow           every call sleeps 30 s before it answers
  silent         no gRPC at all: the socket accepts and never says a word

Each call appends one line "Method namespace/name -> CODE" to --calls, so a
test can see which calls a client made. The python stubs are generated at
start from ../../kubelet/podresources.proto (grpc_tools, python3-grpc-tools)
into --stubs or a temporary directory: the suite ships no generated code.
--stubs-only generates them and exits (the VM image is built so, on the
host); a copy of this script without the repository beside it (no proto to
generate from, no grpc_tools: the VM's) uses the stubs --stubs DIR holds.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent import futures

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.join(HERE, "..", "..", "kubelet")


STUBS = ("podresources_pb2.py", "podresources_pb2_grpc.py")


def generate_stubs(out):
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", "-I", PROTO_DIR,
         "--python_out", out, "--grpc_python_out", out,
         os.path.join(PROTO_DIR, "podresources.proto")],
        check=True)


def load_stubs(out):
    if out:
        os.makedirs(out, exist_ok=True)
    else:
        out = tempfile.mkdtemp(prefix="fake-kubelet-stubs.")
    proto = os.path.join(PROTO_DIR, "podresources.proto")
    if os.path.exists(proto) or not all(os.path.exists(os.path.join(out, f)) for f in STUBS):
        generate_stubs(out)
    sys.path.insert(0, out)
    import podresources_pb2  # noqa: E402 (generated above)
    import podresources_pb2_grpc  # noqa: E402
    return podresources_pb2, podresources_pb2_grpc


def build_pods(pb, spec):
    """spec: {"pods": [{"namespace", "name", "containers": [{"name",
    "devices": [{"resource", "ids": [...], "numa": [...]}]}]}]}"""
    pods = []
    for p in spec["pods"]:
        pr = pb.PodResources(name=p["name"], namespace=p["namespace"])
        for c in p.get("containers", []):
            cr = pr.containers.add(name=c["name"])
            for d in c.get("devices", []):
                cd = cr.devices.add(resource_name=d["resource"], device_ids=d["ids"])
                if "numa" in d:
                    cd.topology.nodes.extend(pb.NUMANode(ID=n) for n in d["numa"])
        pods.append(pr)
    return pods


def serve_silent(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(16)
    print("fake kubelet: silent on", path, flush=True)
    held = []
    while True:
        conn, _ = s.accept()
        held.append(conn)  # kept open, never read nor written


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--socket")
    ap.add_argument("--pods")
    ap.add_argument("--mode", default="get",
                    choices=["get", "unimplemented", "disabled", "ratelimit", "slow", "silent"])
    ap.add_argument("--calls", default=os.devnull)
    ap.add_argument("--stubs", help="where to generate the python stubs (default: a new temporary dir)")
    ap.add_argument("--stubs-only", action="store_true",
                    help="generate the stubs into --stubs DIR and exit")
    args = ap.parse_args()
    if args.stubs_only:
        if not args.stubs:
            ap.error("--stubs-only needs --stubs DIR")
        os.makedirs(args.stubs, exist_ok=True)
        generate_stubs(args.stubs)
        return
    if not args.socket or not args.pods:
        ap.error("--socket and --pods are required")
    if args.mode == "silent":
        serve_silent(args.socket)
        return

    import grpc
    pb, pb_grpc = load_stubs(args.stubs)
    with open(args.pods, encoding="utf-8") as f:
        pods = build_pods(pb, json.load(f))
    lock = threading.Lock()
    state = {"calls": 0}

    def record(method, who, code):
        with lock:
            with open(args.calls, "a", encoding="utf-8") as f:
                f.write(f"{method} {who} -> {code}\n")

    def gate(method, who, context):
        """Applies the mode to every call; returns False when it answered."""
        with lock:
            state["calls"] += 1
            first = state["calls"] == 1
        if args.mode == "slow":
            time.sleep(30)
        if args.mode == "ratelimit" and first:
            record(method, who, "RESOURCE_EXHAUSTED")
            context.set_code(grpc.StatusCode.RESOURCE_EXHAUSTED)
            context.set_details("rejected by rate limit")
            return False
        return True

    class Lister(pb_grpc.PodResourcesListerServicer):
        def List(self, request, context):
            if not gate("List", "-", context):
                return pb.ListPodResourcesResponse()
            record("List", "-", "OK")
            return pb.ListPodResourcesResponse(pod_resources=pods)

        def GetAllocatableResources(self, request, context):
            if not gate("GetAllocatableResources", "-", context):
                return pb.AllocatableResourcesResponse()
            record("GetAllocatableResources", "-", "OK")
            resp = pb.AllocatableResourcesResponse()
            for p in pods:
                for c in p.containers:
                    resp.devices.extend(c.devices)
            return resp

        def Get(self, request, context):
            who = f"{request.pod_namespace}/{request.pod_name}"
            if not gate("Get", who, context):
                return pb.GetPodResourcesResponse()
            if args.mode == "unimplemented":
                # What a kubelet before 1.27 answers: its server has no Get.
                record("Get", who, "UNIMPLEMENTED")
                context.set_code(grpc.StatusCode.UNIMPLEMENTED)
                context.set_details("unknown method Get for service v1.PodResourcesLister")
                return pb.GetPodResourcesResponse()
            if args.mode == "disabled":
                record("Get", who, "UNKNOWN")
                context.set_code(grpc.StatusCode.UNKNOWN)
                context.set_details("PodResources API Get method disabled")
                return pb.GetPodResourcesResponse()
            for p in pods:
                if p.name == request.pod_name and p.namespace == request.pod_namespace:
                    record("Get", who, "OK")
                    return pb.GetPodResourcesResponse(pod_resources=p)
            # The kubelet's own answer for a pod it does not know: a plain Go
            # error, which gRPC sends as UNKNOWN.
            record("Get", who, "UNKNOWN")
            context.set_code(grpc.StatusCode.UNKNOWN)
            context.set_details(f"pod {request.pod_name} in namespace {request.pod_namespace} not found")
            return pb.GetPodResourcesResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    pb_grpc.add_PodResourcesListerServicer_to_server(Lister(), server)
    if server.add_insecure_port("unix:" + args.socket) == 0:
        sys.exit(f"fake kubelet: cannot listen on {args.socket}")
    server.start()
    print("fake kubelet: serving", args.mode, "on", args.socket, flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
