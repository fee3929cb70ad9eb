// erdma-cni's entry in a node conflist: the default one, one from a file, checked by the plugin's parser.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "conf/modes.h"
#include "conf/node.h"
#include "install/conflist.h"

namespace install {

/// The entry of docs/deploy.md: mode none (SMC-R for annotated pods on the primary plugin's interface), with
/// the capabilities that make containerd and CRI-O pass the pod's annotations and device ID.
Json DefaultEntry();

/// An entry from text: a JSON object of "type": "erdma-cni" without prevResult or runtimeConfig. Code 6 or 7.
base::Result<Json> ParseEntry(std::string_view text);

/// Runs the plugin's config parser (with `modes`) on the entry as a chain with this cniVersion and network
/// name hands it over (device selection aside), then the node file's checks of dataDir and logFile. Code 7
/// with the plugin's own message on a bad entry; otherwise the warnings an operator should see.
base::Result<std::vector<std::string>> CheckEntry(const Json& entry, conf::ModeTable modes,
                                                  const std::string& cni_version,
                                                  const std::string& network_name,
                                                  const conf::NodePolicy& node);

/// CheckEntry on the erdma-cni entry of `conflist` (validated), with its cniVersion and name; none: no
/// warnings.
base::Result<std::vector<std::string>> CheckInstalledEntry(const Json& conflist, conf::ModeTable modes,
                                                           const conf::NodePolicy& node);

}  // namespace install
