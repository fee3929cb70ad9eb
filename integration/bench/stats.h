// Order statistics of a sample.
#pragma once

#include <cstddef>
#include <vector>

namespace bench {

struct Summary {
  size_t n = 0;
  double median = 0;
  double p95 = 0;
  double p99 = 0;
  double min = 0;
  double max = 0;
};

/// Median, p95 and p99 (nearest rank) of `v`; all zero when empty.
Summary Summarize(std::vector<double> v);

}  // namespace bench
