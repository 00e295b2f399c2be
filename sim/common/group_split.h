#pragma once
// Groups under the acceleration MAC, split where |a_old| spans too much: written once, run by
// cpu::buildGroups and by the CUDA groups stage, so both backends make the same groups.
//
// The acceleration MAC tests every cell against α |a_old| of the group's *smallest*
// acceleration. Near the centre of a symmetric system |a| → 0, and one particle there makes its
// whole group open nearly every cell: on the 1 M merger its group did 16× the mean work, longer
// than a warp's whole share of the GPU's walk (docs/BENCHMARKS.md, "Against Ryoanji on its own
// cube, every MAC"). So a run of particles that would be a group is halved, in key order at its
// middle target, while its targets' |a_old| spans more than `accSpread` and it holds more than
// `minTargets` targets; each piece is a group of its own with its own box and |a_old| minimum.
// The geometric MACs do not read |a_old|: no split.

#include <cmath>
#include <cstdint>

#include "sim/common/hd.h"
#include "sim/common/mac.h"
#include "sim/common/vec.h"

namespace bhviz::sim {

struct GroupSplit {
  float accSpread = 0.0f;        ///< largest max/min |a_old| of a group's targets; 0: no split
  std::uint32_t minTargets = 4;  ///< a group of this many targets or fewer is never split
};

/// The split the MAC asks for: the acceleration MAC halves groups whose |a_old| spans more
/// than 2× (bench_walk_schedule's model: 1.14–1.22 of perfect balance against 2.04–3.02).
BHVIZ_HD inline GroupSplit groupSplit(const MacSetup& mac) {
  return mac.code == MacCode::Acceleration ? GroupSplit{2.0f, 4u} : GroupSplit{};
}

/// Runs of at most this many particles are split (N_group ≤ 128 and its leaf chunks).
inline constexpr std::uint32_t kSplitLongestRun = 128;
/// Depth-first pieces waiting: each halving of ≤ 128 targets adds one, at most 7 deep.
inline constexpr int kSplitStack = 8;

/// Calls emit(first, count) for each piece of the run [first, first + count), in key order:
/// the run itself when it needs no split. `isTarget(i)` says whether particle i gets a force,
/// `acc(i)` is its |a_old|. A run longer than kSplitLongestRun is emitted whole.
template <typename IsTarget, typename Acc, typename Emit>
BHVIZ_HD void splitRun(std::uint32_t first, std::uint32_t count, const GroupSplit& s,
                       IsTarget isTarget, Acc acc, Emit emit) {
  if (!(s.accSpread > 0.0f) || count > kSplitLongestRun) {
    emit(first, count);
    return;
  }
  std::uint32_t pendingFirst[kSplitStack], pendingCount[kSplitStack];
  int top = 0;
  pendingFirst[0] = first;
  pendingCount[0] = count;
  top = 1;
  while (top > 0) {
    --top;
    const std::uint32_t f = pendingFirst[top], n = pendingCount[top];
    std::uint32_t targets = 0;
    float lo = INFINITY, hi = 0.0f;
    for (std::uint32_t i = f; i < f + n; ++i) {
      if (!isTarget(i)) continue;
      ++targets;
      const float a = acc(i);
      lo = fminf(lo, a);
      hi = fmaxf(hi, a);
    }
    // fminf and fmaxf pass over a NaN |a| (the NaN check names such particles); a run with no
    // finite |a| has lo = ∞ and is not split.
    const bool split = targets > s.minTargets && hi > s.accSpread * lo && top + 2 <= kSplitStack;
    if (!split) {
      emit(f, n);
      continue;
    }
    // The second piece starts at the target with index targets / 2 (from 0), so both hold one.
    std::uint32_t at = f, seen = 0;
    for (std::uint32_t i = f; i < f + n; ++i) {
      if (!isTarget(i)) continue;
      if (seen == targets / 2) {
        at = i;
        break;
      }
      ++seen;
    }
    // The first piece is popped next, so the pieces come out in key order.
    pendingFirst[top] = at;
    pendingCount[top] = f + n - at;
    pendingFirst[top + 1] = f;
    pendingCount[top + 1] = at - f;
    top += 2;
  }
}

}  // namespace bhviz::sim
