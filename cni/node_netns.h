// The kernel as the admin commands reach it: the node's rtnetlink and an
// opener of pods' namespaces, with the same rules as a CNI command's (a
// pod's path never opens the node's own netns).
#pragma once

#include <memory>

#include "base/error.h"
#include "cni/commands.h"
#include "netlink/kernel.h"

namespace cni {

/// An opener of pods' namespaces for a command run on the node; each netns
/// is opened once and every handle of it names the same namespace.
std::unique_ptr<NetnsOpener> MakeNodeNetnsOpener();

/// rtnetlink in the netns this process runs in.
base::Result<std::unique_ptr<netlink::Kernel>> OpenNodeKernel();

}  // namespace cni
