// `erdma-cni clear`'s other half: claims and shares that name a container without a state of its own (a
// container that never ran, an ADD killed before its state was written, a file left by hand). Nothing
// journaled them, so no DEL finishes them; each blocks its device for every pod.
#pragma once

#include <ostream>
#include <string>

#include "base/error.h"
#include "cni/admin/clear.h"
#include "netlink/rtnl_kernel.h"

namespace cni {

/// Removes, each under its device's claim lock, the claims and shares of `data_dir` naming opts.container_id
/// (and opts.network, opts.if_name when given) whose state path holds no state of that attachment. Prints
/// each, and a claimed device that is not on the node. Sets `*found` when one was found. An error when one
/// was left: its state may be its own, or it could not be locked.
base::Status ClearStrayHolders(const std::string& data_dir, const ClearOptions& opts, netlink::Kernel& host,
                               std::ostream& out, bool* found);

}  // namespace cni
