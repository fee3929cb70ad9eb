// One unary gRPC call over a unix stream socket (HTTP/2 by libnghttp2, the message bytes by the caller): no
// TLS, no compression, no streaming, no name resolution.
#pragma once

#include <chrono>
#include <string>

#include "base/error.h"

namespace kubelet {

/// The gRPC status codes the callers look at.
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

/// Calls `method` ("/package.Service/Method") with the encoded message `request` on the unix socket
/// `socket_path`, giving up (and telling the server, grpc-timeout) at `deadline`, connect included. A reply
/// is any gRPC status the server sent; errors are what kept one from arriving: kTryAgainLater when no server
/// listens or it did not answer in time (errno ENOENT, ECONNREFUSED or ETIMEDOUT), kIo for a broken
/// connection, a reply that is not gRPC or a response message over 16 MiB.
base::Result<GrpcReply> UnaryCall(const std::string& socket_path, const std::string& method,
                                  const std::string& request, std::chrono::steady_clock::time_point deadline);

}  // namespace kubelet
