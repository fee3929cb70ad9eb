#include "conf/rdma_config.h"

#include "conf/fields.h"
#include "conf/keys.h"

namespace conf {

base::Status ParseRdma(const nlohmann::json& root, RdmaConfig& out) {
  const nlohmann::json* r = Get(root, Key(kTop, "rdma"));
  if (!r) return base::Ok();
  if (!r->is_object()) return Invalid("rdma: must be an object");
  RETURN_IF_ERROR(RefuseUnknown(*r, kRdma));
  out.present = true;
  out.required = true;
  if (const nlohmann::json* v = Get(*r, Key(kRdma, "netnsMode"))) {
    const char* fix = "rdma.netnsMode: must be \"auto\", \"shared\" or \"exclusive\"";
    if (!v->is_string()) return Invalid(fix);
    const auto& m = v->get_ref<const std::string&>();
    if (m == "auto")
      out.netns_mode = RdmaConfig::NetnsMode::kAuto;
    else if (m == "shared")
      out.netns_mode = RdmaConfig::NetnsMode::kShared;
    else if (m == "exclusive")
      out.netns_mode = RdmaConfig::NetnsMode::kExclusive;
    else
      return Invalid(std::string(fix) + ", not " + Quote(m));
  }
  RETURN_IF_ERROR(GetBool(*r, Key(kRdma, "setSystemMode"), "rdma.setSystemMode", &out.set_system_mode));
  RETURN_IF_ERROR(GetBool(*r, Key(kRdma, "required"), "rdma.required", &out.required));
  RETURN_IF_ERROR(GetBool(*r, Key(kRdma, "softRoce"), "rdma.softRoce", &out.soft_roce));
  return base::Ok();
}

}  // namespace conf
