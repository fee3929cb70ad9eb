// `erdma-cni clear`'s other half: the claims and shares of a container without a state, which no DEL ends.
#pragma once

#include <ostream>
#include <string>

#include "base/error.h"
#include "cni/admin/clear.h"
#include "netlink/rtnl_kernel.h"

namespace cni {

/// Removes, under their claim locks, the claims and shares of `data_dir` naming the container of `opts`
/// whose state path holds no state of it, printing each; `*found` when one was. An error when one was left.
base::Status ClearStrayHolders(const std::string& data_dir, const ClearOptions& opts, netlink::Kernel& host,
                               std::ostream& out, bool* found);

}  // namespace cni
