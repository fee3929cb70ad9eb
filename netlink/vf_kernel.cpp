#include "netlink/vf_kernel.h"

namespace netlink {

std::string DescribeVfSettings(const VfSettings& s) {
  std::string d = "vf " + std::to_string(s.vf);
  auto onoff = [](bool b) { return b ? "on" : "off"; };
  if (s.mac) d += " mac " + *s.mac;
  if (s.vlan) d += " vlan " + std::to_string(s.vlan->vlan) + " qos " + std::to_string(s.vlan->qos);
  if (s.rate)
    d += " min_tx_rate " + std::to_string(s.rate->min_tx_rate) + " max_tx_rate " +
         std::to_string(s.rate->max_tx_rate);
  if (s.spoofchk) d += std::string(" spoofchk ") + onoff(*s.spoofchk);
  if (s.trust) d += std::string(" trust ") + onoff(*s.trust);
  if (s.link_state) {
    static const char* const kNames[] = {"auto", "enable", "disable"};
    d += " state " + (*s.link_state < 3 ? std::string(kNames[*s.link_state]) : std::to_string(*s.link_state));
  }
  if (s.node_guid) d += " node_guid " + *s.node_guid;
  if (s.port_guid) d += " port_guid " + *s.port_guid;
  return d;
}

}  // namespace netlink
