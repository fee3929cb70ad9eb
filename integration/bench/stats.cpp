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
  // Nearest rank: the smallest value with at least q of the sample at or below it.
  auto rank = [&](double q) {
    return v[std::max<size_t>(static_cast<size_t>(std::ceil(q * static_cast<double>(n))), 1) - 1];
  };
  s.p95 = rank(0.95);
  s.p99 = rank(0.99);
  s.min = v.front();
  s.max = v.back();
  return s;
}

}  // namespace bench
