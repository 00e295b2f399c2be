#pragma once
// The CUDA backend's class, declared for its two files: cuda_backend.cu (a process's step: the
// particles, kicks, force evaluations, exports) and cuda_backend_dist.cu (a rank's ends of a
// distributed run: the evaluation in parts, its LETs and the particle exchange). Internal to
// sim/cuda; the rest of the program makes it through makeCudaBackend (cuda_backend.h).
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "sim/common/conserved.h"
#include "sim/common/local_expansion.h"
#include "sim/common/timestep.h"
#include "sim/cuda/cuda_backend.h"
#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/cuda_stages.h"
#include "sim/cuda/device_exchange.h"
#include "sim/cuda/device_lets.h"
#include "sim/cuda/domains.h"
#include "sim/cuda/draw.h"
#include "sim/cuda/let.h"
#include "sim/cuda/local_rebuild.h"
#include "sim/cuda/stage_events.cuh"
#include "sim/cuda/substep_kicks.h"
#include "sim/cuda/tree_statistics.h"
#include "sim/cuda/walk.h"
#include "sim/cuda/walk_mutual.h"

namespace bhviz::sim::cuda::detail {

/// Trees of at least this many cells cut their LETs on the device (essentialTree).
inline constexpr std::size_t kDeviceLetCells = std::size_t(1) << 18;

/// An N that one window frame steps at an interactive rate on a current GPU (~10 ms on an H200).
inline constexpr std::size_t kInteractiveParticles = 1'000'000;

class CudaBackend final : public Backend,
                          public DeviceAccess,
                          private ForceParts,
                          private LetEnds,
                          private ExchangeEnds {
 public:
  BackendTraits traits() const override;

  /// A kept state in this device's memory: every particle array, in the backend's order.
  class DeviceState final : public BackendState {
   public:
    std::size_t bytes() const override { return p.n * kParticleBytes; }
    bool onDevice() const override { return true; }
    std::size_t size() const override { return p.n; }
    DeviceParticles p;
  };
  static constexpr std::size_t kKeepHeadroom = std::size_t(1) << 30;  // 1 GiB left free

  static void copyParticles(const DeviceParticles& from, DeviceParticles& to, Stream s);

  void upload(const Particles& h) override;
  void download(Particles& h) const override { downloadParticles(m_p, h); }
  std::size_t deviceBytesPeak() const override { return cuda::deviceBytesPeak(); }
  void downloadSample(Particles& h, std::uint32_t stride) const override;
  std::unique_ptr<BackendState> keepState(std::size_t deviceBytesFree) const override;
  void restoreState(const BackendState& state) override;
  std::size_t size() const override { return m_p.n; }

  int openKicks(const Clock& clock, const SimParams& p) override;
  void drift(float dt) override;

  void computeForces(const Clock& clock, const SimParams& p, ForceTargets targets,
                     bool oldAccValid) override;

  bool refitForces(const Clock& clock, const SimParams& p, ForceTargets targets,
                   bool oldAccValid) override;

  bool rebuildAroundTargets(const Clock& clock, const SimParams& p, ForceTargets targets,
                            bool oldAccValid) override;

  bool probeRefit(const Clock& clock, const SimParams& p, ForceTargets targets, bool oldAccValid,
                  std::uint32_t sampleEvery) override;
  RefitProbe refitProbe() override;

  /// refitForces, and with `aroundTargets` rebuildAroundTargets: the last tree's particles (in
  /// its order, or sorted again within the cells around the targets), moments, groups and walk.
  bool evaluateOnLastTree(const Clock& clock, const SimParams& p, ForceTargets targets,
                          bool oldAccValid, bool aroundTargets);

  bool recomputePotentials() override;

  ForceParts* forceParts() override { return this; }

  void closeKicks(const Clock& clock) override;

  Diagnostics diagnostics(const Clock& clock) const override;

  std::vector<std::uint32_t> nonFiniteIds(std::size_t max) const override;

  const StepProfile& profile() const override;
  void resetProfile() override;

  // ---- Exports ------------------------------------------------------------------------------

  TreeCensus treeCensus() const override;
  TreeStatistics treeStatistics() const override;
  std::size_t boxCount(const BoxQuery& q) const override { return drawBoxCount(drawSource(), q); }
  std::vector<DrawBox> boxes(const BoxQuery& q) const override;
  const DeviceAccess* deviceAccess() const override { return this; }
  sim::DeviceArrays particles() const override;
  void writeBoxes(const BoxQuery& q, DrawBox* out) const override;
  std::unique_ptr<Backend> makeScratch(std::size_t n) const override { return makeCudaBackend(n); }
  ReferenceSum referenceSum() const override { return directSumDevice; }

  DrawSource drawSource() const;

 private:
  // ---- ForceParts: the force evaluation in parts, for a rank of a distributed run --------------

  void build(const Clock& clock, const SimParams& p, ForceTargets targets, bool oldAccValid,
             const KeyFrame* frame, const OrbCuts* domains) override;

  /// The build stages of computeForces, in the given frame (and among the given domains) when
  /// there is one.
  void buildStages(const Clock& clock, const SimParams& p, ForceTargets targets, bool oldAccValid,
                   const KeyFrame* frame, const OrbCuts* domains);

  /// The settings of a force evaluation; false when there are no particles.
  bool prepare(const Clock& clock, const SimParams& p, ForceTargets targets, bool oldAccValid);

  /// The stages a rebuild and a refit share: moments of the tree as it is, the targets' groups
  /// (ordered by what the last walks measured), timed in `events`; with `countWork` the walk to
  /// come counts its work afresh (a probe's walk does not count it).
  void momentsAndGroups(const SimParams& p, StageEvents& events, bool countWork);

  /// Keeps what the walks since the last build measured (m_work, in the current order) as each
  /// particle's last known work, which orders the next walk's groups (walk_schedule.cu).
  void rememberLastWork();
  /// The particles changed (upload, restore, exchange): no work of theirs is known.
  void forgetWork();

  Box bounds() const override;

  TargetRegion targetRegion() const override;

  /// A large tree is cut on the device, where only the LETs come to the host; a small one from
  /// one host copy per build that serves every receiver (each device cut costs ~3 waits per
  /// level: with several ranks on one GPU at 1 M particles the copy was 2-3x faster, at 4-16 M
  /// the device cut 1.5-2.5x; docs/BENCHMARKS.md).
  LetTree essentialTree(const TargetRegion& region) const override;

  void walkLocal() override;
  void beginWalkLocal() override;
  /// The local tree as the walk's sources.
  WalkSources localSources() const;
  void endWalkLocal() override;

  void walkImported(const LetTree& let) override;

  std::uint64_t workSum() const override;

  DeviceLets* deviceLets() override { return &m_lets; }

  // LetEnds: a large tree is cut on the device straight into the send bytes; a small one on the
  // host (essentialTree's threshold), its bytes uploaded.
  LetSize cutInto(const TargetRegion& region, DeviceBytes& out) override;
  void walkLet(const LetView& let) override;

  std::vector<std::uint32_t> work() const override;

  std::unique_ptr<OrbParticles> orbParticles(bool unitWeights) const override;

  void strays(const OrbCuts& cuts, int rank, std::vector<std::uint32_t>& index,
              std::vector<int>& domain) const override;

  Particles gather(const std::vector<std::uint32_t>& indices) const override;

  void exchange(const std::vector<std::uint32_t>& leaving, const Particles& arriving) override;

  DeviceExchange* deviceExchange() override { return &m_movers; }

  // ExchangeEnds: the leavers packed and the arrivals placed in device memory.
  std::vector<int> packInto(const OrbCuts& cuts, int rank, DeviceBuffer<PackedParticle>& out,
                            std::vector<std::uint32_t>& leaving) override;
  void place(const std::vector<std::uint32_t>& leaving, const PackedParticle* arriving,
             std::size_t count) override;

  /// The measured work stays with the particles that stay (the next walk's schedule reads it: a
  /// few strays moving on must not cost the rest their order); arrivals have none.
  CarriedArrays carriedCounts();
  /// After an exchange: no tree, groups or work of these particles yet, and arrivals no kernel
  /// of this rank watched.
  void particlesExchanged();

  /// One walk of the built groups over `sources`: written, or added (an imported tree).
  void walk(const WalkSources& sources, bool add);
  /// The walk's launch, on the stream (no wait, but for the mutual near field's one: the local
  /// tree's walk with it waits for its lists' length, walk_mutual.h).
  void launchOneWalk(const WalkSources& sources, bool add);
  /// Queues the copy of the walk's counters to the host, read when the step settles.
  void readCountersLater(bool add);

  /// Waits for the stream and reads what its launches left for the host since the last settle:
  /// the stage times and the walks' counts into the profile, the groups walked. No wait where
  /// the caller waited already (the non-finite check at the end of a substep).
  void settle() const;

  Stream m_stream = nullptr;
  /// Of the device current when the backend was made, which runs all its work.
  const DeviceProperties m_device = queryDeviceProperties();
  DeviceParticles m_p;
  mutable BuildWorkspace m_ws;  // bounds() reduces into it
  DeviceTree m_tree;
  DeviceGroups m_groups;
  DeviceBuffer<WalkCounters> m_counters;
  // probeRefit's counters, their way to the host and its time, read by refitProbe.
  DeviceBuffer<WalkCounters> m_probeCounters;
  CounterReadback m_probeReadback;
  StageEvents m_probeEvents;
  mutable CounterReadback m_readback;          // the walks' counters on their way to the host
  mutable std::uint32_t m_groupCount = 0;      // groups of the last walk (from the counters)
  DeviceBuffer<OrbCut> m_domainCuts;           // the domains of the last build (ForceParts::build)
  OrbCutsView m_domains;                       // ... as the moments read them (levels 0: none)
  mutable DeviceBuffer<ConservedSums> m_sums;  // diagnostics() scratch
  mutable DeviceBuffer<unsigned long long> m_histogram;
  mutable SubstepKicks m_kicks;  // the kicks, the drift and their watches (substep_kicks.h)
  mutable DeviceBuffer<DrawBox> m_drawScratch;                // boxes() on their way to the host
  mutable DeviceBuffer<TreeStatisticsSums> m_statisticsSums;  // treeStatistics() scratch
  mutable StageEvents m_events;                               // read by settle(), as m_profile
  mutable StepProfile m_profile;

  // The parts of the last build (ForceParts).
  MacSetup m_mac;
  WalkSettings m_walk;
  bool m_mutual = false;          // the local tree's near field pair by pair (P2pMode::Mutual)
  MutualWorkspace m_mutualSpace;  // its device memory
  /// The last evaluation was one process's, at the particles' current positions: its tree,
  /// groups and settings can walk again (recomputePotentials).
  bool m_walkCurrent = false;
  ActiveRule m_rule{};
  bool m_distributed = false;          // built through ForceParts: work() and the ORB read it
  DeviceBuffer<std::uint32_t> m_work;  // per particle, interactions since the build
  bool m_workAligned = false;          // m_work is of the particles in their current order
  // Per particle, its work in the last evaluation that measured it (the walk's schedule).
  DeviceBuffer<std::uint32_t> m_lastWork, m_lastWorkScratch;
  CoverWorkspace m_cover;              // rebuildAroundTargets' scratch
  bool m_lastWorkValid = false;        // m_lastWork holds n entries in the current order
  int m_leafSize = 0;                  // N_leaf of the last build
  bool m_statisticsValid = false;      // a tree of these particles was built
  bool m_walkPending = false;          // beginWalkLocal launched, endWalkLocal not yet
  mutable TreeShape m_treeShape;       // what m_tree was rebuilt with (none after upload)
  ImportedLet m_imported;              // an imported LET on the device
  mutable ExchangeScratch m_exchange;  // strays(), gather() and exchange()
  mutable SampleScratch m_sample;      // downloadSample's (the camera's, a large run's view)
  mutable LetScratch m_letScratch;     // essentialTree()'s device memory
  mutable Tree m_hostTree;             // a small build's tree on the host, for the LETs
  mutable std::vector<Vec4> m_hostPosMass;
  mutable bool m_hostTreeValid = false;
  std::vector<std::byte> m_letHostBytes;                 // a small tree's LET, cut on the host
  mutable DeviceBytes m_letCut;                          // essentialTree()'s device cut
  mutable DeviceBuffer<unsigned long long> m_workTotal;  // workSum()'s
  GpuLets m_lets{*this, m_stream};                       // the LETs as device bytes
  GpuExchange m_movers{*this, m_stream};                 // the particle exchange, on the device
};

}  // namespace bhviz::sim::cuda::detail
