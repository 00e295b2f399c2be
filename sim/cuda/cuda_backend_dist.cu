// The CUDA backend's ends of a distributed run (sim/dist drives them): the force evaluation in
// parts (ForceParts: a build in the run's key frame and domains, the region of the groups, the
// essential trees cut for the other ranks, the local walk begun before and ended after the LETs
// arrive, the imported ones walked, the work per particle), the LETs as device bytes (LetEnds)
// and the particle exchange in device memory (ExchangeEnds). The class is declared in
// cuda_backend_class.cuh; a process's own step is in cuda_backend.cu.
#include <cuda_runtime.h>

#include "sim/cuda/cuda_backend_class.cuh"
#include "sim/cuda/cuda_check.cuh"

namespace bhviz::sim::cuda::detail {

void CudaBackend::build(const Clock& clock, const SimParams& p, ForceTargets targets,
                        bool oldAccValid, const KeyFrame* frame, const OrbCuts* domains) {
  m_distributed = true;  // from now on the walks count each particle's work
  buildStages(clock, p, targets, oldAccValid, frame, domains);
}

Box CudaBackend::bounds() const {
  if (m_p.n == 0) return {};
  // The reduction writes the key frame the tree was built in: no refit of it after this.
  m_treeShape = {};
  launchBoundingBox(m_p, m_ws, m_stream);
  return downloadBox(m_ws);
}

TargetRegion CudaBackend::targetRegion() const {
  TargetRegion r;
  if (m_p.n == 0) return r;
  // Reduced on the device: downloading every group took 6-7 ms at 8 M particles a rank.
  const GroupRegion g = groupRegion(m_groups, m_stream);
  r.box = g.box;
  r.accMin = std::min(r.accMin, g.accMin);
  return r;
}

LetTree CudaBackend::essentialTree(const TargetRegion& region) const {
  if (m_p.n == 0 || !region.any()) return {};
  if (m_tree.cells >= kDeviceLetCells) {
    return cutEssentialTree(m_tree, m_p, downloadFrame(m_ws), m_mac, region, m_letScratch, m_letCut,
                            m_stream);
  }
  if (!m_hostTreeValid) {
    downloadTree(m_tree, m_ws, m_hostTree, true);
    m_hostPosMass.resize(m_p.n);
    copyToHost(m_hostPosMass.data(), m_p.posMass.data(), m_p.n * sizeof(Vec4));
    m_hostTreeValid = true;
  }
  return sim::essentialTree(m_hostTree, m_hostPosMass, m_mac, region);
}

void CudaBackend::beginWalkLocal() {
  if (m_p.n == 0) return;
  launchOneWalk(localSources(), false);
  m_walkPending = true;
}

void CudaBackend::endWalkLocal() {
  if (!m_walkPending) return;
  m_walkPending = false;
  readCountersLater(false);
}

void CudaBackend::walkImported(const LetTree& let) {
  if (m_p.n == 0 || let.empty()) return;
  uploadImportedLet(let, m_imported, m_stream);
  walk(WalkSources{m_imported.records.data(), m_imported.box.data(), let.tree.cellCount(),
                   m_imported.posMass.data()},
       true);
}

std::uint64_t CudaBackend::workSum() const {
  if (!m_distributed || m_p.n == 0) return 0;
  return sumWork(m_work.data(), m_p.n, m_ws.temp, m_workTotal, m_stream);
}

LetSize CudaBackend::cutInto(const TargetRegion& region, DeviceBytes& out) {
  if (m_p.n == 0 || !region.any()) return {};
  if (m_tree.cells >= kDeviceLetCells) {
    return cutEssentialTreeBytes(m_tree, m_p, downloadFrame(m_ws), m_mac, region, m_letScratch, out,
                                 m_stream);
  }
  const LetTree let = essentialTree(region);
  if (let.empty()) return {};
  m_letHostBytes.clear();
  const std::size_t bytes = appendBytes(let, m_letHostBytes);
  BHVIZ_CUDA_CHECK(cudaMemcpyAsync(out.append(bytes, m_stream), m_letHostBytes.data(), bytes,
                                   cudaMemcpyHostToDevice, m_stream));
  return {bytes, let.cellCount(), let.posMass.size()};
}

void CudaBackend::walkLet(const LetView& let) {
  if (m_p.n == 0) return;
  walk(WalkSources{let.records, let.box, let.size.cells, let.posMass}, true);
}

std::vector<std::uint32_t> CudaBackend::work() const {
  std::vector<std::uint32_t> w(m_p.n, 0);
  if (m_distributed && m_p.n > 0) {
    copyToHost(w.data(), m_work.data(), m_p.n * sizeof(std::uint32_t));
  }
  return w;
}

std::unique_ptr<OrbParticles> CudaBackend::orbParticles(bool unitWeights) const {
  const std::uint32_t* work = unitWeights || !m_distributed ? nullptr : m_work.data();
  return makeDeviceOrbParticles(m_p.posMass.data(), work, m_p.bin.data(), m_p.n, m_stream);
}

void CudaBackend::strays(const OrbCuts& cuts, int rank, std::vector<std::uint32_t>& index,
                         std::vector<int>& domain) const {
  findStrays(m_p.posMass.data(), m_p.n, cuts, rank, m_exchange, m_stream, index, domain);
}

Particles CudaBackend::gather(const std::vector<std::uint32_t>& indices) const {
  return gatherParticles(m_p, indices, m_exchange, m_stream);
}

void CudaBackend::exchange(const std::vector<std::uint32_t>& leaving, const Particles& arriving) {
  removeAndAppend(m_p, leaving, arriving, m_ws, m_exchange, m_stream, carriedCounts());
  particlesExchanged();
}

std::vector<int> CudaBackend::packInto(const OrbCuts& cuts, int rank,
                                       DeviceBuffer<PackedParticle>& out,
                                       std::vector<std::uint32_t>& leaving) {
  return packLeavers(m_p, cuts, rank, m_exchange, out, leaving, m_stream);
}

void CudaBackend::place(const std::vector<std::uint32_t>& leaving, const PackedParticle* arriving,
                        std::size_t count) {
  removeAndPlace(m_p, leaving, arriving, count, m_ws, m_exchange, m_stream, carriedCounts());
  particlesExchanged();
}

CarriedArrays CudaBackend::carriedCounts() {
  return {m_workAligned ? &m_work : nullptr, m_lastWorkValid ? &m_lastWork : nullptr};
}

void CudaBackend::particlesExchanged() {
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

}  // namespace bhviz::sim::cuda::detail
