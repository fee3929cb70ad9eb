// Version negotiation: a network at cniVersion 1.1.0 can use an IPAM plugin that stops at 1.0.0.
#pragma once

#include "conf/config.h"
#include "ipam/ipam.h"

namespace ipam {

/// What an IPAM plugin reads: the network config at the negotiated cniVersion, without the unused prevResult.
nlohmann::json DelegateConfig(const conf::Config& cfg);

/// Runs the inner executor; when the plugin fails and its VERSION answer lacks the config's cniVersion, runs
/// it again at the highest version both support, prevResult converted to it.
class NegotiatingExecutor : public Executor {
 public:
  explicit NegotiatingExecutor(Executor& inner) : inner_(inner) {}
  base::Result<nlohmann::json> Run(const std::string& type, const std::string& command,
                                   const std::string& config) override;
  void RunFor(const std::optional<ipam::Attachment>& who) override { inner_.RunFor(who); }

 private:
  Executor& inner_;
};

}  // namespace ipam
