#include "sim/cpu/cpu_stages.h"

namespace bhviz::sim::cpu {

Box boundingBox(const std::vector<Vec4>& posMass) {
  Box total;
#pragma omp parallel
  {
    Box local;
#pragma omp for nowait
    for (std::size_t i = 0; i < posMass.size(); ++i) grow(local, xyz(posMass[i]));
#pragma omp critical
    grow(total, local);
  }
  return total;
}

}  // namespace bhviz::sim::cpu
