// The runtime's end of one NRI connection, written from the protocol (nri/frame.h, nri/messages.h; the
// requests in protobuf's wire format by hand): what the agent's kernel test and its benchmark
// (integration/bench/nri_main.cpp) play against the real erdma-cni-nri. Header-only, so that the benchmark's
// Release build, which has no test libraries, takes it too. Failures throw std::runtime_error.
#pragma once

#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "cni/state/record.h"
#include "cni/state/state.h"
#include "nri/frame.h"
#include "nri/messages.h"

namespace nri_runtime {

/// Protobuf's length-delimited field `n` holding `b`.
inline std::string Len(int n, const std::string& b) {
  std::string out(1, static_cast<char>(n << 3 | 2));
  for (size_t v = b.size();; v >>= 7) {
    out.push_back(static_cast<char>((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
    if (v <= 0x7f) break;
  }
  return out + b;
}

/// A CreateContainerRequest as a runtime sends it: the pod (ID, name, namespace) and a container of it (ID,
/// pod ID, name, one env entry).
inline std::string CreateContainerRequest(const std::string& sandbox, const std::string& pod_name,
                                          const std::string& ns, const std::string& container_id,
                                          const std::string& container_name) {
  return Len(1, Len(1, sandbox) + Len(2, pod_name) + Len(4, ns)) +
         Len(2, Len(1, container_id) + Len(2, sandbox) + Len(3, container_name) + Len(8, "PATH=/usr/bin"));
}

/// What the plugin's ADD leaves for `sandbox` with one rail, `rdma_device` in shared mode (network "erdma",
/// CNI_IFNAME `if_name`), written by the plugin's own writers: its state under `data_dir` and its attachment
/// record under `records_dir`.
inline void WriteAttachedPod(const std::string& data_dir, const std::string& records_dir,
                             const std::string& sandbox, const std::string& rdma_device,
                             const std::string& if_name = "eth0") {
  cni::AttachmentState st;
  st.network = "erdma";
  st.container_id = sandbox;
  st.if_name = if_name;
  st.pod_if_name = if_name;
  st.rdma_device = rdma_device;
  st.rdma_mode = "shared";
  st.complete = true;
  const cni::StateStore store(data_dir, "erdma");
  if (!store.Prepare().ok() || !store.Save(store.PathFor(sandbox, if_name), st).ok() ||
      !cni::AttachmentRecord::Begin(records_dir, sandbox, if_name, {data_dir, "erdma"}, 1000).ok())
    throw std::runtime_error("writing the state and record of " + sandbox + " under " + data_dir);
}

/// The runtime's end of one connection on a connected unix socket `fd` (closed with it).
struct Runtime {
  int fd = -1;
  nri::Demux demux;
  uint32_t next_stream = 1;

  Runtime() = default;
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  ~Runtime() {
    if (fd >= 0) ::close(fd);
  }

  void Send(uint32_t conn, const nri::TtrpcMessage& m) {
    auto f = nri::EncodeFrame(conn, m);
    if (!f.ok()) throw std::runtime_error("EncodeFrame: " + f.error().msg);
    if (::write(fd, f->data(), f->size()) != static_cast<ssize_t>(f->size()))
      throw std::runtime_error("write to the agent");
  }
  /// The next message from the agent, waiting at most 5 s.
  nri::Received Next() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (;;) {
      if (auto r = demux.Next()) return *r;
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd p{fd, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) != 1)
        throw std::runtime_error("the agent did not answer within 5 s");
      char buf[65536];
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) throw std::runtime_error("the agent closed the connection");
      if (!demux.Feed(std::string_view(buf, static_cast<size_t>(n))).ok())
        throw std::runtime_error("the agent sent a frame the runtime refuses");
    }
  }
  /// Calls the agent's `method` and returns its answer; `ms`: how long the round trip took.
  nri::Response Call(const std::string& method, const std::string& payload, double* ms = nullptr) {
    const uint32_t stream = next_stream;
    next_stream += 2;
    const auto t0 = std::chrono::steady_clock::now();
    Send(nri::kPluginConn, {stream, nri::TtrpcType::kRequest, 0,
                            nri::EncodeRequest({nri::kPluginService, method, payload, 2000000000})});
    const nri::Received r = Next();
    if (ms) *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    auto resp = nri::DecodeResponse(r.msg.payload);
    if (r.conn != nri::kPluginConn || r.msg.stream != stream || !resp.ok())
      throw std::runtime_error(method + ": no answer on its stream");
    return *resp;
  }
};

}  // namespace nri_runtime
