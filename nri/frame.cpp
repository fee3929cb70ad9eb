#include "nri/frame.h"

#include <utility>

namespace nri {

using base::Code;
using base::Error;
using base::Status;

namespace {

uint32_t ReadBe32(std::string_view b) {
  return (uint32_t{static_cast<uint8_t>(b[0])} << 24) | (uint32_t{static_cast<uint8_t>(b[1])} << 16) |
         (uint32_t{static_cast<uint8_t>(b[2])} << 8) | uint32_t{static_cast<uint8_t>(b[3])};
}

void AppendBe32(std::string& out, uint32_t v) {
  out.push_back(static_cast<char>(v >> 24));
  out.push_back(static_cast<char>(v >> 16));
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v));
}

}  // namespace

Status Demux::Feed(std::string_view bytes) {
  if (failed_) return *failed_;
  trunk_.append(bytes);
  size_t at = 0;
  Status s = base::Ok();
  while (s.ok() && trunk_.size() - at >= kMuxHeaderBytes) {
    const std::string_view head(trunk_.data() + at, kMuxHeaderBytes);
    const uint32_t conn = ReadBe32(head), length = ReadBe32(head.substr(4));
    if (conn == 0) {
      s = Error(Code::kDecoding, "NRI: a frame of the reserved connection 0");
      break;
    }
    if (length > kMaxFramePayload) {
      s = Error(Code::kDecoding, "NRI: a frame of " + std::to_string(length) + " bytes, over the " +
                                     std::to_string(kMaxFramePayload) + " the runtime ever writes");
      break;
    }
    if (trunk_.size() - at - kMuxHeaderBytes < length) break;
    const std::string_view payload(trunk_.data() + at + kMuxHeaderBytes, length);
    at += kMuxHeaderBytes + length;
    if (conn != kPluginConn && conn != kRuntimeConn) {
      ++dropped_;
      continue;
    }
    std::string& stream = conns_[conn - 1];
    stream.append(payload);
    s = ParseStream(conn, stream);
  }
  trunk_.erase(0, at);
  if (!s.ok()) failed_ = s.error();
  return s;
}

Status Demux::ParseStream(uint32_t conn, std::string& stream) {
  size_t at = 0;
  Status s = base::Ok();
  while (stream.size() - at >= kTtrpcHeaderBytes) {
    const std::string_view head(stream.data() + at, kTtrpcHeaderBytes);
    const uint32_t length = ReadBe32(head);
    if (length > kTtrpcMaxMessage) {
      s = Error(Code::kDecoding, "NRI: a ttrpc message of " + std::to_string(length) +
                                     " bytes on connection " + std::to_string(conn) + ", over ttrpc's " +
                                     std::to_string(kTtrpcMaxMessage));
      break;
    }
    const auto type = static_cast<uint8_t>(head[8]);
    if (type < 1 || type > 3) {
      s = Error(Code::kDecoding, "NRI: a ttrpc message of unknown type " + std::to_string(type) +
                                     " on connection " + std::to_string(conn));
      break;
    }
    if (stream.size() - at - kTtrpcHeaderBytes < length) break;
    Received r;
    r.conn = conn;
    r.msg.stream = ReadBe32(head.substr(4));
    r.msg.type = static_cast<TtrpcType>(type);
    r.msg.flags = static_cast<uint8_t>(head[9]);
    r.msg.payload.assign(stream, at + kTtrpcHeaderBytes, length);
    ready_.push_back(std::move(r));
    at += kTtrpcHeaderBytes + length;
  }
  stream.erase(0, at);
  return s;
}

std::optional<Received> Demux::Next() {
  if (ready_.empty()) return std::nullopt;
  Received r = std::move(ready_.front());
  ready_.pop_front();
  return r;
}

size_t Demux::buffered() const {
  size_t n = trunk_.size() + conns_[0].size() + conns_[1].size();
  for (const Received& r : ready_) n += r.msg.payload.size();
  return n;
}

base::Result<std::string> EncodeFrame(uint32_t conn, const TtrpcMessage& msg) {
  if (conn == 0) return Error(Code::kInternal, "NRI: connection 0 is reserved");
  if (msg.payload.size() > kTtrpcMaxMessage)
    return Error(Code::kInternal, "NRI: a ttrpc message of " + std::to_string(msg.payload.size()) +
                                      " bytes, over ttrpc's " + std::to_string(kTtrpcMaxMessage));
  std::string out;
  out.reserve(kMuxHeaderBytes + kTtrpcHeaderBytes + msg.payload.size());
  AppendBe32(out, conn);
  AppendBe32(out, static_cast<uint32_t>(kTtrpcHeaderBytes + msg.payload.size()));
  AppendBe32(out, static_cast<uint32_t>(msg.payload.size()));
  AppendBe32(out, msg.stream);
  out.push_back(static_cast<char>(msg.type));
  out.push_back(static_cast<char>(msg.flags));
  out.append(msg.payload);
  return out;
}

}  // namespace nri
