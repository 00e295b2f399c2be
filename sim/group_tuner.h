#pragma once
// Group splitting tuned on the measured walk time (after GOTHIC, Miki & Umemura 2017, §2.4,
// which tunes its groups' splitting radius by Brent's method on the measured gravity time).
// A group of up to N_group targets shares one tree walk. Where few particles are active (block
// substeps: the centre's few thousand) groups of N_group are too few to fill the GPU, and each
// walk is long: smaller groups take more interactions each but walk in parallel. So for each
// kind of evaluation (its shallowest active bin: about the same particles each time) the tuner
// tries N_group, N_group/2, … N_group/16 (not below kSmallest) in turn while they
// keep getting faster per target, keeps the fastest, and every kRetry evaluations of that kind
// tries a neighbour of it again (the particles move, and so does the best size). Simulation
// does not ask it under the acceleration MAC, whose smaller groups are faster only by being less
// accurate (docs/ARCHITECTURE.md, "Rebuild or refit; the group size").

#include <array>
#include <cstdint>

namespace bhviz::sim {

class GroupTuner {
 public:
  static constexpr int kCandidates = 5;  ///< N_group, /2, /4, /8, /16
  static constexpr int kSmallest = 4;    ///< no candidate below this (or N_group, if smaller)
  static constexpr int kKinds = 24;      ///< kinds told apart (more fold into the last)
  static constexpr int kRetry = 32;      ///< evaluations of a kind between two retries

  /// The group size of a candidate for the largest size `nGroup` [particles].
  static int groupSize(int nGroup, int candidate);
  /// The candidates of distinct sizes for `nGroup` (N_group 8: 8 and 4, two) [1].
  static int candidates(int nGroup);

  /// The candidate the next evaluation of `kind` takes, with the largest size `nGroup`.
  int choose(int kind, int nGroup) const;
  /// After an evaluation of `kind` with `candidate`: its walk time per target [ms].
  void record(int kind, int candidate, double walkMsPerTarget, int nGroup);
  /// The candidate a kind settled on (its fastest measured so far; 0 before any).
  int best(int kind) const;

 private:
  struct Kind {
    std::array<double, kCandidates> msPerTarget{-1.0, -1.0, -1.0, -1.0, -1.0};  // < 0: none yet
    int explored = 0;      // candidates tried in the first pass (it stops at a slower one)
    bool settled = false;  // the first pass is over
    int sinceRetry = 0;    // evaluations since the last retry
    int nextRetry = 1;     // +1 or −1: the neighbour the next retry tries
  };
  static int index(int kind) { return kind < 0 ? 0 : kind >= kKinds ? kKinds - 1 : kind; }
  std::array<Kind, kKinds> m_kinds{};
};

}  // namespace bhviz::sim
