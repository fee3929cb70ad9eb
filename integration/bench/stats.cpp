#include "integration/bench/stats.h"

#include <algorithm>
#include <cmath>

namespace bench {

Summary Summarize(std::vector<double> v) {
  Summary s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  // Nearest rank: the smallest value with at least 95 % of the sample at or below it.
  const size_t rank = static_cast<size_t>(std::ceil(0.95 * static_cast<double>(n)));
  s.p95 = v[std::max<size_t>(rank, 1) - 1];
  s.min = v.front();
  s.max = v.back();
  return s;
}

}  // namespace bench
