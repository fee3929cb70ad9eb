#!/usr/bin/python3
"""Where a command's CPU time goes, from `perf script -F comm,ip,sym` of a
system-wide `perf record -g` (profile.sh runs it over the benchmark's ADDs and
DELs): each sample of the command is put in one bucket, by the system call
or fault it is under, or, in user space, by whether it is glibc's start-up.

    cpu_buckets.py SCRIPT_OUTPUT COMMAND [TOP]
"""
import collections
import sys

# glibc's start-up of a static binary: CPU features and cache sizes, read
# with CPUID (each one a trap to the hypervisor in a VM). A dynamic binary's
# loader does the same: it is part of any exec.
STARTUP = {
    "intel_check_word.constprop.0", "handle_intel.constprop.0", "handle_amd.constprop.0",
    "get_common_indices.constprop.0", "get_common_cache_info.constprop.0",
    "update_active.constprop.0", "get_extended_indices.constprop.0",
    "__libc_start_main_impl", "init_cpu_features.constprop.0", "__tunables_init",
}


def samples(path, command):
    stack, keep = [], False
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            if not line[0].isspace():
                if keep and stack:
                    yield stack
                keep = line.split()[0] == command
                stack = []
            elif keep:
                parts = line.split(None, 1)
                stack.append(parts[1].strip() if len(parts) > 1 else "?")
    if keep and stack:
        yield stack


def bucket(stack):
    kernel = any("do_syscall_64" in f or "exc_page_fault" in f or "ret_from_fork" in f for f in stack)
    if not kernel:
        return "user: glibc start-up (CPUID)" if stack[0] in STARTUP else "user: the plugin's code"
    for i, f in enumerate(stack):
        if "exc_page_fault" in f:
            return "kernel: page faults"
        if "ret_from_fork" in f:
            return "kernel: return from fork"
        if f.startswith("do_syscall_64") and i > 0:
            name = stack[i - 1]
            if name == "x64_sys_call":
                if any(g.startswith("do_exit") or g.startswith("do_group_exit") for g in stack):
                    return "kernel: exit (unmapping, closing)"
                name = stack[i - 2] if i > 1 else "?"
            for prefix in ("__x64_sys_", "__do_sys_", "__sys_", "ksys_"):
                if name.startswith(prefix):
                    name = name[len(prefix):]
            return "kernel: " + name
    return "kernel: other"


def main():
    path, command = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    counts = collections.Counter(bucket(s) for s in samples(path, command))
    total = sum(counts.values())
    if total == 0:
        print(f"no samples of {command}")
        return
    for name, n in counts.most_common(top):
        print(f"  {n:7d}  {100.0 * n / total:5.1f}%  {name}")
    print(f"  {total:7d}  samples of {command}")


if __name__ == "__main__":
    main()
