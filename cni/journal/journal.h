// Applying and undoing journal steps. Every step enters the state file before it runs (write-ahead); undo
// runs the inverses in reverse, treats "not found" as done and collects every error.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "cni/state/state.h"
#include "ipam/ipam.h"

namespace cni {

class Journal {
 public:
  Journal(const StateStore& store, std::string path, AttachmentState& state)
      : store_(store), path_(std::move(path)), state_(state) {}

  /// Writes the state as it is now.
  base::Status Persist();
  /// Appends `steps` to the journal in one write, then applies them in order up to the first failure (the
  /// caller rolls back); steps owed no undo (never ran, or failed having changed nothing) leave the journal
  /// in memory. Addresses and routes planned with pod-side index 0 get env.pod_index once a step has set it.
  base::Status Run(const std::vector<Step>& steps, StepEnv& env);
  /// Run for the last `count` steps of the state, already on disk (an earlier Persist).
  base::Status RunWritten(size_t count, StepEnv& env);
  /// Drops the last step in memory: one the caller ran itself (IPAM ADD) that changed nothing.
  void DropLast();

 private:
  const StateStore& store_;
  std::string path_;
  AttachmentState& state_;
};

/// Removes `state`'s device-info file, then runs every step's inverse in reverse order; returns every error.
/// Steps on the moved device itself are left to its move home, which takes them along.
std::vector<base::Error> UndoSteps(const AttachmentState& state, StepEnv& env);

/// Joins errors into one, with the first error's code.
base::Error JoinErrors(const std::vector<base::Error>& errors, const std::string& what);

}  // namespace cni
