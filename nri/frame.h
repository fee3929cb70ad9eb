// NRI's wire below its protobuf messages, both layers of framing (docs/decisions/nri-framing.md):
//  - the runtime's one unix socket (the trunk) carries logical connections: frames of a 4-byte connection ID
//    and a 4-byte payload length, big endian, then the payload (containerd/nri pkg/net/multiplex).
//    Connection 1 is the plugin's service (the runtime calls the plugin), 2 the runtime's (the plugin calls
//    RegisterPlugin and UpdateContainers there); 0 is reserved.
//  - each logical connection is a ttrpc byte stream: messages of a 4-byte length, a 4-byte stream ID, a type
//    byte and a flags byte, then the payload (containerd/ttrpc channel.go); at most 4 MiB each.
// Pure: bytes in, messages out, no I/O. The agent's event loop reads the socket and feeds what it got.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.h"

namespace nri {

inline constexpr uint32_t kPluginConn = 1;   ///< the plugin's service: the runtime's requests to us
inline constexpr uint32_t kRuntimeConn = 2;  ///< the runtime's service: our requests to it
inline constexpr size_t kMuxHeaderBytes = 8;
inline constexpr size_t kTtrpcHeaderBytes = 10;
inline constexpr size_t kTtrpcMaxMessage = size_t{4} << 20;  ///< ttrpc's messageLengthMax
/// The largest frame payload the runtime's multiplexer writes: one whole ttrpc message.
inline constexpr size_t kMaxFramePayload = kTtrpcHeaderBytes + kTtrpcMaxMessage;

enum class TtrpcType : uint8_t { kRequest = 1, kResponse = 2, kData = 3 };

struct TtrpcMessage {
  uint32_t stream = 0;  ///< odd: opened by the client side of the connection
  TtrpcType type = TtrpcType::kRequest;
  uint8_t flags = 0;
  std::string payload;  ///< a protobuf ttrpc.Request or ttrpc.Response
  bool operator==(const TtrpcMessage&) const = default;
};

/// A message and the logical connection it came on.
struct Received {
  uint32_t conn = 0;
  TtrpcMessage msg;
  bool operator==(const Received&) const = default;
};

/// The trunk's bytes, as they arrive in any pieces, split into the ttrpc messages of connections 1 and 2, in
/// order. Frames of other connections are dropped, as the runtime's multiplexer drops frames of a connection
/// it has not opened. A frame or a message over its bound, a frame of connection 0, or an unknown message
/// type is an error (kDecoding), after which nothing more is parsed: the caller closes the trunk, as the
/// runtime does.
class Demux {
 public:
  base::Status Feed(std::string_view bytes);
  /// The next complete message, oldest first.
  std::optional<Received> Next();
  /// Frames dropped because they were of another connection.
  size_t dropped_frames() const { return dropped_; }
  /// Bytes held: of a frame or a message not complete yet, and of messages not taken yet.
  size_t buffered() const;

 private:
  base::Status ParseStream(uint32_t conn, std::string& stream);

  std::string trunk_;     // the trunk's bytes not yet split into frames
  std::string conns_[2];  // each connection's bytes not yet split into messages
  std::deque<Received> ready_;
  size_t dropped_ = 0;
  std::optional<base::Error> failed_;
};

/// One message as the trunk carries it on `conn`: the frame header, the ttrpc header, the payload. kInternal
/// when the payload is over kTtrpcMaxMessage or `conn` is 0.
base::Result<std::string> EncodeFrame(uint32_t conn, const TtrpcMessage& msg);

}  // namespace nri
