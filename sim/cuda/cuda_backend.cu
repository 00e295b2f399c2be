// The CUDA backend: the particles stay on the device; each stage is a CUDA twin of the CPU
// stage with the same output layout. A substep launches its stages without waiting for them,
// except where the host needs a number before it can launch the next: a rebuild's level table
// (it tells whether the tree's buffers sufficed, and how many cells there are), and the deepest
// occupied bin (block steps only: it sets the drift) where the last close kicks could not
// forecast it (the first substep, or after anything that changed the bins or the forces, or
// their parameters). The stage times, the walks' counters and the forecast are read at the
// substep's end (settle), where the non-finite check waits anyway.
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

namespace bhviz::sim::cuda {

namespace {

/// Trees of at least this many cells cut their LETs on the device (essentialTree).
constexpr std::size_t kDeviceLetCells = std::size_t(1) << 18;

/// An N that one window frame steps at an interactive rate on a current GPU (~10 ms on an H200).
constexpr std::size_t kInteractiveParticles = 1'000'000;

class CudaBackend final : public Backend,
                          public DeviceAccess,
                          private ForceParts,
                          private LetEnds,
                          private ExchangeEnds {
 public:
  BackendTraits traits() const override {
    BackendTraits t{"cuda", BackendLimits{kMaxLeafSize, kMaxWalkGroup, true}, true,
                    kInteractiveParticles};
    t.rebuildsAroundTargets = true;
    return t;
  }

  /// A kept state in this device's memory: every particle array, in the backend's order.
  class DeviceState final : public BackendState {
   public:
    std::size_t bytes() const override { return p.n * kParticleBytes; }
    bool onDevice() const override { return true; }
    std::size_t size() const override { return p.n; }
    DeviceParticles p;
  };
  static constexpr std::size_t kKeepHeadroom = std::size_t(1) << 30;  // 1 GiB left free

  static void copyParticles(const DeviceParticles& from, DeviceParticles& to, Stream s) {
    to.resize(from.n);
    if (from.n == 0) return;
    copyOnDevice(to.posMass.data(), from.posMass.data(), from.n * sizeof(Vec4), s);
    copyOnDevice(to.vel.data(), from.vel.data(), from.n * sizeof(Vec4), s);
    copyOnDevice(to.accPot.data(), from.accPot.data(), from.n * sizeof(Vec4), s);
    copyOnDevice(to.id.data(), from.id.data(), from.n * sizeof(std::uint32_t), s);
    copyOnDevice(to.tag.data(), from.tag.data(), from.n, s);
    copyOnDevice(to.bin.data(), from.bin.data(), from.n, s);
  }

  void upload(const Particles& h) override {
    uploadParticles(h, m_p);
    m_kicks.forget();
    m_statisticsValid = false;  // the tree and the work are of the particles before
    forgetWork();
    m_treeShape = {};
    m_walkCurrent = false;
    m_ws.reserve(h.size());
  }
  void download(Particles& h) const override { downloadParticles(m_p, h); }
  std::size_t deviceBytesPeak() const override { return cuda::deviceBytesPeak(); }
  void downloadSample(Particles& h, std::uint32_t stride) const override {
    sampleById(m_p, stride, m_sample, m_stream, h);
  }
  std::unique_ptr<BackendState> keepState(std::size_t deviceBytesFree) const override {
    const std::size_t bytes = m_p.n * kParticleBytes;
    std::size_t freeBytes = 0, totalBytes = 0;
    BHVIZ_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    // On the device only with room to spare: the step's own buffers may still grow.
    if (bytes == 0 || bytes > deviceBytesFree ||
        bytes + kKeepHeadroom + totalBytes / 10 > freeBytes) {
      return Backend::keepState(0);
    }
    auto state = std::make_unique<DeviceState>();
    copyParticles(m_p, state->p, m_stream);
    synchronize(m_stream);
    return state;
  }
  void restoreState(const BackendState& state) override {
    m_kicks.forget();
    const auto* device = dynamic_cast<const DeviceState*>(&state);
    if (device == nullptr) {
      Backend::restoreState(state);
    } else {
      copyParticles(device->p, m_p, m_stream);
      synchronize(m_stream);
    }
    m_statisticsValid = false;  // as after upload(): the tree is of the particles before
    forgetWork();
    m_treeShape = {};
    m_walkCurrent = false;
    m_ws.reserve(m_p.n);
  }
  std::size_t size() const override { return m_p.n; }

  int openKicks(const Clock& clock, const SimParams& p) override {
    return m_kicks.openKicks(m_p, clock, p, m_events, m_stream);
  }
  void drift(float dt) override {
    m_kicks.drift(m_p, dt, m_events, m_stream);
    m_walkCurrent = false;
  }

  void computeForces(const Clock& clock, const SimParams& p, ForceTargets targets,
                     bool oldAccValid) override {
    buildStages(clock, p, targets, oldAccValid, nullptr, nullptr);
    if (m_p.n > 0) {
      walk(localSources(), false);
      m_walkCurrent = true;
    }
  }

  bool refitForces(const Clock& clock, const SimParams& p, ForceTargets targets,
                   bool oldAccValid) override {
    return evaluateOnLastTree(clock, p, targets, oldAccValid, false);
  }

  bool rebuildAroundTargets(const Clock& clock, const SimParams& p, ForceTargets targets,
                            bool oldAccValid) override {
    return evaluateOnLastTree(clock, p, targets, oldAccValid, true);
  }

  /// refitForces, and with `aroundTargets` rebuildAroundTargets: the last tree's particles (in
  /// its order, or sorted again within the cells around the targets), moments, groups and walk.
  bool evaluateOnLastTree(const Clock& clock, const SimParams& p, ForceTargets targets,
                          bool oldAccValid, bool aroundTargets) {
    if (!m_treeShape.fits(p, m_p.n)) {
      computeForces(clock, p, targets, oldAccValid);
      return false;
    }
    prepare(clock, p, targets, oldAccValid);
    // What the last walks measured, in the current order: a refit keeps it, the cover's sort
    // carries it along with its particles.
    rememberLastWork();
    if (aroundTargets) {
      m_cover.reserve(m_p.n);  // untimed: the tuner weighs what the cover costs, not its buffers
      const Stream s = m_stream;
      timed(m_events, Stage::Sort, s, [&] {
        launchCoverAndRekey(m_p, m_tree, m_rule, kAroundTargetsShare, p.curve, m_ws, m_cover,
                            m_lastWorkValid ? m_lastWork.data() : nullptr, s);
      });
      timed(m_events, Stage::Tree, s, [&] { launchTree(m_ws, m_p.n, p.nLeaf, m_tree, s); });
    }
    momentsAndGroups(p);
    walkLocal();
    m_walkCurrent = true;
    return true;
  }

  bool recomputePotentials() override {
    if (!m_walkCurrent || m_p.n == 0) return false;
    WalkSettings s = m_walk;
    s.potential = true;
    m_counters.reserve(1);
    // Untimed and uncounted: the evaluation's profile stays as it was. Its counters are read at
    // once, for their stack-overflow check.
    WalkOutput out;
    out.potentialOnly = true;
    launchWalk(localSources(), m_groups, m_p, s, out, m_counters.data(), m_device, m_stream);
    synchronize(m_stream);
    (void)downloadCounters(m_counters.data());
    return true;
  }

  ForceParts* forceParts() override { return this; }

  void closeKicks(const Clock& clock) override {
    m_kicks.closeKicks(m_p, clock, m_events, m_stream);
  }

  Diagnostics diagnostics(const Clock& clock) const override {
    return computeDiagnostics(m_p, clock, m_sums, m_histogram, m_stream);
  }

  std::vector<std::uint32_t> nonFiniteIds(std::size_t max) const override {
    return m_kicks.nonFiniteIds(m_p, max, m_stream);
  }

  const StepProfile& profile() const override {
    settle();
    return m_profile;
  }
  void resetProfile() override {
    settle();  // what is still on its way belongs to the profile reset
    m_profile = {};
  }

  // ---- Exports ------------------------------------------------------------------------------

  TreeCensus treeCensus() const override {
    settle();  // the groups come with the walk's counters
    const auto& begin = m_tree.levelBegin;
    if (begin.empty()) return {};
    return {begin.back(), static_cast<int>(begin.size()) - 1, m_groupCount};
  }
  TreeStatistics treeStatistics() const override {
    if (!m_statisticsValid) return {};
    settle();
    return computeTreeStatistics(
        TreeStatisticsSource{&m_tree, &m_p, m_work.data(), m_rule, m_leafSize, m_groupCount},
        m_statisticsSums, m_stream);
  }
  std::size_t boxCount(const BoxQuery& q) const override { return drawBoxCount(drawSource(), q); }
  std::vector<DrawBox> boxes(const BoxQuery& q) const override {
    const std::size_t n = boxCount(q);
    std::vector<DrawBox> out(n);
    if (n == 0) return out;
    m_drawScratch.reserve(n);
    launchDrawBoxes(drawSource(), q, m_drawScratch.data(), m_stream);
    BHVIZ_CUDA_CHECK(cudaStreamSynchronize(m_stream));
    copyToHost(out.data(), m_drawScratch.data(), n * sizeof(DrawBox));
    return out;
  }
  const DeviceAccess* deviceAccess() const override { return this; }
  sim::DeviceArrays particles() const override {
    return sim::DeviceArrays{m_p.posMass.data(), m_p.vel.data(), m_p.tag.data(), m_p.bin.data(),
                             m_p.id.data(),      m_p.n,          m_stream};
  }
  void writeBoxes(const BoxQuery& q, DrawBox* out) const override {
    if (boxCount(q) > 0) launchDrawBoxes(drawSource(), q, out, m_stream);
  }
  std::unique_ptr<Backend> makeScratch(std::size_t n) const override { return makeCudaBackend(n); }
  ReferenceSum referenceSum() const override { return directSumDevice; }

  DrawSource drawSource() const {
    settle();
    DrawSource src;
    src.levelBegin = &m_tree.levelBegin;
    src.frame = m_ws.frame.data();
    src.first = m_tree.first.data();
    src.level = m_tree.level.data();
    src.posMass = m_p.posMass.data();
    src.groupBox = m_groups.box.data();
    src.groups = m_groups.capacity == 0 ? 0 : m_groupCount;  // read back with the walk's counters
    return src;
  }

 private:
  // ---- ForceParts: the force evaluation in parts, for a rank of a distributed run --------------

  void build(const Clock& clock, const SimParams& p, ForceTargets targets, bool oldAccValid,
             const KeyFrame* frame, const OrbCuts* domains) override {
    m_distributed = true;  // from now on the walks count each particle's work
    buildStages(clock, p, targets, oldAccValid, frame, domains);
  }

  /// The build stages of computeForces, in the given frame (and among the given domains) when
  /// there is one.
  void buildStages(const Clock& clock, const SimParams& p, ForceTargets targets, bool oldAccValid,
                   const KeyFrame* frame, const OrbCuts* domains) {
    m_treeShape = {};
    m_domains = {};
    m_walkCurrent = false;  // computeForces sets it after its walk; a rank's evaluation does not
    if (!prepare(clock, p, targets, oldAccValid)) return;
    const Stream s = m_stream;
    if (frame != nullptr) {  // every rank's trees in one frame (sim/dist): no bounding box
      m_ws.reserve(m_p.n);
      copyToDevice(m_ws.frame.data(), frame, sizeof(KeyFrame));
      if (domains != nullptr && domains->levels() > 0) {
        m_domainCuts.reserve(domains->cut.size());
        copyToDevice(m_domainCuts.data(), domains->cut.data(),
                     domains->cut.size() * sizeof(OrbCut));
        m_domains = {m_domainCuts.data(), domains->levels(), domains->ranks};
      }
    } else {
      timed(m_events, Stage::BoundingBox, s, [&] { launchBoundingBox(m_p, m_ws, s); });
    }
    timed(m_events, Stage::Keys, s, [&] { launchKeys(m_p, p.curve, m_ws, s); });
    rememberLastWork();  // in the order of the last walks, before the sort changes it
    timed(m_events, Stage::Sort, s, [&] {
      launchSort(m_p, m_ws, s);
      if (m_lastWorkValid) carryWork(m_ws.orderData(), m_p.n, m_lastWork, m_lastWorkScratch, s);
    });
    timed(m_events, Stage::Tree, s, [&] { launchTree(m_ws, m_p.n, p.nLeaf, m_tree, s); });
    // A tree in a given frame is one rank's part of a distributed run's: not refitted alone.
    m_treeShape = {frame == nullptr, p.nLeaf, p.curve, m_p.n};
    momentsAndGroups(p);
  }

  /// The settings of a force evaluation; false when there are no particles.
  bool prepare(const Clock& clock, const SimParams& p, ForceTargets targets, bool oldAccValid) {
    m_kicks.forcesBegin(targets);
    m_mac = macSetup(p, oldAccValid);
    m_hostTreeValid = false;
    m_walk = WalkSettings{m_mac, p.quadrupole, p.softening};
    m_walk.potential = computesPotential(clock, targets);
    m_walk.expansionRatio = p.expansionRatio;
    m_walk.expansionGamma = expansionRule(p, m_mac, oldAccValid).gamma;
    m_mutual = p.p2p == P2pMode::Mutual;
    m_rule = ActiveRule{clock.tick, clock.depth, targets == ForceTargets::All};
    m_leafSize = p.nLeaf;
    m_statisticsValid = m_p.n > 0;
    if (m_p.n > 0) return true;
    // A rank of a distributed run may hold none.
    settle();  // so that no walk's counters read later bring back their groups
    m_tree.levelBegin.clear();
    m_tree.cells = 0;
    m_groupCount = 0;
    return false;
  }

  /// The stages a rebuild and a refit share: moments of the tree as it is, the targets' groups.
  void momentsAndGroups(const SimParams& p) {
    const Stream s = m_stream;
    timed(m_events, Stage::Moments, s,
          [&] { launchMoments(m_tree, m_p, m_ws, m_mac, s, m_domains); });
    timed(m_events, Stage::Groups, s, [&] {
      launchGroups(m_tree, m_p, m_ws, m_rule, p.nGroup, m_groups, m_device, s,
                   m_lastWorkValid ? m_lastWork.data() : nullptr);
    });
    // Every walk counts each target's work (one add per target): the tree statistics show it,
    // a rank's next decomposition weighs by it, and the next walk's schedule expects it.
    m_work.reserve(m_p.n);
    BHVIZ_CUDA_CHECK(cudaMemsetAsync(m_work.data(), 0, m_p.n * sizeof(std::uint32_t), s));
    m_workAligned = true;
  }

  /// Keeps what the walks since the last build measured (m_work, in the current order) as each
  /// particle's last known work, which orders the next walk's groups (walk_schedule.cu).
  void rememberLastWork() {
    if (!m_workAligned || m_p.n == 0) return;
    if (!m_lastWorkValid) {
      m_lastWork.reserve(m_p.n);
      BHVIZ_CUDA_CHECK(
          cudaMemsetAsync(m_lastWork.data(), 0, m_p.n * sizeof(std::uint32_t), m_stream));
      m_lastWorkValid = true;
    }
    rememberWork(m_work.data(), m_lastWork.data(), m_p.n, m_stream);
    m_workAligned = false;
  }
  /// The particles changed (upload, restore, exchange): no work of theirs is known.
  void forgetWork() {
    m_workAligned = false;
    m_lastWorkValid = false;
  }

  Box bounds() const override {
    if (m_p.n == 0) return {};
    // The reduction writes the key frame the tree was built in: no refit of it after this.
    m_treeShape = {};
    launchBoundingBox(m_p, m_ws, m_stream);
    return downloadBox(m_ws);
  }

  TargetRegion targetRegion() const override {
    TargetRegion r;
    if (m_p.n == 0) return r;
    // Reduced on the device: downloading every group took 6-7 ms at 8 M particles a rank.
    const GroupRegion g = groupRegion(m_groups, m_stream);
    r.box = g.box;
    r.accMin = std::min(r.accMin, g.accMin);
    return r;
  }

  /// A large tree is cut on the device, where only the LETs come to the host; a small one from
  /// one host copy per build that serves every receiver (each device cut costs ~3 waits per
  /// level: with several ranks on one GPU at 1 M particles the copy was 2-3x faster, at 4-16 M
  /// the device cut 1.5-2.5x; docs/BENCHMARKS.md).
  LetTree essentialTree(const TargetRegion& region) const override {
    if (m_p.n == 0 || !region.any()) return {};
    if (m_tree.cells >= kDeviceLetCells) {
      return cutEssentialTree(m_tree, m_p, downloadFrame(m_ws), m_mac, region, m_letScratch,
                              m_letCut, m_stream);
    }
    if (!m_hostTreeValid) {
      downloadTree(m_tree, m_ws, m_hostTree, true);
      m_hostPosMass.resize(m_p.n);
      copyToHost(m_hostPosMass.data(), m_p.posMass.data(), m_p.n * sizeof(Vec4));
      m_hostTreeValid = true;
    }
    return sim::essentialTree(m_hostTree, m_hostPosMass, m_mac, region);
  }

  void walkLocal() override {
    beginWalkLocal();
    endWalkLocal();
  }
  void beginWalkLocal() override {
    if (m_p.n == 0) return;
    launchOneWalk(localSources(), false);
    m_walkPending = true;
  }
  /// The local tree as the walk's sources.
  WalkSources localSources() const {
    return {m_tree.walkCell.data(), m_tree.box.data(), m_tree.cells, m_p.posMass.data()};
  }
  void endWalkLocal() override {
    if (!m_walkPending) return;
    m_walkPending = false;
    readCountersLater(false);
  }

  void walkImported(const LetTree& let) override {
    if (m_p.n == 0 || let.empty()) return;
    uploadImportedLet(let, m_imported, m_stream);
    walk(WalkSources{m_imported.records.data(), m_imported.box.data(), let.tree.cellCount(),
                     m_imported.posMass.data()},
         true);
  }

  std::uint64_t workSum() const override {
    if (!m_distributed || m_p.n == 0) return 0;
    return sumWork(m_work.data(), m_p.n, m_ws.temp, m_workTotal, m_stream);
  }

  DeviceLets* deviceLets() override { return &m_lets; }

  // LetEnds: a large tree is cut on the device straight into the send bytes; a small one on the
  // host (essentialTree's threshold), its bytes uploaded.
  LetSize cutInto(const TargetRegion& region, DeviceBytes& out) override {
    if (m_p.n == 0 || !region.any()) return {};
    if (m_tree.cells >= kDeviceLetCells) {
      return cutEssentialTreeBytes(m_tree, m_p, downloadFrame(m_ws), m_mac, region, m_letScratch,
                                   out, m_stream);
    }
    const LetTree let = essentialTree(region);
    if (let.empty()) return {};
    m_letHostBytes.clear();
    const std::size_t bytes = appendBytes(let, m_letHostBytes);
    BHVIZ_CUDA_CHECK(cudaMemcpyAsync(out.append(bytes, m_stream), m_letHostBytes.data(), bytes,
                                     cudaMemcpyHostToDevice, m_stream));
    return {bytes, let.cellCount(), let.posMass.size()};
  }
  void walkLet(const LetView& let) override {
    if (m_p.n == 0) return;
    walk(WalkSources{let.records, let.box, let.size.cells, let.posMass}, true);
  }

  std::vector<std::uint32_t> work() const override {
    std::vector<std::uint32_t> w(m_p.n, 0);
    if (m_distributed && m_p.n > 0) {
      copyToHost(w.data(), m_work.data(), m_p.n * sizeof(std::uint32_t));
    }
    return w;
  }

  std::unique_ptr<OrbParticles> orbParticles(bool unitWeights) const override {
    const std::uint32_t* work = unitWeights || !m_distributed ? nullptr : m_work.data();
    return makeDeviceOrbParticles(m_p.posMass.data(), work, m_p.bin.data(), m_p.n, m_stream);
  }

  void strays(const OrbCuts& cuts, int rank, std::vector<std::uint32_t>& index,
              std::vector<int>& domain) const override {
    findStrays(m_p.posMass.data(), m_p.n, cuts, rank, m_exchange, m_stream, index, domain);
  }

  Particles gather(const std::vector<std::uint32_t>& indices) const override {
    return gatherParticles(m_p, indices, m_exchange, m_stream);
  }

  void exchange(const std::vector<std::uint32_t>& leaving, const Particles& arriving) override {
    removeAndAppend(m_p, leaving, arriving, m_ws, m_exchange, m_stream, carriedCounts());
    particlesExchanged();
  }

  DeviceExchange* deviceExchange() override { return &m_movers; }

  // ExchangeEnds: the leavers packed and the arrivals placed in device memory.
  std::vector<int> packInto(const OrbCuts& cuts, int rank, DeviceBuffer<PackedParticle>& out,
                            std::vector<std::uint32_t>& leaving) override {
    return packLeavers(m_p, cuts, rank, m_exchange, out, leaving, m_stream);
  }
  void place(const std::vector<std::uint32_t>& leaving, const PackedParticle* arriving,
             std::size_t count) override {
    removeAndPlace(m_p, leaving, arriving, count, m_ws, m_exchange, m_stream, carriedCounts());
    particlesExchanged();
  }

  /// The measured work stays with the particles that stay (the next walk's schedule reads it: a
  /// few strays moving on must not cost the rest their order); arrivals have none.
  CarriedArrays carriedCounts() {
    return {m_workAligned ? &m_work : nullptr, m_lastWorkValid ? &m_lastWork : nullptr};
  }
  /// After an exchange: no tree, groups or work of these particles yet, and arrivals no kernel
  /// of this rank watched.
  void particlesExchanged() {
    m_kicks.forget();
    m_walkCurrent = false;
    settle();                   // so that no walk's counters read later bring back its groups
    m_tree.levelBegin.clear();  // the tree was of the particles before
    m_tree.cells = 0;
    m_groupCount = 0;
    m_treeShape = {};
    m_hostTreeValid = false;
    m_distributed = false;  // no work measured for these particles yet
    m_statisticsValid = false;
  }

  /// One walk of the built groups over `sources`: written, or added (an imported tree).
  void walk(const WalkSources& sources, bool add) {
    launchOneWalk(sources, add);
    readCountersLater(add);
  }
  /// The walk's launch, on the stream (no wait, but for the mutual near field's one: the local
  /// tree's walk with it waits for its lists' length, walk_mutual.h).
  void launchOneWalk(const WalkSources& sources, bool add) {
    const Stream s = m_stream;
    m_counters.reserve(1);
    if (m_mutual && !add && sources.cells == m_tree.walkCell.data()) {
      timed(m_events, Stage::Walk, s, [&] {
        launchWalkMutual(m_tree, m_groups, m_p, m_walk, m_work.data(), m_counters.data(), m_device,
                         m_mutualSpace, s);
      });
      return;
    }
    const WalkOutput out{add, m_work.data()};
    timed(m_events, Stage::Walk, s,
          [&] { launchWalk(sources, m_groups, m_p, m_walk, out, m_counters.data(), m_device, s); });
  }
  /// Queues the copy of the walk's counters to the host, read when the step settles.
  void readCountersLater(bool add) {
    if (m_readback.queue(m_counters.data(), add, m_stream)) return;
    settle();  // every slot taken (a run of many ranks): read them first
    m_readback.queue(m_counters.data(), add, m_stream);
  }

  /// Waits for the stream and reads what its launches left for the host since the last settle:
  /// the stage times and the walks' counts into the profile, the groups walked. No wait where
  /// the caller waited already (the non-finite check at the end of a substep).
  void settle() const {
    if (!m_events.pending() && !m_readback.pending()) return;
    synchronize(m_stream);
    m_events.collect(m_profile);
    m_readback.collect(m_profile.interactions, &m_groupCount);
  }

  Stream m_stream = nullptr;
  /// Of the device current when the backend was made, which runs all its work.
  const DeviceProperties m_device = queryDeviceProperties();
  DeviceParticles m_p;
  mutable BuildWorkspace m_ws;  // bounds() reduces into it
  DeviceTree m_tree;
  DeviceGroups m_groups;
  DeviceBuffer<WalkCounters> m_counters;
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

}  // namespace

std::unique_ptr<Backend> makeCudaBackend(std::size_t expectedParticles, double bytesPerParticle) {
  checkDeviceCapacity(expectedParticles, bytesPerParticle);
  return std::make_unique<CudaBackend>();
}

}  // namespace bhviz::sim::cuda
