// Sort on the device, the twin of cpu::sortOrder and cpu::reorder: the keys with their indices,
// then every particle array gathered into key order.
//
// A build sorts only the digits its tree reads (launchSortAndTree): the last tree's deepest level
// and one more, three bits each, rounded up to CUB's 8-bit passes, where the 63 bits take eight.
// The tree is the same, as its cells split by those digits only; what the shorter sort leaves
// unordered are runs of keys with the same sorted digits, each within a leaf, which a pass after
// the tree (launchOrderRuns) puts in order in place, so that the order is a full stable sort's,
// bit for bit. A tree that turns out to split a cell of the last sorted level is built again after
// a sort on every bit (launchTree), which pays for both sorts.
#include <algorithm>
#include <cub/device/device_radix_sort.cuh>

#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/cuda_stages.h"

namespace bhviz::sim::cuda {

namespace {

__global__ void gatherKernel(const std::uint32_t* __restrict__ order, std::uint32_t n,
                             const Vec4* __restrict__ posMass, const Vec4* __restrict__ vel,
                             const Vec4* __restrict__ accPot, const std::uint32_t* __restrict__ id,
                             const std::uint8_t* __restrict__ tag,
                             const std::uint8_t* __restrict__ bin, Vec4* __restrict__ posMassOut,
                             Vec4* __restrict__ velOut, Vec4* __restrict__ accPotOut,
                             std::uint32_t* __restrict__ idOut, std::uint8_t* __restrict__ tagOut,
                             std::uint8_t* __restrict__ binOut) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  const std::uint32_t j = order[k];
  // Vec4 has float4's size and alignment: 16-byte loads and stores.
  reinterpret_cast<float4*>(posMassOut)[k] = reinterpret_cast<const float4*>(posMass)[j];
  reinterpret_cast<float4*>(velOut)[k] = reinterpret_cast<const float4*>(vel)[j];
  reinterpret_cast<float4*>(accPotOut)[k] = reinterpret_cast<const float4*>(accPot)[j];
  idOut[k] = id[j];
  tagOut[k] = tag[j];
  binOut[k] = bin[j];
}

/// Keys sorted on their top `levels` digits (prefix) are in full order but within runs of one
/// prefix, which a thread per run starting at index i puts in order in place by insertion sort:
/// stable, so equal keys keep the order the stable radix sort left them in, the input's, as a
/// stable sort on every bit would. Runs are short where the tree was built from these keys without
/// a second attempt: a run lies within one leaf of at most N_leaf particles (launchTree;
/// sortLevelsForTree sorts every digit where N_leaf is large). Most runs are one particle long, or
/// already in order. A thread reads its neighbours' keys only for their prefix, which the
/// permutations within their runs leave as it is (aligned 8-byte stores do not tear).
__global__ void orderRunsKernel(std::uint32_t n, int shift, std::uint64_t* __restrict__ keys,
                                std::uint32_t* __restrict__ order) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint64_t prefix = keys[i] >> shift;
  if (i > 0 && keys[i - 1] >> shift == prefix) return;  // not a run's start
  std::uint32_t end = i + 1;
  bool sorted = true;
  for (; end < n && keys[end] >> shift == prefix; ++end)
    sorted = sorted && keys[end - 1] <= keys[end];
  if (sorted) return;
  for (std::uint32_t a = i + 1; a < end; ++a) {  // insertion sort of keys[i, end)
    const std::uint64_t k = keys[a];
    const std::uint32_t o = order[a];
    std::uint32_t b = a;
    for (; b > i && keys[b - 1] > k; --b) {
      keys[b] = keys[b - 1];
      order[b] = order[b - 1];
    }
    keys[b] = k;
    order[b] = o;
  }
}

constexpr int kKeyBits = 3 * kKeyBitsPerAxis;  // the keys' bits; level 1's digit the highest three

/// The bits a sort on at least `levels` digits covers: the digits' bits rounded up to whole
/// passes of CUB's onesweep, 8 bits each (tuning_radix_sort.cuh), which cost nothing more and
/// leave shorter runs; every bit past 56, which takes the eight passes every bit takes.
int sortBits(int levels) {
  constexpr int kPassBits = 8;
  const int bits = (3 * std::clamp(levels, 1, kMaxLevel) + kPassBits - 1) / kPassBits * kPassBits;
  return bits > kKeyBits - kKeyBits % kPassBits ? kKeyBits : bits;
}

}  // namespace

int sortedLevelsFor(int levels) {
  const int bits = sortBits(levels);
  return bits == kKeyBits ? kMaxLevel : bits / 3;
}

int sortLevelsForTree(const DeviceTree& tree, int nLeaf) {
  const int depth = tree.depth();  // levels of the last tree (-1: none yet)
  if (depth <= 0 || nLeaf > kMaxRunSortLeaf) return kMaxLevel;
  return std::min(depth - 1 + kSortLevelsAhead, kMaxLevel);  // depth - 1: its deepest level
}

void launchSortKeys(BuildWorkspace& ws, std::size_t n, int levels, Stream stream) {
  ws.reserve(n);
  const int bits = sortBits(levels);
  ws.sortedLevels = sortedLevelsFor(levels);
  if (n == 0) return;
  const int cur = ws.current;
  cub::DoubleBuffer<std::uint64_t> keys(ws.keys[cur].data(), ws.keys[1 - cur].data());
  cub::DoubleBuffer<std::uint32_t> order(ws.order[cur].data(), ws.order[1 - cur].data());
  // Radix sorting is stable, so equal keys keep their input order, as cpu::sortOrder does.
  std::size_t bytes = 0;
  const int count = static_cast<int>(n);
  BHVIZ_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, order, count,
                                                   kKeyBits - bits, kKeyBits, stream));
  ws.temp.reserve(bytes);
  BHVIZ_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(ws.temp.data(), bytes, keys, order, count,
                                                   kKeyBits - bits, kKeyBits, stream));
  // Keys and order travel together, so one selector names both.
  ws.current = keys.selector == 0 ? cur : 1 - cur;
}

void launchOrderRuns(BuildWorkspace& ws, std::size_t n, Stream stream) {
  if (ws.sortedLevels >= kMaxLevel) return;
  const int shift = 3 * (kMaxLevel - ws.sortedLevels);
  ws.sortedLevels = kMaxLevel;
  if (n == 0) return;
  orderRunsKernel<<<blocksFor(n), kBlock, 0, stream>>>(static_cast<std::uint32_t>(n), shift,
                                                       ws.keys[ws.current].data(),
                                                       ws.order[ws.current].data());
  BHVIZ_CUDA_CHECK_LAUNCH();
}

void launchGather(DeviceParticles& p, BuildWorkspace& ws, Stream stream) {
  if (p.n == 0) return;
  DeviceParticles& out = ws.scratch;
  out.resize(p.n);
  gatherKernel<<<blocksFor(p.n), kBlock, 0, stream>>>(
      ws.orderData(), static_cast<std::uint32_t>(p.n), p.posMass.data(), p.vel.data(),
      p.accPot.data(), p.id.data(), p.tag.data(), p.bin.data(), out.posMass.data(), out.vel.data(),
      out.accPot.data(), out.id.data(), out.tag.data(), out.bin.data());
  BHVIZ_CUDA_CHECK_LAUNCH();
  p.swap(out);
}

void launchSort(DeviceParticles& p, BuildWorkspace& ws, Stream stream) {
  launchSortKeys(ws, p.n, kMaxLevel, stream);
  launchGather(p, ws, stream);
}

void launchSortAndTree(DeviceParticles& p, BuildWorkspace& ws, int nLeaf, DeviceTree& tree,
                       Stream stream) {
  launchSortAndTree(p, ws, nLeaf, tree, stream, [](Stage, auto&& launch) { launch(); });
}

}  // namespace bhviz::sim::cuda
