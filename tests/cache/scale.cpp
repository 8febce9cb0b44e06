// Shared-cache tests: a C++ translation unit (templates, the standard library).
#include <numeric>
#include <vector>

extern "C" {
#include "shapes.h"
}

template <typename T> T rf_sum(const std::vector<T>& v) { return std::accumulate(v.begin(), v.end(), T{}); }

int rf_total(int n) {
  std::vector<int> values(static_cast<unsigned>(n), RF_BORDER);
  return rf_sum(values);
}
