// One connection of the NRI agent to the runtime, as a state machine over bytes: what to write first
// (RegisterPlugin), and for the bytes the runtime sends, what to write back (each request of the runtime
// answered on its stream). No I/O: the agent's loop reads the socket, feeds the session and writes what it
// returns, so the protocol is tested and fuzzed without a runtime.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "nri/adjust.h"
#include "nri/frame.h"
#include "nri/messages.h"

namespace nri {

/// What the agent does for the runtime's events.
struct Handlers {
  /// The adjustment of a container being created (empty on any doubt; one that throws gives none).
  std::function<Decision(const CreateContainer&)> create_container;
  /// A pod sandbox is gone: what the agent keeps for it goes.
  std::function<void(const Pod&)> pod_removed;
  /// The runtime's pods when the agent connects (Synchronize, all its parts): what the agent keeps for
  /// any other goes.
  std::function<void(const std::vector<Pod>&)> synchronized;
  /// The runtime configured the plugin (for the log: which runtime, its time limits).
  std::function<void(const Configure&)> configured;
};

class Session {
 public:
  Session(std::string plugin_name, std::string plugin_index, Handlers handlers)
      : name_(std::move(plugin_name)), index_(std::move(plugin_index)), handlers_(std::move(handlers)) {}

  /// The bytes to write once connected: RegisterPlugin on the runtime's connection.
  std::string Start();
  /// Takes bytes read from the socket; appends to `*out` what to write. An error (a frame the runtime never
  /// sends, the registration refused) ends the session: the agent closes the socket and connects again.
  base::Status Feed(std::string_view bytes, std::string* out);

  bool registered() const { return registered_; }
  bool configured() const { return configured_; }
  /// Requests of the runtime answered (for the log and diag).
  uint64_t answered() const { return answered_; }
  /// Handlers that threw: their requests were answered as without the agent.
  uint64_t handler_failures() const { return handler_failures_; }

 private:
  base::Status OnRequest(const TtrpcMessage& msg, std::string* out);
  base::Status OnResponse(const TtrpcMessage& msg);
  Response Answer(const Request& req);

  std::string name_, index_;
  Handlers handlers_;
  Demux demux_;
  std::vector<Pod> synchronizing_;  // the parts of a Synchronize so far
  bool registered_ = false, configured_ = false;
  uint64_t answered_ = 0, handler_failures_ = 0;
};

/// The events the agent subscribes to: CreateContainer, and the pod's removal (StateChange).
inline constexpr uint32_t kSubscribed =
    EventBit(Event::kCreateContainer) | EventBit(Event::kRemovePodSandbox);

}  // namespace nri
