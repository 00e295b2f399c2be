#pragma once
// One simulation: a backend, its clock and the parameters. The sequence of a substep is here,
// once, for every backend:
//   open kicks + new bins (active) → drift (all) → tree + forces (active) → close kicks (active)
// The tree is rebuilt or refitted as SimParams::rebuildInterval says: at a fixed interval, or
// (auto) when the RebuildTuner finds that the refitted tree's aging costs more than a rebuild;
// auto also sizes the groups of each kind of evaluation by their measured walk (GroupTuner).

#include <array>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/backend.h"
#include "sim/group_tuner.h"
#include "sim/rebuild_tuner.h"

namespace bhviz::sim {

/// Some particles' state became NaN or infinite: the run stops and says which.
struct NonFiniteState : std::runtime_error {
  NonFiniteState(const std::string& what, std::vector<std::uint32_t> ids)
      : std::runtime_error(what), ids(std::move(ids)) {}
  std::vector<std::uint32_t> ids;
};

/// A moment of a simulation to go back to (Simulation::keep): its clock, parameters and the
/// backend's state, at a substep's end.
struct KeptState {
  Clock clock;
  SimParams params;
  std::uint64_t substeps = 0;
  std::uint32_t generation = 0;   ///< of the parameters (Simulation's log of choices)
  bool potentialsCurrent = true;  ///< Simulation::potentialsCurrent then
  std::unique_ptr<BackendState> backend;

  double time() const { return clock.time(); }
  std::size_t bytes() const { return backend != nullptr ? backend->bytes() : 0; }
  bool onDevice() const { return backend != nullptr && backend->onDevice(); }
};

class Simulation {
 public:
  /// Validates the parameters and the particles, uploads them and evaluates every force. The
  /// clock starts at `startTime` (a snapshot's time; 0 for a new scenario) [time]. Throws
  /// InvalidParameter when that time is so far from 0 that a double cannot resolve the smallest
  /// step (dtMax, or dtMax / 2^maxBinDepth for block steps) to 0.1 % of a step.
  Simulation(std::unique_ptr<Backend> backend, const Particles& initial, const SimParams& params,
             double startTime = 0.0);

  /// New parameters (validated, and their smallest step against the current time as in the
  /// constructor). Live ones act at the next substep; the clock's (stepping, dtMax,
  /// maxBinDepth) at the next point where every particle is synchronised.
  void setParams(const SimParams& params);
  const SimParams& params() const { return m_params; }

  /// One force evaluation on the particles active at the next tick. Throws NonFiniteState.
  void substep();
  /// substep() in two halves, for a viewer whose CPU prepares its next frame while the device
  /// computes this substep (the window): beginSubstep() queues the substep and returns (the CUDA
  /// backend still waits where it must: a rebuild's level table, and the deepest bin where the
  /// last close kicks could not forecast it); endSubstep() waits for it, gives its measurements
  /// to the tuners and the profile, logs its choices and checks it (throws NonFiniteState). In
  /// between the getters show the clock the substep reaches and the last substep's profile,
  /// particles() and diagnostics() read the device in stream order (the substep's results, not
  /// yet checked), backend() gives its arrays; setParams, substep, advance, recomputeForces,
  /// keep, restore and computePotentialsNow throw std::logic_error. endSubstep() with nothing
  /// pending does nothing. While one is pending, lastRebuilt() and lastGroupSize() describe it;
  /// substeps(), lastProfile(), lastTreeChoice() and rebuildState() the substep before.
  void beginSubstep();
  void endSubstep();
  bool substepPending() const { return m_pending.has_value(); }
  /// Substeps up to the end of the current dtMax interval (or `steps` whole intervals):
  /// afterwards every particle is synchronised.
  void advance(int steps = 1);
  /// A fresh force evaluation of every particle (only when synchronised).
  void recomputeForces();

  /// The state now (between two substeps), in the backend's device memory when it fits below
  /// `deviceBytesFree` there, else on the host. The next force evaluation rebuilds the tree, as
  /// the first after a restore to this state must (the tree is not kept).
  std::unique_ptr<KeptState> keep(std::size_t deviceBytesFree = 0) const;
  /// Back to a kept state of this simulation, parameters included: stepping on gives the same
  /// bits as it did from there (the same backend; tests/test_rewind.cpp), the tree rebuilt and
  /// refitted at the same substeps as the first time (they are logged) until the parameters
  /// change.
  void restore(const KeptState& state);

  /// Potentials on demand (off: every evaluation at which every step ends computes them, as
  /// sim/backend.h's evaluatesPotential says). On: such an evaluation computes them only when
  /// requestPotential asked for it, and the others save the potential's share of the walk. For
  /// a viewer that samples the energy every few seconds (the window): its other frames' steps
  /// need no potential. Stays off on a backend without BackendTraits::potentialOnDemand.
  void setPotentialOnDemand(bool onDemand) {
    m_potentialOnDemand = onDemand && m_backend->traits().potentialOnDemand;
  }
  bool potentialOnDemand() const { return m_potentialOnDemand; }
  /// The next evaluation at which every step ends computes the potentials (on demand).
  void requestPotential() { m_potentialRequested = true; }
  /// Whether the stored potentials are those of the last time every step ended (always, unless
  /// on demand): diagnostics() and particles() hold them only then.
  bool potentialsCurrent() const { return m_potentialsCurrent; }
  /// Makes the potentials current without a step (true at once where they are current): at a
  /// synchronised state the last evaluation (every particle's) walks again for them
  /// (Backend::recomputePotentials), which gives the bits that step end would have had, had it
  /// been asked (under the mutual near field, to fp32 rounding). False, with nothing
  /// changed, in mid-step or where the backend cannot (after a restore, on the distributed
  /// backend): then requestPotential and the next step end are the way.
  bool computePotentialsNow();

  double time() const { return m_clock.time(); }
  const Clock& clock() const { return m_clock; }
  bool synchronized() const { return m_clock.synchronized(); }
  /// The backend's diagnostics; the potential energy (and the total) NaN where the potentials
  /// are not current (potentialsCurrent).
  Diagnostics diagnostics() const;
  /// The state; its potentials (accPot.w) are those of an earlier step end where
  /// potentialsCurrent() is false.
  Particles particles() const;
  const Backend& backend() const { return *m_backend; }

  /// Stage timings and interaction counts of the last substep, and summed over every substep
  /// (not the initial evaluation of the constructor, nor recomputeForces).
  const StepProfile& lastProfile() const { return m_last; }
  const StepProfile& totalProfile() const { return m_total; }
  std::uint64_t substeps() const { return m_substeps; }
  /// Force evaluations that rebuilt the tree (the constructor's first included); the others
  /// refitted it.
  std::uint64_t rebuilds() const { return m_tuner.state().rebuilds; }
  /// Whether the last force evaluation rebuilt the tree.
  bool lastRebuilt() const { return m_sinceRebuild == 0; }
  /// What the last force evaluation did with the tree.
  TreeChoice lastTreeChoice() const { return m_tuner.state().last; }
  /// The group size of the last force evaluation (SimParams::nGroup, or a tuned smaller one).
  int lastGroupSize() const { return m_lastGroupSize; }
  /// The rebuild tuner's fit and choice (it records under every interval, tuned or fixed).
  const RebuildTunerState& rebuildState() const { return m_tuner.state(); }

 private:
  void applyClockSettings();
  /// Particles a NonFiniteState names at most.
  static constexpr std::size_t kNamedNonFinite = 10;
  /// Throws NonFiniteState naming `ids` (the backend's nonFiniteIds), if any.
  void throwIfNonFinite(const std::vector<std::uint32_t>& ids) const;
  /// Throws std::logic_error naming `what` while a substep is pending (beginSubstep).
  void requireNoPendingSubstep(const char* what) const;
  /// The choices of one force evaluation: logged per substep, so a replay makes them again.
  struct Evaluation {
    TreeChoice tree = TreeChoice::Rebuild;  ///< what to do with the tree
    /// GroupTuner's candidate: N_group / 2^groups (GroupTuner::groupSize)
    std::uint8_t groups = 0;
    /// The parameters it ran under (Simulation's count of changes): a replay follows the log
    /// only while this is the kept state's.
    std::uint32_t generation = 0;
  };
  /// The choices of the evaluation at the current tick, substeps `period` ticks apart.
  Evaluation chooseEvaluation(std::uint64_t period) const;
  /// Where the tuner asks for a refit to measure the aging and the evaluation's groups are many:
  /// a sample of them walked on the refitted tree instead (Backend::probeRefit, m_sampledProbe),
  /// and true: the caller rebuilds. False where it did nothing.
  bool probesBySample(const SimParams& p, ForceTargets targets, bool oldAccValid, int groups);
  /// Whether this evaluation's walk stays out of the tuners: a step end that computes the
  /// potentials asked for on demand (its walk 5-11 % longer would mislead them).
  bool walkUntimed() const;
  /// The evaluations ahead for the rebuild tuner: `period` ticks apart from the current one.
  RebuildTuner::Outlook outlook(std::uint64_t period) const;
  /// The age of the tree where an evaluation of kind `bin` (its shallowest active bin) walks it
  /// [time]: since the last rebuild, or since the last rebuild around the targets where that came
  /// after and was for this bin or a shallower one.
  double treeAge(int bin) const;
  /// The rebuild tuner's kind for an evaluation kind and group candidate.
  static int tunerKind(int kind, int groups);
  /// Rebuilds, rebuilds around the targets or refits, and evaluates the forces of `targets`;
  /// what it did (a backend that cannot refit rebuilds). A backend may only have queued the
  /// work: recordEvaluation reads its profile afterwards.
  TreeChoice computeForces(Evaluation e, ForceTargets targets, bool oldAccValid);
  /// Tells the tuners of the evaluation just made (its times too when `timed`), from the
  /// backend's profile.
  void recordEvaluation(Evaluation e, TreeChoice made, bool timed);

  std::unique_ptr<Backend> m_backend;
  SimParams m_params;
  Clock m_clock;
  StepProfile m_last;
  StepProfile m_total;
  std::uint64_t m_substeps = 0;
  // A substep begun and not yet ended: its choices, what it did with the tree, and whether its
  // walk times go to the tuners (recordEvaluation).
  struct PendingSubstep {
    Evaluation e;
    TreeChoice made = TreeChoice::Rebuild;
    bool timed = true;
  };
  std::optional<PendingSubstep> m_pending;

  // The tree's rebuilds.
  RebuildTuner m_tuner;
  double m_treeTime = 0.0;  // when the tree was last rebuilt [time]
  // When it was last rebuilt around the targets [time], and the evaluation kind (shallowest
  // active bin) it did that for: an evaluation of that bin or a deeper one, whose targets lie in
  // the cover, walks a tree that young (treeAge), until an evaluation of a shallower bin refits
  // (its kicks may bring particles from outside the cover into the deeper bins).
  double m_aroundTime = -std::numeric_limits<double>::infinity();
  int m_aroundBin = 0;
  int m_sinceRebuild = 0;              // force evaluations since then
  mutable bool m_rebuildNext = false;  // keep() asks the next evaluation to rebuild
  // Targets of the last evaluation at a tick whose shallowest active bin is b (-1: none yet):
  // the next one at such a tick has about as many, which the tuner weighs against a rebuild.
  std::array<double, kMaxBinDepthLimit + 1> m_targetsByBin;
  // And the groups it walked (-1: none yet): a probe's sample is a share of them.
  std::array<double, kMaxBinDepthLimit + 1> m_groupsByBin;
  // And what its rebuild around the targets cost beyond a refit, smoothed [ms] (-1: none yet),
  // and the rebuilds since it was measured: one measured kAroundRemeasure rebuilds ago is
  // forgotten, so that the tuner tries it again (a cover changes as the particles move).
  std::array<double, kMaxBinDepthLimit + 1> m_aroundMsByBin;
  std::array<int, kMaxBinDepthLimit + 1> m_aroundRebuildsByBin{};
  static constexpr int kAroundRemeasure = 32;
  // The first rebuild around the targets runs cold (a GPU loads its kernels at their first
  // launch: 1.7 ms against 0.9 after, M31 at 2^23 on an H200): its cost is not kept.
  bool m_aroundWarm = false;
  // A probe of the aging made without a refit's walk (Backend::probeRefit) and its evaluation
  // rebuilt: the tree's age then, for recordEvaluation to set the sample's interactions a target
  // (Backend::refitProbe) against the fresh walk's. Made where the evaluation's groups are many
  // (a sample of about kProbeGroups of them, one in kProbeMinEvery at least) and its fresh walk
  // costs more than kProbeSampleAbove rebuilds; elsewhere the probe refits.
  std::optional<double> m_sampledProbe;
  static constexpr std::uint32_t kProbeGroups = 256;
  static constexpr std::uint32_t kProbeMinEvery = 4;
  static constexpr double kProbeSampleAbove = 2.0;
  GroupTuner m_groupTuner;
  int m_lastGroupSize = 0;
  std::vector<Evaluation> m_choices;  // per substep (for replays)
  std::uint64_t m_replayUntil = 0;    // after a restore: substeps before this follow the log
  std::uint32_t m_generation = 0;     // the parameters' (a new one at every change)
  std::uint32_t m_generations = 0;    // generations handed out

  // The potentials (setPotentialOnDemand).
  bool m_potentialOnDemand = false;
  bool m_potentialRequested = false;
  bool m_potentialsCurrent = true;
};

}  // namespace bhviz::sim
