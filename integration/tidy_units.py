#!/usr/bin/python3
"""Which translation units clang-tidy checks: part PART of PARTS of every C++
file BUILD_DIR compiles (its compile_commands.json), one line each:

  unity FILE       a unity batch CMake generated in the build tree (CMAKE_UNITY_BUILD)
                   of the library or the tools: checked with the top-level .clang-tidy,
                   its sources counting as the batch's own code (lint.sh's header filter)
  unity-test FILE  a batch of test files: the same, with test/.clang-tidy's checks
  file FILE        a source compiled alone: checked with the .clang-tidy nearest it

Every source is checked once: a batch whose sources were all checked already
(a second target compiling them) is left out, as is a file compiled twice.
C files (the generated protobuf-c code) are not checked. The units are dealt
round-robin, batches first, so that each part holds a like share of the work.
"""
import json
import re
import sys


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: tidy_units.py BUILD_DIR SOURCE_DIR PART PARTS")
    build, src, part, parts = sys.argv[1], sys.argv[2].rstrip("/"), int(sys.argv[3]), int(sys.argv[4])
    with open(f"{build}/compile_commands.json", encoding="utf-8") as f:
        entries = json.load(f)
    include = re.compile(r'^#include "([^"]+)"$')
    seen = set()
    batches, files = [], []
    for e in sorted(entries, key=lambda e: e["file"]):
        path = e["file"]
        if not path.endswith((".cpp", ".cxx")):
            continue
        if "/Unity/unity_" in path:
            with open(path, encoding="utf-8") as f:
                sources = [m.group(1) for m in map(include.match, f.read().splitlines()) if m]
            if not sources or all(s in seen for s in sources):
                continue
            if any(not s.startswith(src + "/") for s in sources):
                sys.exit(f"tidy_units.py: {path} batches a file outside the source tree: {sources}")
            tests = [s.startswith(src + "/test/") for s in sources]
            if any(tests) and not all(tests):
                sys.exit(f"tidy_units.py: {path} batches test files with others: {sources}")
            seen.update(sources)
            batches.append(("unity-test" if all(tests) else "unity", path))
        elif path.startswith(src + "/") and not path.startswith(e["directory"].rstrip("/") + "/") and path not in seen:
            seen.add(path)
            files.append(path)
    for i, (kind, path) in enumerate(batches + [("file", p) for p in files]):
        if i % parts + 1 == part:
            print(kind, path)


if __name__ == "__main__":
    main()
