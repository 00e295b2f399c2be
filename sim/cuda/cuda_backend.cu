// The CUDA backend: the particles stay on the device; each stage is a CUDA twin of the CPU
// stage with the same output layout. A substep launches its stages without waiting for them,
// except where the host needs a number before it can launch the next: a rebuild's level table
// (it tells whether the tree's buffers sufficed, and how many cells there are; read through pinned
// memory on the backend's stream, as every number a substep waits for), and the deepest
// occupied bin (block steps only: it sets the drift) where the last close kicks could not
// forecast it (the first substep, or after anything that changed the bins or the forces, or
// their parameters). The stage times, the walks' counters and the forecast are read at the
// substep's end (settle), where the non-finite check waits anyway.
//
// The class is declared in cuda_backend_class.cuh; a rank's ends of a distributed run are
// defined in cuda_backend_dist.cu.
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "sim/common/conserved.h"
#include "sim/common/group_runs.h"
#include "sim/common/local_expansion.h"
#include "sim/common/timestep.h"
#include "sim/cuda/cuda_backend_class.cuh"
#include "sim/cuda/cuda_check.cuh"

namespace bhviz::sim::cuda {

namespace detail {

BackendTraits CudaBackend::traits() const {
  BackendTraits t{"cuda", BackendLimits{kMaxLeafSize, kMaxWalkGroup, true}, true,
                  kInteractiveParticles};
  t.rebuildsAroundTargets = true;
  return t;
}

void CudaBackend::copyParticles(const DeviceParticles& from, DeviceParticles& to, Stream s) {
  to.resize(from.n);
  if (from.n == 0) return;
  copyOnDevice(to.posMass.data(), from.posMass.data(), from.n * sizeof(Vec4), s);
  copyOnDevice(to.vel.data(), from.vel.data(), from.n * sizeof(Vec4), s);
  copyOnDevice(to.accPot.data(), from.accPot.data(), from.n * sizeof(Vec4), s);
  copyOnDevice(to.id.data(), from.id.data(), from.n * sizeof(std::uint32_t), s);
  copyOnDevice(to.tag.data(), from.tag.data(), from.n, s);
  copyOnDevice(to.bin.data(), from.bin.data(), from.n, s);
}

void CudaBackend::upload(const Particles& h) {
  uploadParticles(h, m_p);
  m_kicks.forget();
  m_statisticsValid = false;  // the tree and the work are of the particles before
  forgetWork();
  m_treeShape = {};
  m_walkCurrent = false;
  m_ws.reserve(h.size());
}

void CudaBackend::downloadSample(Particles& h, std::uint32_t stride) const {
  sampleById(m_p, stride, m_sample, m_stream, h);
}

std::unique_ptr<BackendState> CudaBackend::keepState(std::size_t deviceBytesFree) const {
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

void CudaBackend::restoreState(const BackendState& state) {
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

int CudaBackend::openKicks(const Clock& clock, const SimParams& p) {
  return m_kicks.openKicks(m_p, clock, p, m_events, m_stream);
}

void CudaBackend::drift(float dt) {
  m_kicks.drift(m_p, dt, m_events, m_stream);
  m_walkCurrent = false;
}

void CudaBackend::computeForces(const Clock& clock, const SimParams& p, ForceTargets targets,
                                bool oldAccValid) {
  buildStages(clock, p, targets, oldAccValid, nullptr, nullptr);
  if (m_p.n > 0) {
    walk(localSources(), false);
    m_walkCurrent = true;
  }
}

bool CudaBackend::refitForces(const Clock& clock, const SimParams& p, ForceTargets targets,
                              bool oldAccValid) {
  return evaluateOnLastTree(clock, p, targets, oldAccValid, false);
}

bool CudaBackend::rebuildAroundTargets(const Clock& clock, const SimParams& p, ForceTargets targets,
                                       bool oldAccValid) {
  return evaluateOnLastTree(clock, p, targets, oldAccValid, true);
}

bool CudaBackend::evaluateOnLastTree(const Clock& clock, const SimParams& p, ForceTargets targets,
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
  momentsAndGroups(p, m_events, true);
  walkLocal();
  m_walkCurrent = true;
  return true;
}

bool CudaBackend::probeRefit(const Clock& clock, const SimParams& p, ForceTargets targets,
                             bool oldAccValid, std::uint32_t sampleEvery) {
  // (The mutual near field counts its interactions otherwise: no sample to set against it.)
  if (!m_treeShape.fits(p, m_p.n) || sampleEvery == 0 || p.p2p == P2pMode::Mutual) return false;
  if (m_probeReadback.pending()) (void)refitProbe();  // one never read (its evaluation threw)
  if (!prepare(clock, p, targets, oldAccValid)) return false;
  const Stream s = m_stream;
  // The forces go to the gather's scratch, free between builds (the next one overwrites it).
  m_ws.reserve(m_p.n);
  m_probeCounters.reserve(1);
  WalkSettings settings = m_walk;
  settings.potential = false;
  WalkOutput out;
  out.accPot = m_ws.scratch.accPot.data();
  out.sampleEvery = sampleEvery;
  momentsAndGroups(p, m_probeEvents, false);
  timed(m_probeEvents, Stage::Walk, s, [&] {
    launchWalk(localSources(), m_groups, m_p, settings, out, m_probeCounters.data(), m_device, s);
  });
  m_probeReadback.queue(m_probeCounters.data(), false, s);
  return true;
}

Backend::RefitProbe CudaBackend::refitProbe() {
  if (!m_probeReadback.pending()) return {};
  synchronize(m_stream);  // passed already where the evaluation's check waited
  StepProfile times;
  m_probeEvents.collect(times);
  InteractionCounts c;
  m_probeReadback.collect(c, nullptr);
  if (c.targets == 0) return {};
  return {double(c.cell + c.particle) / double(c.targets), times.total()};
}

bool CudaBackend::recomputePotentials() {
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

void CudaBackend::closeKicks(const Clock& clock) {
  m_kicks.closeKicks(m_p, clock, m_events, m_stream);
}

Diagnostics CudaBackend::diagnostics(const Clock& clock) const {
  return computeDiagnostics(m_p, clock, m_sums, m_histogram, m_stream);
}

std::vector<std::uint32_t> CudaBackend::nonFiniteIds(std::size_t max) const {
  return m_kicks.nonFiniteIds(m_p, max, m_stream);
}

const StepProfile& CudaBackend::profile() const {
  settle();
  return m_profile;
}

void CudaBackend::resetProfile() {
  settle();  // what is still on its way belongs to the profile reset
  m_profile = {};
}

TreeCensus CudaBackend::treeCensus() const {
  settle();  // the groups come with the walk's counters
  const auto& begin = m_tree.levelBegin;
  if (begin.empty()) return {};
  return {begin.back(), static_cast<int>(begin.size()) - 1, m_groupCount};
}

TreeStatistics CudaBackend::treeStatistics() const {
  if (!m_statisticsValid) return {};
  settle();
  return computeTreeStatistics(
      TreeStatisticsSource{&m_tree, &m_p, m_work.data(), m_rule, m_leafSize, m_groupCount},
      m_statisticsSums, m_stream);
}

std::vector<DrawBox> CudaBackend::boxes(const BoxQuery& q) const {
  const std::size_t n = boxCount(q);
  std::vector<DrawBox> out(n);
  if (n == 0) return out;
  m_drawScratch.reserve(n);
  launchDrawBoxes(drawSource(), q, m_drawScratch.data(), m_stream);
  BHVIZ_CUDA_CHECK(cudaStreamSynchronize(m_stream));
  copyToHost(out.data(), m_drawScratch.data(), n * sizeof(DrawBox));
  return out;
}

sim::DeviceArrays CudaBackend::particles() const {
  return sim::DeviceArrays{m_p.posMass.data(), m_p.vel.data(), m_p.tag.data(), m_p.bin.data(),
                           m_p.id.data(),      m_p.n,          m_stream};
}

void CudaBackend::writeBoxes(const BoxQuery& q, DrawBox* out) const {
  if (boxCount(q) > 0) launchDrawBoxes(drawSource(), q, out, m_stream);
}

DrawSource CudaBackend::drawSource() const {
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

void CudaBackend::buildStages(const Clock& clock, const SimParams& p, ForceTargets targets,
                              bool oldAccValid, const KeyFrame* frame, const OrbCuts* domains) {
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
      copyToDevice(m_domainCuts.data(), domains->cut.data(), domains->cut.size() * sizeof(OrbCut));
      m_domains = {m_domainCuts.data(), domains->levels(), domains->ranks};
    }
  } else {
    timed(m_events, Stage::BoundingBox, s, [&] { launchBoundingBox(m_p, m_ws, s); });
  }
  timed(m_events, Stage::Keys, s, [&] { launchKeys(m_p, p.curve, m_ws, s); });
  rememberLastWork();  // in the order of the last walks, before the sort changes it
  launchSortAndTree(m_p, m_ws, p.nLeaf, m_tree, s,
                    [&](Stage stage, auto&& launch) { timed(m_events, stage, s, launch); });
  if (m_lastWorkValid) {
    timed(m_events, Stage::Sort, s,
          [&] { carryWork(m_ws.orderData(), m_p.n, m_lastWork, m_lastWorkScratch, s); });
  }
  // A tree in a given frame is one rank's part of a distributed run's: not refitted alone.
  m_treeShape = {frame == nullptr, p.nLeaf, p.curve, m_p.n};
  momentsAndGroups(p, m_events, true);
}

bool CudaBackend::prepare(const Clock& clock, const SimParams& p, ForceTargets targets,
                          bool oldAccValid) {
  m_kicks.forcesBegin(targets);
  m_mac = macSetup(p, oldAccValid);
  m_hostTreeValid = false;
  m_walk = WalkSettings{m_mac, p.quadrupole, p.softening};
  m_walk.potential = computesPotential(clock, targets);
  m_walk.expansion = expansionRule(p, m_mac, oldAccValid);
  m_mutual = p.p2p == P2pMode::Mutual;
  // At a synchronized tick (every tick of shared steps) every particle is active: the groups
  // then need no compaction of their targets (a scan and a scatter over n, ~25 µs a 1 M step on
  // an H200).
  m_rule =
      ActiveRule{clock.tick, clock.depth, targets == ForceTargets::All || clock.synchronized()};
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

void CudaBackend::momentsAndGroups(const SimParams& p, StageEvents& events, bool countWork) {
  const Stream s = m_stream;
  timed(events, Stage::Moments, s, [&] { launchMoments(m_tree, m_p, m_ws, m_mac, s, m_domains); });
  timed(events, Stage::Groups, s, [&] {
    launchGroups(m_tree, m_p, m_ws, m_rule, p.nGroup, m_groups, m_device, s,
                 m_lastWorkValid ? m_lastWork.data() : nullptr,
                 cutsGroupsIntoRuns(m_mac.code, m_rule.all) ? GroupRuns::Cut : GroupRuns::Whole);
  });
  if (!countWork) return;
  // Every walk counts each target's work (one add per target): the tree statistics show it,
  // a rank's next decomposition weighs by it, and the next walk's schedule expects it.
  m_work.reserve(m_p.n);
  BHVIZ_CUDA_CHECK(cudaMemsetAsync(m_work.data(), 0, m_p.n * sizeof(std::uint32_t), s));
  m_workAligned = true;
}

void CudaBackend::rememberLastWork() {
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

void CudaBackend::forgetWork() {
  m_workAligned = false;
  m_lastWorkValid = false;
}

void CudaBackend::walkLocal() {
  beginWalkLocal();
  endWalkLocal();
}

WalkSources CudaBackend::localSources() const {
  return {m_tree.walkCell.data(), m_tree.box.data(), m_tree.cells, m_p.posMass.data()};
}

void CudaBackend::walk(const WalkSources& sources, bool add) {
  launchOneWalk(sources, add);
  readCountersLater(add);
}

void CudaBackend::launchOneWalk(const WalkSources& sources, bool add) {
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

void CudaBackend::readCountersLater(bool add) {
  if (m_readback.queue(m_counters.data(), add, m_stream)) return;
  settle();  // every slot taken (a run of many ranks): read them first
  m_readback.queue(m_counters.data(), add, m_stream);
}

void CudaBackend::settle() const {
  if (!m_events.pending() && !m_readback.pending()) return;
  synchronize(m_stream);
  m_events.collect(m_profile);
  m_readback.collect(m_profile.interactions, &m_groupCount);
}

}  // namespace detail

std::unique_ptr<Backend> makeCudaBackend(std::size_t expectedParticles, double bytesPerParticle) {
  checkDeviceCapacity(expectedParticles, bytesPerParticle);
  return std::make_unique<detail::CudaBackend>();
}

}  // namespace bhviz::sim::cuda
