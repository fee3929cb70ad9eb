#!/usr/bin/python3
"""make-image.py BINARY NAME OUT.tar

Packs one static BINARY as a single-layer OCI image whose entrypoint is
/ and the binary's file name (/pause for .../pause), in an OCI image layout tarball (oci-layout, index.json,
blobs/sha256/...) that `ctr images import` reads. NAME (e.g.
localhost/erdma-cni-test/pause:1) is recorded as the image's name
(io.containerd.image.name) and its tag (org.opencontainers.image.ref.name).
The output is byte-for-byte reproducible from the same binary.
"""

import hashlib
import io
import json
import os
import platform
import sys
import tarfile

# GOARCH names, as OCI platforms use them, of the machines this runs on.
ARCH = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())


def tar_bytes(members):
    """A tar archive of (name, bytes, mode) members, owned by root, mtime 0."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data, mode in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = mode
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def digest(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    binary, name, out = sys.argv[1:]
    with open(binary, "rb") as f:
        program = f.read()

    entry = os.path.basename(binary)
    layer = tar_bytes([(entry, program, 0o755)])
    config = canonical({
        "architecture": ARCH,
        "os": "linux",
        "config": {"Entrypoint": ["/" + entry], "WorkingDir": "/"},
        "rootfs": {"type": "layers", "diff_ids": [digest(layer)]},
    })
    manifest = canonical({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": digest(config),
            "size": len(config),
        },
        "layers": [{
            "mediaType": "application/vnd.oci.image.layer.v1.tar",
            "digest": digest(layer),
            "size": len(layer),
        }],
    })
    tag = name.rsplit(":", 1)[1] if ":" in name.rsplit("/", 1)[-1] else "latest"
    index = canonical({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": digest(manifest),
            "size": len(manifest),
            "platform": {"architecture": ARCH, "os": "linux"},
            "annotations": {
                "io.containerd.image.name": name,
                "org.opencontainers.image.ref.name": tag,
            },
        }],
    })

    members = [
        ("oci-layout", canonical({"imageLayoutVersion": "1.0.0"}), 0o644),
        ("index.json", index, 0o644),
    ]
    for blob in (layer, config, manifest):
        members.append(("blobs/sha256/" + digest(blob)[len("sha256:"):], blob, 0o644))
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(tar_bytes(members))
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
