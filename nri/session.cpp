#include "nri/session.h"

#include <exception>
#include <utility>

namespace nri {

using base::Code;
using base::Error;
using base::Status;

namespace {

constexpr uint32_t kRegisterStream = 1;  // our first request on the runtime's connection (odd: ours)
constexpr int32_t kInvalidArgument = 3;  // gRPC's INVALID_ARGUMENT

}  // namespace

std::string Session::Start() {
  const Request req{kRuntimeService, "RegisterPlugin", EncodeRegisterPlugin(name_, index_), 0};
  auto frame = EncodeFrame(kRuntimeConn, {kRegisterStream, TtrpcType::kRequest, 0, EncodeRequest(req)});
  return frame.ok() ? *frame : std::string();  // a name and an index never reach 4 MiB
}

Status Session::Feed(std::string_view bytes, std::string* out) {
  RETURN_IF_ERROR(demux_.Feed(bytes));
  while (auto r = demux_.Next()) {
    if (r->conn == kPluginConn && r->msg.type == TtrpcType::kRequest) {
      RETURN_IF_ERROR(OnRequest(r->msg, out));
    } else if (r->conn == kRuntimeConn && r->msg.type == TtrpcType::kResponse) {
      RETURN_IF_ERROR(OnResponse(r->msg));
    }
    // Anything else (a stream's data, a response on the plugin's connection) asks nothing of us.
  }
  return base::Ok();
}

Status Session::OnResponse(const TtrpcMessage& msg) {
  if (msg.stream != kRegisterStream) return base::Ok();
  ASSIGN_OR_RETURN(Response resp, DecodeResponse(msg.payload));
  if (resp.code != 0)
    return Error(Code::kNotAvailable, "NRI: the runtime refused to register the plugin (code " +
                                          std::to_string(resp.code) + "): " + resp.message);
  registered_ = true;
  return base::Ok();
}

Status Session::OnRequest(const TtrpcMessage& msg, std::string* out) {
  Response resp;
  if (auto req = DecodeRequest(msg.payload); req.ok())
    resp = Answer(*req);
  else
    resp = {kInvalidArgument, req.error().msg, ""};
  auto frame = EncodeFrame(kPluginConn, {msg.stream, TtrpcType::kResponse, 0, EncodeResponse(resp)});
  if (!frame.ok())
    frame = EncodeFrame(kPluginConn, {msg.stream, TtrpcType::kResponse, 0,
                                      EncodeResponse({kInternalError, "the reply is too large", ""})});
  if (!frame.ok()) return std::move(frame).error();
  out->append(*frame);
  ++answered_;
  return base::Ok();
}

Response Session::Answer(const Request& req) {
  if (req.service != kPluginService) return {kUnimplemented, "no service " + req.service, ""};
  auto bad = [](const Error& e) { return Response{kInvalidArgument, e.msg, ""}; };
  if (req.method == "Configure") {
    auto c = DecodeConfigure(req.payload);
    if (!c.ok()) return bad(c.error());
    configured_ = true;
    if (handlers_.configured) {
      try {
        handlers_.configured(*c);
      } catch (const std::exception&) {
        ++handler_failures_;
      }
    }
    return {0, "", EncodeConfigureResponse(kSubscribed)};
  }
  if (req.method == "Synchronize") {
    auto s = DecodeSynchronize(req.payload);
    if (!s.ok()) return bad(s.error());
    synchronizing_.insert(synchronizing_.end(), s->pods.begin(), s->pods.end());
    if (!s->more) {
      std::vector<Pod> pods = std::move(synchronizing_);
      synchronizing_.clear();
      if (handlers_.synchronized) {
        try {
          handlers_.synchronized(pods);
        } catch (const std::exception&) {
          ++handler_failures_;
        }
      }
    }
    return {0, "", EncodeSynchronizeResponse(s->more)};
  }
  if (req.method == "CreateContainer") {
    auto c = DecodeCreateContainer(req.payload);
    if (!c.ok()) return bad(c.error());
    Adjustment a;
    if (handlers_.create_container) {
      // Never in a container's way: whatever goes wrong, the container is created as without the agent.
      try {
        a = handlers_.create_container(*c).adjust;
      } catch (const std::exception&) {
        a = {};
        ++handler_failures_;
      }
    }
    return {0, "", EncodeCreateContainerResponse(a)};
  }
  if (req.method == "StateChange") {
    auto e = DecodeStateChange(req.payload);
    if (!e.ok()) return bad(e.error());
    if (e->event == static_cast<int>(Event::kRemovePodSandbox) && handlers_.pod_removed) {
      try {
        handlers_.pod_removed(e->pod);
      } catch (const std::exception&) {
        ++handler_failures_;
      }
    }
    return {0, "", EncodeEmpty()};
  }
  if (req.method == "Shutdown") return {0, "", EncodeEmpty()};
  return {kUnimplemented, "no method " + req.method, ""};
}

}  // namespace nri
