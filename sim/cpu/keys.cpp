#include "sim/common/hilbert_table.h"
#include "sim/cpu/cpu_stages.h"

namespace bhviz::sim::cpu {

std::vector<std::uint64_t> computeKeys(const std::vector<Vec4>& posMass, const KeyFrame& frame,
                                       Curve curve) {
  std::vector<std::uint64_t> keys(posMass.size());
#pragma omp parallel for
  for (std::size_t i = 0; i < posMass.size(); ++i) {
    keys[i] = encodeKeyByTable(curve, quantize(xyz(posMass[i]), frame), kHilbertTable);
  }
  return keys;
}

}  // namespace bhviz::sim::cpu
