#include <algorithm>
#include <numeric>

#include "sim/cpu/cpu_stages.h"

namespace bhviz::sim::cpu {

std::vector<std::uint32_t> sortOrder(const std::vector<std::uint64_t>& keys) {
  std::vector<std::uint32_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return keys[a] < keys[b]; });
  return order;
}

namespace {
template <typename T>
void permute(std::vector<T>& v, const std::vector<std::uint32_t>& order) {
  std::vector<T> out(v.size());
#pragma omp parallel for
  for (std::size_t k = 0; k < order.size(); ++k) out[k] = v[order[k]];
  v.swap(out);
}
}  // namespace

void reorder(Particles& p, const std::vector<std::uint32_t>& order) {
  permute(p.posMass, order);
  permute(p.vel, order);
  permute(p.accPot, order);
  permute(p.id, order);
  permute(p.tag, order);
  permute(p.bin, order);
}

}  // namespace bhviz::sim::cpu
