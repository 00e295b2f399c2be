// The CUDA backend's drawing export: one thread per box, the per-box math of sim/common/draw.h
// (the same functions sim/cpu/draw.cpp calls on the host).
#include <cuda_runtime.h>

#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/draw.h"

namespace bhviz::sim::cuda {

namespace {

/// The cell colours by level, passed by value to the kernel (a BoxQuery holds a std::array).
struct LevelColours {
  Rgba rgba[kMaxLevel + 1];
};

/// One thread per cell of [begin, begin + n): its geometric cube, coloured by level.
__global__ void cellBoxesKernel(std::uint32_t begin, std::uint32_t n,
                                const std::uint32_t* __restrict__ first,
                                const std::uint8_t* __restrict__ level,
                                const Vec4* __restrict__ posMass,
                                const KeyFrame* __restrict__ frame, LevelColours colours,
                                DrawBox* __restrict__ out) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint32_t c = begin + i;
  const Vec4 x = posMass[first[c]];
  const int l = level[c];
  out[i] = cellDrawBox({x.x, x.y, x.z}, l, *frame, colours.rgba[l]);
}

/// One thread per group: the box of its active particles.
__global__ void groupBoxesKernel(std::uint32_t n, const Box* __restrict__ box, Rgba colour,
                                 DrawBox* __restrict__ out) {
  const std::uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= n) return;
  out[g] = groupDrawBox(box[g], colour);
}

LevelSpan spanOf(const DrawSource& src, const BoxQuery& q) {
  const int levels = src.levelBegin->empty() ? 0 : static_cast<int>(src.levelBegin->size()) - 1;
  return levelSpan(q.minLevel, q.maxLevel, levels);
}

}  // namespace

std::size_t drawBoxCount(const DrawSource& src, const BoxQuery& q) {
  std::size_t n = 0;
  const LevelSpan span = spanOf(src, q);
  const std::vector<std::uint32_t>& begin = *src.levelBegin;
  if (q.cells && span.first <= span.last) n += begin[span.last + 1] - begin[span.first];
  if (q.groups) n += src.groups;
  return n;
}

void launchDrawBoxes(const DrawSource& src, const BoxQuery& q, DrawBox* out, Stream stream) {
  const LevelSpan span = spanOf(src, q);
  if (q.cells && span.first <= span.last) {
    LevelColours colours{};
    for (int l = 0; l <= kMaxLevel; ++l)
      colours.rgba[l] = q.cellColour[static_cast<std::size_t>(l)];
    const std::uint32_t begin = (*src.levelBegin)[span.first];
    const std::uint32_t n = (*src.levelBegin)[span.last + 1] - begin;
    cellBoxesKernel<<<blocksFor(n), kBlock, 0, stream>>>(begin, n, src.first, src.level,
                                                         src.posMass, src.frame, colours, out);
    BHVIZ_CUDA_CHECK_LAUNCH();
    out += n;
  }
  if (q.groups && src.groups > 0) {
    groupBoxesKernel<<<blocksFor(src.groups), kBlock, 0, stream>>>(src.groups, src.groupBox,
                                                                   q.groupColour, out);
    BHVIZ_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace bhviz::sim::cuda
