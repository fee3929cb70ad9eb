#include "kubelet/grpc_call.h"

#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/escape.h"
#include "base/fd.h"

namespace kubelet {
namespace {

using base::Code;
using base::Error;
using Clock = base::SteadyClock;

// The largest response accepted: what the kubelet's gRPC clients allow List on a full node.
constexpr size_t kMaxResponseBytes = 16u << 20;
// A gRPC message on the wire: 1 byte compressed flag, 4 bytes big-endian length, the protobuf bytes.
constexpr size_t kPrefixBytes = 5;

struct Call {
  int fd = -1;
  int32_t stream_id = -1;
  std::string request;  ///< prefixed message, sent from `sent`
  size_t sent = 0;
  std::string out;  ///< frames the session queued, written from `out_sent`
  size_t out_sent = 0;
  std::string http_status;
  std::string content_type;
  std::string grpc_status;
  std::string grpc_message;
  std::string body;
  bool closed = false;
  bool too_big = false;
  uint32_t close_error = 0;
};

// grpc-message is percent-encoded on the wire.
std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    int hi = 0;
    int lo = 0;
    if (s[i] == '%' && i + 2 < s.size() && (hi = base::HexValue(s[i + 1])) >= 0 &&
        (lo = base::HexValue(s[i + 2])) >= 0) {
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// nghttp2 hands over one frame per call: queued, they go out together in one send(2) (Flush).
ssize_t OnSend(nghttp2_session*, const uint8_t* data, size_t length, int, void* user) {
  auto* call = static_cast<Call*>(user);
  call->out.append(reinterpret_cast<const char*>(data), length);
  return static_cast<ssize_t>(length);
}

// Writes what the session queued, as far as the socket takes it now; the rest waits for POLLOUT.
base::Status Flush(Call& call, const std::string& where) {
  while (call.out_sent < call.out.size()) {
    ssize_t n =
        ::send(call.fd, call.out.data() + call.out_sent, call.out.size() - call.out_sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return base::Ok();
    if (n < 0) return Error(Code::kIo, "sending to " + where + ": " + std::strerror(errno), {}, errno);
    call.out_sent += static_cast<size_t>(n);
  }
  call.out.clear();
  call.out_sent = 0;
  return base::Ok();
}

int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name, size_t namelen,
             const uint8_t* value, size_t valuelen, uint8_t, void* user) {
  auto* call = static_cast<Call*>(user);
  if (frame->hd.stream_id != call->stream_id) return 0;
  std::string_view n(reinterpret_cast<const char*>(name), namelen);
  std::string v(reinterpret_cast<const char*>(value), valuelen);
  if (n == ":status") call->http_status = v;
  if (n == "content-type") call->content_type = v;
  if (n == "grpc-status") call->grpc_status = v;
  if (n == "grpc-message") call->grpc_message = PercentDecode(v);
  return 0;
}

int OnData(nghttp2_session*, uint8_t, int32_t stream_id, const uint8_t* data, size_t len, void* user) {
  auto* call = static_cast<Call*>(user);
  if (stream_id != call->stream_id) return 0;
  if (call->body.size() + len > kMaxResponseBytes + kPrefixBytes) {
    call->too_big = true;
    return NGHTTP2_ERR_CALLBACK_FAILURE;
  }
  call->body.append(reinterpret_cast<const char*>(data), len);
  return 0;
}

int OnStreamClose(nghttp2_session*, int32_t stream_id, uint32_t error_code, void* user) {
  auto* call = static_cast<Call*>(user);
  if (stream_id != call->stream_id) return 0;
  call->closed = true;
  call->close_error = error_code;
  return 0;
}

ssize_t ReadRequest(nghttp2_session*, int32_t, uint8_t* buf, size_t length, uint32_t* flags,
                    nghttp2_data_source*, void* user) {
  auto* call = static_cast<Call*>(user);
  size_t n = std::min(length, call->request.size() - call->sent);
  std::copy_n(call->request.data() + call->sent, n, reinterpret_cast<char*>(buf));
  call->sent += n;
  if (call->sent == call->request.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return static_cast<ssize_t>(n);
}

// Keeps the process on its CPU while it waits for the kubelet (docs/decisions/first-touched-pages.md). The
// mask is restored before anything else runs: an IPAM plugin spawned later inherits it.
class StayOnThisCpu {
 public:
  StayOnThisCpu() {
    const int cpu = ::sched_getcpu();
    if (cpu < 0 || ::sched_getaffinity(0, sizeof mask_, &mask_) != 0 || !CPU_ISSET(cpu, &mask_)) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pinned_ = ::sched_setaffinity(0, sizeof one, &one) == 0;
  }
  ~StayOnThisCpu() {
    if (pinned_) (void)::sched_setaffinity(0, sizeof mask_, &mask_);
  }
  StayOnThisCpu(const StayOnThisCpu&) = delete;
  StayOnThisCpu& operator=(const StayOnThisCpu&) = delete;

 private:
  cpu_set_t mask_{};
  bool pinned_ = false;
};

nghttp2_nv Header(std::string_view name, std::string_view value) {
  // The views need to outlive only nghttp2_submit_request, which copies them (NGHTTP2_NV_FLAG_NONE).
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
          NGHTTP2_NV_FLAG_NONE};
}

Error Timeout(const std::string& socket_path, const char* stage) {
  return Error(Code::kTryAgainLater,
               "no answer on " + base::EscapeForDisplay(socket_path) + " in time (" + stage + ")", {},
               ETIMEDOUT);
}

base::Result<base::UniqueFd> Connect(const std::string& socket_path, Clock::time_point deadline) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.empty() || socket_path.size() >= sizeof addr.sun_path) {
    return Error(Code::kInvalidConfig, "unix socket path " + base::EscapeForDisplay(socket_path) +
                                           " is empty or longer than " +
                                           std::to_string(sizeof addr.sun_path - 1) + " bytes");
  }
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  base::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return Error(Code::kIo, std::string("socket: ") + std::strerror(errno), {}, errno);
  // A unix connect completes at once or fails with EAGAIN (backlog full; never EINPROGRESS): retry.
  while (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    int e = errno;
    if (e == EINTR) continue;
    if (e == EAGAIN && base::MillisLeft(deadline) > 0) {
      ::poll(nullptr, 0, 5);
      continue;
    }
    if (e == EAGAIN) return Timeout(socket_path, "connect: the listener's backlog is full");
    Code code = (e == ENOENT || e == ECONNREFUSED) ? Code::kTryAgainLater : Code::kIo;
    return Error(code, "connect to " + base::EscapeForDisplay(socket_path) + ": " + std::strerror(e), {}, e);
  }
  return fd;
}

}  // namespace

base::Result<GrpcReply> UnaryCall(const std::string& socket_path, const std::string& method,
                                  const std::string& request, Clock::time_point deadline) {
  const StayOnThisCpu stay;
  ASSIGN_OR_RETURN(base::UniqueFd fd, Connect(socket_path, deadline));
  const std::string where = base::EscapeForDisplay(socket_path);

  Call call;
  call.fd = fd.get();
  if (request.size() > kMaxResponseBytes) return Error(Code::kInternal, "gRPC request too large");
  call.request.reserve(kPrefixBytes + request.size());
  call.request.push_back('\0');  // not compressed
  for (int shift = 24; shift >= 0; shift -= 8)
    call.request.push_back(static_cast<char>((request.size() >> shift) & 0xff));
  call.request += request;

  nghttp2_session_callbacks* raw_callbacks = nullptr;
  if (nghttp2_session_callbacks_new(&raw_callbacks) != 0) return Error(Code::kInternal, "out of memory");
  std::unique_ptr<nghttp2_session_callbacks, decltype(&nghttp2_session_callbacks_del)> callbacks(
      raw_callbacks, nghttp2_session_callbacks_del);
  nghttp2_session_callbacks_set_send_callback(callbacks.get(), OnSend);
  nghttp2_session_callbacks_set_on_header_callback(callbacks.get(), OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks.get(), OnData);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks.get(), OnStreamClose);
  nghttp2_session* raw_session = nullptr;
  if (nghttp2_session_client_new(&raw_session, callbacks.get(), &call) != 0) {
    return Error(Code::kInternal, "out of memory");
  }
  std::unique_ptr<nghttp2_session, decltype(&nghttp2_session_del)> session(raw_session, nghttp2_session_del);

  // A window as large as the largest reply, so the server never waits for a WINDOW_UPDATE mid-reply.
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, static_cast<uint32_t>(kMaxResponseBytes + kPrefixBytes)},
  };
  nghttp2_submit_settings(session.get(), NGHTTP2_FLAG_NONE, settings, std::size(settings));
  nghttp2_session_set_local_window_size(session.get(), NGHTTP2_FLAG_NONE, 0,
                                        static_cast<int32_t>(kMaxResponseBytes + kPrefixBytes));
  const std::string grpc_timeout = std::to_string(std::max(base::MillisLeft(deadline), 1)) + "m";
  const nghttp2_nv headers[] = {
      Header(":method", "POST"),
      Header(":scheme", "http"),
      Header(":path", method),
      Header(":authority", "localhost"),
      Header("content-type", "application/grpc"),
      Header("te", "trailers"),
      Header("grpc-timeout", grpc_timeout),
  };
  nghttp2_data_provider provider{};
  provider.read_callback = ReadRequest;
  call.stream_id =
      nghttp2_submit_request(session.get(), nullptr, headers, std::size(headers), &provider, nullptr);
  if (call.stream_id < 0)
    return Error(Code::kInternal, std::string("nghttp2: ") + nghttp2_strerror(call.stream_id));

  // A small buffer on the stack, a larger one on the heap once a read fills it (a List's reply can be
  // megabytes; docs/decisions/first-touched-pages.md).
  char small[2048];
  std::vector<char> large;
  char* buf = small;
  size_t buf_size = sizeof small;
  while (!call.closed) {
    int rv = nghttp2_session_send(session.get());
    if (rv != 0) return Error(Code::kIo, "sending to " + where + ": " + nghttp2_strerror(rv));
    RETURN_IF_ERROR(Flush(call, where));
    if (call.closed) break;
    pollfd p{fd.get(), POLLIN, 0};
    if (!call.out.empty() || nghttp2_session_want_write(session.get())) p.events |= POLLOUT;
    int left = base::MillisLeft(deadline);
    if (left == 0) return Timeout(socket_path, "waiting for the reply");
    int n = ::poll(&p, 1, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error(Code::kIo, std::string("poll: ") + std::strerror(errno), {}, errno);
    if (n == 0) return Timeout(socket_path, "waiting for the reply");
    if ((p.revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    ssize_t got = ::recv(fd.get(), buf, buf_size, 0);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (got < 0) return Error(Code::kIo, "reading from " + where + ": " + std::strerror(errno), {}, errno);
    if (got == 0) return Error(Code::kIo, where + " closed the connection before the reply was complete");
    ssize_t used = nghttp2_session_mem_recv(session.get(), reinterpret_cast<const uint8_t*>(buf),
                                            static_cast<size_t>(got));
    if (call.too_big) {
      return Error(Code::kIo, "the reply from " + where + " is larger than " +
                                  std::to_string(kMaxResponseBytes) + " bytes");
    }
    if (used < 0) {
      return Error(Code::kIo,
                   "the reply from " + where + " is not HTTP/2: " + nghttp2_strerror(static_cast<int>(used)));
    }
    if (buf == small && static_cast<size_t>(got) == buf_size) {
      large.resize(64u << 10);
      buf = large.data();
      buf_size = large.size();
    }
  }

  if (call.http_status != "200") {
    return Error(Code::kIo, where + " answered HTTP status " + base::EscapeForDisplay(call.http_status) +
                                ", not a gRPC reply");
  }
  if (call.content_type.rfind("application/grpc", 0) != 0) {
    return Error(Code::kIo, where + " answered content-type " + base::EscapeForDisplay(call.content_type) +
                                ", not application/grpc");
  }
  if (call.grpc_status.empty()) {
    return Error(Code::kIo, where + " closed the call without a grpc-status (HTTP/2 error " +
                                std::to_string(call.close_error) + ")");
  }
  GrpcReply reply;
  char* end = nullptr;
  long status = std::strtol(call.grpc_status.c_str(), &end, 10);
  if (*end != '\0' || status < 0 || status > 16) {
    return Error(Code::kIo, where + " sent grpc-status " + base::EscapeForDisplay(call.grpc_status));
  }
  reply.status = static_cast<int>(status);
  reply.message = std::move(call.grpc_message);
  if (reply.status != 0) return reply;
  const std::string& b = call.body;
  if (b.size() < kPrefixBytes || b[0] != '\0') {
    return Error(Code::kIo, where + " sent a gRPC reply without one uncompressed message");
  }
  size_t len = 0;
  for (size_t i = 1; i < kPrefixBytes; ++i) len = (len << 8) | static_cast<unsigned char>(b[i]);
  if (len != b.size() - kPrefixBytes) {
    return Error(Code::kIo, where + " sent a gRPC reply whose message length (" + std::to_string(len) +
                                ") is not what followed (" + std::to_string(b.size() - kPrefixBytes) +
                                " bytes)");
  }
  reply.body = b.substr(kPrefixBytes);
  return reply;
}

}  // namespace kubelet
