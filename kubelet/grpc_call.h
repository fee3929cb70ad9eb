// One unary gRPC call over a unix stream socket: HTTP/2 by libnghttp2, the
// message bytes by the caller (protobuf-c). Enough gRPC for the kubelet's
// local APIs: no TLS, no compression, no streaming, no name resolution.
#pragma once

#include <chrono>
#include <string>

#include "base/error.h"

namespace kubelet {

/// gRPC status codes (grpc/doc/statuscodes.md) the callers look at.
enum class GrpcCode : int {
  kOk = 0,
  kUnknown = 2,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kResourceExhausted = 8,
  kUnimplemented = 12,
  kUnavailable = 14,
};

/// What the server answered: its grpc-status and grpc-message (decoded from the wire's percent-encoding, not
/// yet escaped for display) and, when the status is OK, the one response message's bytes.
struct GrpcReply {
  int status = -1;
  std::string message;
  std::string body;
};

/// Calls `method` ("/package.Service/Method") on the server listening on the unix socket `socket_path` with
/// the encoded request message `request`, and gives up at `deadline` (the whole call, connect included). The
/// server learns the same deadline (grpc-timeout). A reply is any gRPC status the server sent; errors are
/// what kept a status from arriving: kTryAgainLater when no server listens there, or it did not answer in
/// time (errno ENOENT, ECONNREFUSED or ETIMEDOUT), kIo for a connection that broke or a reply that is not
/// gRPC. A response message over 16 MiB is an error.
base::Result<GrpcReply> UnaryCall(const std::string& socket_path, const std::string& method,
                                  const std::string& request, std::chrono::steady_clock::time_point deadline);

}  // namespace kubelet
