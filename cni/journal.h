// Applying and undoing journal steps. Every step enters the state file before
// it runs (write-ahead); undo runs the inverses in reverse, treats "not
// found" as done and collects every error instead of stopping at the first.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "cni/state.h"
#include "ipam/ipam.h"

namespace cni {

class Journal {
 public:
  Journal(const StateStore& store, std::string path, AttachmentState& state)
      : store_(store), path_(std::move(path)), state_(state) {}

  /// Writes the state as it is now.
  base::Status Persist();
  /// Appends `steps` to the journal in one write, then applies them in order.
  /// Stops at the first failure (the caller rolls back), dropping from the
  /// journal in memory the steps that never ran, and the failed one too when
  /// its error says it changed nothing (Error::changed_nothing): no undo is
  /// owed for them. Addresses and routes planned with pod-side index 0
  /// (before their link existed) get env.pod_index, in the journal too,
  /// once a step has set it.
  base::Status Run(const std::vector<Step>& steps, StepEnv& env);
  /// Run for the last `count` steps of the state, which a state write made
  /// before (an earlier Persist) put on disk already.
  base::Status RunWritten(size_t count, StepEnv& env);
  /// Drops the last step from the journal in memory: a step the caller ran
  /// itself (IPAM ADD) whose error says it changed nothing.
  void DropLast();

  const std::string& path() const { return path_; }

 private:
  const StateStore& store_;
  std::string path_;
  AttachmentState& state_;
};

/// Runs the inverse of every step of `state` in reverse order. Returns every
/// error (empty = all undone). Steps on the moved device itself are left to
/// the move home, which takes the pod-side configuration with it.
std::vector<base::Error> UndoSteps(const AttachmentState& state, StepEnv& env);

/// Puts the device back on the node exactly as `origin` says: finds it in the
/// pod, or already on the node (under its own name, its pod-side name, or by
/// MAC after the pod netns died), moves/renames it in one message, restores
/// MAC, MTU, addresses, admin state and routes. `pod_mac` is the MAC a
/// StepMac gave it in the pod ("" = none): the device is recognised by it as
/// well. kNameTaken when another link holds the node name; success with a
/// warning when the device is nowhere.
base::Status MoveHome(const DeviceOrigin& origin, const std::string& pod_name, StepEnv& env,
                      const std::string& pod_mac = "");

/// Where MoveHome would find the device of `origin` on the node without its
/// pod: under its node name, or handed back by the kernel after the pod
/// netns died (its pod-side name or devN, its recorded index); nullopt when
/// it is not on the node.
base::Result<std::optional<netlink::LinkInfo>> FindHome(const DeviceOrigin& origin,
                                                        const std::string& pod_name, netlink::Kernel& host,
                                                        const std::string& pod_mac = "");

/// Inverse of a StepChild: deletes the child from the pod if it is there and
/// is ours (kind, and MAC when one was asked for). Gone counts as done.
base::Status DeleteChild(const StepChild& child, StepEnv& env);

/// Joins errors into one (first error's code unless `code` is given).
base::Error JoinErrors(const std::vector<base::Error>& errors, const std::string& what);

}  // namespace cni
