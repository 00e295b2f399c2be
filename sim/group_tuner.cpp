#include "sim/group_tuner.h"

#include <algorithm>

namespace bhviz::sim {

int GroupTuner::groupSize(int nGroup, int candidate) {
  const int floor = std::min(nGroup, kSmallest);
  return std::max(floor, nGroup >> std::clamp(candidate, 0, kCandidates - 1));
}

int GroupTuner::candidates(int nGroup) {
  int n = 1;
  while (n < kCandidates && groupSize(nGroup, n) < groupSize(nGroup, n - 1)) ++n;
  return n;
}

int GroupTuner::best(int kind) const {
  const Kind& k = m_kinds[index(kind)];
  int best = 0;
  for (int c = 1; c < kCandidates; ++c) {
    if (k.msPerTarget[c] >= 0.0 && k.msPerTarget[c] < k.msPerTarget[best]) best = c;
  }
  return best;
}

int GroupTuner::choose(int kind, int nGroup) const {
  const Kind& k = m_kinds[index(kind)];
  const int count = candidates(nGroup);
  if (!k.settled) return std::min(k.explored, count - 1);
  const int b = std::min(best(kind), count - 1);
  if (k.sinceRetry + 1 < kRetry || count == 1) return b;
  // A neighbour of the best, alternating sides (the other one at the ends).
  const int n = b + k.nextRetry;
  return n >= 0 && n < count ? n : b - k.nextRetry;
}

void GroupTuner::record(int kind, int candidate, double walkMsPerTarget, int nGroup) {
  if (!(walkMsPerTarget > 0.0) || candidate < 0 || candidate >= kCandidates) return;
  Kind& k = m_kinds[index(kind)];
  double& m = k.msPerTarget[candidate];
  // Smoothed: each measurement carries its noise, and the best size drifts as particles move.
  m = m < 0.0 ? walkMsPerTarget : 0.5 * (m + walkMsPerTarget);
  if (!k.settled) {
    // The first pass goes on while each size is faster than the one before.
    const bool slower = candidate > 0 && k.msPerTarget[candidate - 1] >= 0.0 &&
                        walkMsPerTarget > k.msPerTarget[candidate - 1];
    k.explored = candidate + 1;
    k.settled = slower || k.explored >= candidates(nGroup);
    return;
  }
  if (k.sinceRetry + 1 >= kRetry) {
    k.sinceRetry = 0;
    k.nextRetry = -k.nextRetry;
  } else {
    ++k.sinceRetry;
  }
}

}  // namespace bhviz::sim
