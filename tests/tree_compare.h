#pragma once
// Trees and arrays compared bit for bit: the CUDA stages against their CPU twins
// (tests/gpu/test_cuda_stages.cpp), a spliced tree against a whole build
// (tests/test_local_rebuild.cpp).

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "sim/tree.h"

namespace bhviz::test {

/// Index of the first difference (bitwise for floats), or -1; 0 where the sizes differ.
template <typename T>
long firstMismatch(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) return static_cast<long>(i);
  }
  return -1;
}

#define EXPECT_SAME_ARRAY(a, b)                                                                   \
  do {                                                                                            \
    const long at_ = ::bhviz::test::firstMismatch(a, b);                                          \
    EXPECT_EQ(at_, -1) << #a " differs from " #b " (sizes " << (a).size() << " vs " << (b).size() \
                       << ") first at index " << at_;                                             \
  } while (0)

/// The topology (levels, particle ranges, child links, levels of the cells), array by array.
inline void expectSameTopology(const sim::Tree& a, const sim::Tree& b) {
  EXPECT_SAME_ARRAY(a.levelBegin, b.levelBegin);
  EXPECT_SAME_ARRAY(a.first, b.first);
  EXPECT_SAME_ARRAY(a.count, b.count);
  EXPECT_SAME_ARRAY(a.child, b.child);
  EXPECT_SAME_ARRAY(a.childCount, b.childCount);
  EXPECT_SAME_ARRAY(a.level, b.level);
}

}  // namespace bhviz::test
