// erdma-cni's own entry in a node conflist: the default one, reading one from
// a file, and checking it with the plugin's own config parser.
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

/// An entry from text: a JSON object with "type": "erdma-cni" and none of the
/// keys the runtime sets per call (prevResult, runtimeConfig). Code 6 or 7.
base::Result<Json> ParseEntry(std::string_view text);

/// Runs the plugin's config parser on the entry as the runtime will hand it over in a chain with this
/// cniVersion and network name (device selection aside: the runtime may supply it), then the node file's
/// checks of dataDir and logFile. Code 7 with the plugin's own message on a bad entry; otherwise the warnings
/// an operator should see (none when all is well). `modes`: the plugin's (cni::Modes(), given by main).
base::Result<std::vector<std::string>> CheckEntry(const Json& entry, conf::ModeTable modes,
                                                  const std::string& cni_version,
                                                  const std::string& network_name,
                                                  const conf::NodePolicy& node);

/// CheckEntry on the erdma-cni entry `conflist` holds, with the conflist's cniVersion and name (no entry: no
/// warnings). `conflist` has passed Validate.
base::Result<std::vector<std::string>> CheckInstalledEntry(const Json& conflist, conf::ModeTable modes,
                                                           const conf::NodePolicy& node);

}  // namespace install
