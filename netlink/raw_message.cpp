#include "netlink/mnl_request.h"

#include <libmnl/libmnl.h>

#include <utility>

namespace netlink::mnl {

Request::Request(uint16_t type, uint16_t flags, uint32_t seq) {
  nlh_ = mnl_nlmsg_put_header(buf_.data());
  nlh_->nlmsg_type = type;
  nlh_->nlmsg_flags = flags;
  nlh_->nlmsg_seq = seq;
}

void* Request::PutExtraHeader(size_t size) { return mnl_nlmsg_put_extra_header(nlh_, size); }

void Request::PutU8(uint16_t type, uint8_t v) {
  ok_ = ok_ && mnl_attr_put_u8_check(nlh_, buf_.size(), type, v);
}

void Request::PutU32(uint16_t type, uint32_t v) {
  ok_ = ok_ && mnl_attr_put_u32_check(nlh_, buf_.size(), type, v);
}

void Request::PutString(uint16_t type, const std::string& s) {
  ok_ = ok_ && mnl_attr_put_strz_check(nlh_, buf_.size(), type, s.c_str());
}

Bytes Request::Finish() && {
  if (!ok_) return {};
  buf_.resize(nlh_->nlmsg_len);
  return std::move(buf_);
}

}  // namespace netlink::mnl
