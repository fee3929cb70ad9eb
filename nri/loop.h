// The NRI agent's I/O: connecting to the runtime's socket and serving one connection with a Session.
#pragma once

#include <string>

#include "base/error.h"
#include "base/fd.h"
#include "nri/session.h"

namespace nri {

/// containerd's and CRI-O's default NRI socket.
inline constexpr const char* kDefaultSocket = "/var/run/nri/nri.sock";

/// A connected unix stream socket to `path` (kIo naming it when nobody listens there).
base::Result<base::UniqueFd> Connect(const std::string& path);

/// Writes the session's first bytes, then reads what the runtime sends and writes the answers, until the
/// runtime closes the connection or the session fails; returns why it ended.
base::Status Serve(int fd, Session& session);

}  // namespace nri
