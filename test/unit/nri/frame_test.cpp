// nri/frame.h: the NRI trunk's two layers of framing, fed as a socket hands bytes over.
#include "nri/frame.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace test_unit_nri_frame_test {

namespace {

nri::TtrpcMessage Msg(uint32_t stream, nri::TtrpcType type, std::string payload, uint8_t flags = 0) {
  return {stream, type, flags, std::move(payload)};
}

std::string Frame(uint32_t conn, const nri::TtrpcMessage& m) {
  auto f = nri::EncodeFrame(conn, m);
  REQUIRE(f.ok());
  return *f;
}

// A frame header and payload as they are, whatever they hold.
std::string RawFrame(uint32_t conn, const std::string& payload) {
  std::string out;
  for (uint32_t v : {conn, static_cast<uint32_t>(payload.size())})
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
  return out + payload;
}

std::vector<nri::Received> Drain(nri::Demux& d) {
  std::vector<nri::Received> out;
  while (auto r = d.Next()) out.push_back(std::move(*r));
  return out;
}

}  // namespace

TEST_CASE("a frame is the connection, the length, then ttrpc's length, stream, type and flags", "[nri]") {
  const std::string f = Frame(nri::kPluginConn, Msg(3, nri::TtrpcType::kResponse, "ab", 0x1));
  CHECK(f == std::string("\0\0\0\1\0\0\0\x0c\0\0\0\2\0\0\0\3\2\1ab", 20));
}

TEST_CASE("a message fed in pieces of any size comes out whole, once", "[nri]") {
  const nri::TtrpcMessage m = Msg(1, nri::TtrpcType::kRequest, std::string(1000, 'x') + "end");
  const std::string trunk = Frame(nri::kRuntimeConn, m);
  for (size_t piece : {size_t{1}, size_t{2}, size_t{7}, size_t{9}, size_t{10}, size_t{17}, trunk.size()}) {
    INFO("pieces of " << piece << " bytes");
    nri::Demux d;
    for (size_t at = 0; at < trunk.size(); at += piece) {
      CHECK_FALSE(d.Next());
      REQUIRE(d.Feed(std::string_view(trunk).substr(at, piece)).ok());
    }
    CHECK(Drain(d) == std::vector<nri::Received>{{nri::kRuntimeConn, m}});
    CHECK(d.buffered() == 0);
  }
}

TEST_CASE("interleaved connections come out each in its own order, a message split across frames whole",
          "[nri]") {
  const nri::TtrpcMessage a1 = Msg(1, nri::TtrpcType::kRequest, "configure");
  const nri::TtrpcMessage a2 = Msg(3, nri::TtrpcType::kRequest, "synchronize");
  const nri::TtrpcMessage b1 = Msg(1, nri::TtrpcType::kResponse, "registered");
  // a2's ttrpc bytes in two frames of connection 1, with connection 2's message and another connection's
  // frame between them.
  auto ttrpc_of = [](const std::string& frame) { return frame.substr(nri::kMuxHeaderBytes); };
  const std::string a2_bytes = ttrpc_of(Frame(nri::kPluginConn, a2));
  const std::string trunk = Frame(nri::kPluginConn, a1) + RawFrame(nri::kPluginConn, a2_bytes.substr(0, 12)) +
                            Frame(nri::kRuntimeConn, b1) + RawFrame(7, "another connection") +
                            RawFrame(nri::kPluginConn, a2_bytes.substr(12));
  nri::Demux d;
  REQUIRE(d.Feed(trunk).ok());
  CHECK(Drain(d) ==
        std::vector<nri::Received>{{nri::kPluginConn, a1}, {nri::kRuntimeConn, b1}, {nri::kPluginConn, a2}});
  CHECK(d.dropped_frames() == 1);
  CHECK(d.buffered() == 0);
}

TEST_CASE("what the runtime never sends is refused, and the demultiplexer stays failed", "[nri]") {
  struct Case {
    const char* what;
    std::string trunk;
    const char* says;
  };
  std::string over_frame = RawFrame(nri::kPluginConn, "");
  over_frame[4] = static_cast<char>(0x7f);  // a length of about 2 GiB
  std::string over_message(nri::kTtrpcHeaderBytes, '\0');
  over_message[0] = static_cast<char>(0x01);  // 16 MiB
  over_message[8] = 1;
  std::string bad_type = Frame(nri::kPluginConn, Msg(1, nri::TtrpcType::kRequest, "x"));
  bad_type[nri::kMuxHeaderBytes + 8] = 9;
  const std::vector<Case> cases = {
      {"a frame over the bound, before its payload arrived", over_frame, "over the"},
      {"a frame of connection 0", RawFrame(0, "x"), "connection 0"},
      {"a ttrpc message over 4 MiB", RawFrame(nri::kRuntimeConn, over_message), "over ttrpc's"},
      {"an unknown ttrpc type", bad_type, "unknown type 9"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    nri::Demux d;
    const base::Status s = d.Feed(c.trunk);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == base::Code::kDecoding);
    CHECK_THAT(s.error().msg, Catch::Contains(c.says));
    CHECK_FALSE(d.Feed(Frame(nri::kPluginConn, Msg(1, nri::TtrpcType::kRequest, "after"))).ok());
    CHECK_FALSE(d.Next());
  }
}

TEST_CASE("a message over ttrpc's bound or for connection 0 is never framed", "[nri]") {
  CHECK_FALSE(nri::EncodeFrame(0, Msg(1, nri::TtrpcType::kRequest, "x")).ok());
  CHECK_FALSE(nri::EncodeFrame(nri::kPluginConn,
                               Msg(1, nri::TtrpcType::kRequest, std::string(nri::kTtrpcMaxMessage + 1, 'x')))
                  .ok());
  CHECK(nri::EncodeFrame(nri::kPluginConn,
                         Msg(1, nri::TtrpcType::kRequest, std::string(nri::kTtrpcMaxMessage, 'x')))
            .ok());
}

}  // namespace test_unit_nri_frame_test
