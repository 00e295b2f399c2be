#pragma once
// Per-stage timings of one substep, named alike on every backend.

#include <array>
#include <cstdint>
#include <string_view>

namespace bhviz::sim {

enum class Stage : int {
  Predict,  ///< open kicks, new bins and the drift of every particle
  BoundingBox,
  Keys,
  Sort,     ///< sort by key and reorder the particle arrays
  Tree,     ///< octree topology from the sorted keys
  Moments,  ///< masses, centres of mass, quadrupoles, boxes, opening values
  Groups,
  Walk,       ///< tree walk and force evaluation of the active particles
  Integrate,  ///< closing kicks of the active particles
  Domains,    ///< distributed runs: ORB decomposition and particle exchange (0 on one process)
  Let,        ///< distributed runs: essential trees cut, sent and received (0 on one process)
  Count
};

inline constexpr std::array<std::string_view, static_cast<int>(Stage::Count)> kStageNames = {
    "predict", "bbox", "keys",      "sort",    "tree", "moments",
    "groups",  "walk", "integrate", "domains", "let"};

inline std::string_view stageName(Stage s) { return kStageNames[static_cast<int>(s)]; }

struct InteractionCounts {
  /// Cell–particle interactions: per target, the accepted cells of its group (M2P, or expanded)
  std::uint64_t cell = 0;
  std::uint64_t particle = 0;  ///< particle–particle (P2P) interactions
  std::uint64_t targets = 0;   ///< particles that received a force
  /// Groups walked (each walks its targets together; the walks of other trees' shares of the
  /// same groups not counted again). Few of them leave the GPU's warps idle.
  std::uint64_t groups = 0;
  /// Of `cell`, those evaluated through their group's expansion (M2L once per group, L2P per
  /// target; SimParams::expansionRatio) rather than one by one.
  std::uint64_t expanded = 0;

  InteractionCounts& operator+=(const InteractionCounts& o) {
    cell += o.cell;
    particle += o.particle;
    targets += o.targets;
    groups += o.groups;
    expanded += o.expanded;
    return *this;
  }
  InteractionCounts& operator-=(const InteractionCounts& o) {
    cell -= o.cell;
    particle -= o.particle;
    targets -= o.targets;
    groups -= o.groups;
    expanded -= o.expanded;
    return *this;
  }
};

struct StepProfile {
  std::array<double, static_cast<int>(Stage::Count)> ms{};  ///< milliseconds per stage
  InteractionCounts interactions;
  /// The device's time from the first timed stage's start to the last one's end [ms], summed over
  /// the times the stages were read (a single-GPU substep's once): with the stages' sum it shows
  /// what the device did between stages, and with the host's wall time how long it had nothing
  /// queued. 0 where the stages are timed on the host (the CPU backend); a distributed run's is
  /// the slowest rank's, its stages each rank's slowest and partly timed on the host, so there
  /// the two need not compare.
  double spanMs = 0.0;

  double& operator[](Stage s) { return ms[static_cast<int>(s)]; }
  double operator[](Stage s) const { return ms[static_cast<int>(s)]; }
  /// Adds another profile's stage times and interactions.
  StepProfile& operator+=(const StepProfile& o) {
    for (std::size_t s = 0; s < ms.size(); ++s) ms[s] += o.ms[s];
    interactions += o.interactions;
    spanMs += o.spanMs;
    return *this;
  }
  /// What was added since `before` (a running total's interval).
  StepProfile& operator-=(const StepProfile& before) {
    for (std::size_t s = 0; s < ms.size(); ++s) ms[s] -= before.ms[s];
    interactions -= before.interactions;
    spanMs -= before.spanMs;
    return *this;
  }
  /// What a rebuild costs beyond a refit: bbox, keys, sort and topology [ms].
  double rebuildMs() const {
    return (*this)[Stage::BoundingBox] + (*this)[Stage::Keys] + (*this)[Stage::Sort] +
           (*this)[Stage::Tree];
  }
  /// The stages' sum [ms] (spanMs not included).
  double total() const {
    double t = 0.0;
    for (double v : ms) t += v;
    return t;
  }
};

}  // namespace bhviz::sim
