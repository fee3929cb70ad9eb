// Makes "the fuzz harness never touches the kernel" a checked property: a
// seccomp filter over the whole process that traps socket(2), setns(2),
// unshare(2) and mount(2): any rtnetlink, RDMA, SMC or namespace work needs
// one of them. exec stays allowed (the sanitizers run llvm-symbolizer for
// their reports); whatever is exec'd inherits the filter, so an IPAM plugin
// run for real could not configure anything either.
#pragma once

namespace fuzz {

/// Installs the filter (x86_64 only; elsewhere it does nothing and says so).
/// A trapped call aborts with the syscall's number on stderr, so libFuzzer
/// reports it as a crash and keeps the input.
void ForbidKernelAccess();

}  // namespace fuzz
