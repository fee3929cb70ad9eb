#!/usr/bin/python3
"""A runtime's view of the node while installs run: reads the conflist and
the plugin binary in a tight loop until STOP_FILE exists, and counts what it
saw. A conflist that does not parse, a chain without Terway's entry intact, or
a binary that is neither of the two versions is a torn read.

usage: reader.py CONFLIST BINARY BINARY_A BINARY_B STOP_FILE
prints: reads=N torn=N conflist_versions=N binary_versions=N
"""
import hashlib
import json
import os
import sys


def main():
    conflist, binary, bin_a, bin_b, stop = sys.argv[1:6]
    with open(conflist) as f:
        terway = json.load(f)["plugins"][0]
    good = {hashlib.sha256(open(p, "rb").read()).hexdigest() for p in (bin_a, bin_b)}
    reads = torn = 0
    conf_seen, bin_seen = set(), set()
    while not os.path.exists(stop):
        reads += 1
        with open(conflist, "rb") as f:
            raw = f.read()
        try:
            doc = json.loads(raw)
            ours = [p for p in doc["plugins"] if p.get("type") == "erdma-cni"]
            if doc["plugins"][0] != terway or len(ours) > 1:
                raise ValueError("chain changed")
            conf_seen.add(hashlib.sha256(raw).hexdigest())
        except (ValueError, KeyError, TypeError, IndexError) as e:
            torn += 1
            print(f"torn conflist read ({len(raw)} bytes): {e}", file=sys.stderr)
        try:
            with open(binary, "rb") as f:
                h = hashlib.sha256(f.read()).hexdigest()
        except FileNotFoundError:
            h = None  # not copied yet
        if h is not None:
            if h not in good:
                torn += 1
                print("torn binary read", file=sys.stderr)
            bin_seen.add(h)
    print(f"reads={reads} torn={torn} conflist_versions={len(conf_seen)} binary_versions={len(bin_seen)}")


if __name__ == "__main__":
    main()
