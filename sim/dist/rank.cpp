// A rank's share of a distributed run (rank.h): the force evaluation with its essential trees,
// the kicks, the diagnostics and the reports. Its domains are in rank_domains.cpp.
#include "sim/dist/rank.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "sim/cpu/cpu_stages.h"
#include "sim/dist/mpi_util.h"
#include "sim/stage_timer.h"

namespace bhviz::sim::dist {

namespace {

/// Where a rank's groups are, as it travels.
struct RegionMessage {
  Box box;
  float accMin = INFINITY;
};

}  // namespace

RankShare::RankShare(std::unique_ptr<Backend> local, const DistSettings& settings)
    : m_local(std::move(local)), m_settings(settings) {
  MPI_Comm_rank(jobComm(), &m_rank);
  MPI_Comm_size(jobComm(), &m_ranks);
  // One rank is one process's run: its backend computes its forces whole, with no essential
  // trees, work counts or decompositions (the distributed path's overhead at K = 1).
  if (m_ranks == 1) return;
  m_parts = m_local->forceParts();
  if (m_parts == nullptr) {
    throw std::invalid_argument(std::string("the ") + std::string(m_local->name()) +
                                " backend cannot run as a rank of a distributed run yet");
  }
  // Every rank takes part in the choice (collective), whatever it decides.
  std::string why;
  DeviceLets* lets = m_settings.lets == LetTransport::Auto ? m_parts->deviceLets() : nullptr;
  m_nccl = NcclLink::open(lets, m_rank, m_ranks, why);
  m_report.letsOverNccl = m_nccl != nullptr;
  static bool said = false;  // once a process: the window's reset makes a new share each time
  if (m_rank == 0 && !said && m_nccl == nullptr && m_parts->deviceLets() != nullptr) {
    said = true;
    std::fprintf(stderr, "bhviz: the essential trees go through the host (%s)\n",
                 m_settings.lets == LetTransport::Host ? "as asked" : why.c_str());
  }
}

int RankShare::openKicks(const Clock& clock, const SimParams& p) {
  m_mac = p.mac;
  // The same on every rank: rebalanceDue's reductions run on all or none.
  if (m_ranks > 1 && clock.synchronized() && m_workValid && (m_settling > 0 || rebalanceDue())) {
    decompose();
  }
  int deepest = m_local->openKicks(clock, p);
  // One bin (shared steps, the same clock on every rank): 0 everywhere, nothing to reduce.
  if (clock.depth == 0) return 0;
  checkMpi(MPI_Allreduce(MPI_IN_PLACE, &deepest, 1, MPI_INT, MPI_MAX, jobComm()), "MPI_Allreduce");
  return deepest;
}

void RankShare::drift(float dt) { m_local->drift(dt); }

/// One evaluation's LETs on their way: the bytes sent to and received from each rank, where
/// they lie in the buffers, and the host path's pending exchange.
struct RankShare::LetRound {
  explicit LetRound(std::size_t ranks) : sendBytes(ranks, 0), recvBytes(ranks, 0) {}
  std::vector<int> sendBytes, recvBytes, sendAt, recvAt;
  MPI_Request request = MPI_REQUEST_NULL;
};

void RankShare::computeForces(const Clock& clock, const SimParams& p, ForceTargets targets,
                              bool oldAccValid) {
  if (m_ranks == 1) {
    m_local->computeForces(clock, p, targets, oldAccValid);
    return;
  }
  // A MAC that wants the other kind of frame cuts again in it at a full step, so that the cuts
  // lie on its planes (the multipole MAC's plain frame: the first evaluation after an upload,
  // which cuts before any step names the MAC, or a MAC changed mid-run; until then the parts'
  // shares hold in the frame there is). Every rank has the same MAC and clock.
  m_mac = p.mac;
  if (clock.synchronized() && frameOnCut() != m_frameOnCut) decompose();
  // The frame first (a new one re-sides the cuts), then the strays by those cuts.
  const KeyFrame* frame = treeFrame();
  migrate();
  m_parts->build(clock, p, targets, oldAccValid, frame, &m_cuts);
  LetRound round(static_cast<std::size_t>(m_ranks));
  // Outside the LET stage: on a GPU the region is a reduction on the device, whose read waits
  // for the build's last kernels, and those time themselves (inside the stage, they were
  // counted twice: ~1.2 ms of a 16 M rank's 1.9).
  const TargetRegion mine = m_parts->targetRegion();
  {
    StageTimer t(m_dist, Stage::Let);
    cutLets(round, mine);
    startLetExchange(round);
  }
  if (m_parts->deviceLets() == nullptr) {
    // A rank that walks on the host: the LETs first, then one walk of its tree with them
    // merged in (ForceParts::walkLocalAndImported), or its tree and each LET.
    {
      StageTimer t(m_dist, Stage::Let);
      checkMpi(MPI_Wait(&round.request, MPI_STATUS_IGNORE), "MPI_Wait");
    }
    walkLocalAndReceivedLets(round);
  } else {
    // The local tree walks on the device while the LETs travel.
    m_parts->beginWalkLocal();
    if (m_nccl == nullptr) {
      StageTimer t(m_dist, Stage::Let);
      checkMpi(MPI_Wait(&round.request, MPI_STATUS_IGNORE), "MPI_Wait");
    }
    m_parts->endWalkLocal();
    walkReceivedLets(round);
  }
  // An evaluation of every particle measures the work the next decomposition balances.
  if (targets == ForceTargets::All || clock.synchronized()) m_workValid = true;
}

void RankShare::cutLets(LetRound& round, const TargetRegion& mine) {
  // A GPU's LETs stay bytes in device memory from the cut to the walk (DeviceLets); they move
  // by NCCL, or through pinned host memory. A CPU's are cut, sent and parsed on the host.
  DeviceLets* lets = m_parts->deviceLets();
  const RegionMessage message{mine.box, mine.accMin};
  std::vector<RegionMessage> regions(static_cast<std::size_t>(m_ranks));
  checkMpi(MPI_Allgather(&message, sizeof message, MPI_BYTE, regions.data(), sizeof message,
                         MPI_BYTE, jobComm()),
           "MPI_Allgather");
  // A LET for every other rank with targets, one after the other into one buffer (kept between
  // evaluations: fresh buffers of tens of MB each time cost their page faults).
  if (lets != nullptr) lets->clearSent();
  m_letOut.clear();
  for (std::size_t r = 0; r < regions.size(); ++r) {
    const TargetRegion region{regions[r].box, regions[r].accMin};
    if (static_cast<int>(r) == m_rank || !region.any()) continue;
    LetSize sent;
    if (lets != nullptr) {
      sent = lets->appendCut(region);
    } else {
      const LetTree let = m_parts->essentialTree(region);
      if (!let.empty()) sent = {appendBytes(let, m_letOut), let.cellCount(), let.posMass.size()};
    }
    if (sent.bytes == 0) continue;
    if (sent.bytes > INT_MAX) throw std::runtime_error("a LET of more than 2 GiB");
    round.sendBytes[r] = static_cast<int>(sent.bytes);
    m_report.letCellsSent += sent.cells;
    m_report.letParticlesSent += sent.particles;
    m_report.letBytesSent += sent.bytes;
  }
}

void RankShare::startLetExchange(LetRound& round) {
  DeviceLets* lets = m_parts->deviceLets();
  checkMpi(MPI_Alltoall(round.sendBytes.data(), 1, MPI_INT, round.recvBytes.data(), 1, MPI_INT,
                        jobComm()),
           "MPI_Alltoall");
  round.sendAt = displacements(round.sendBytes);
  round.recvAt = displacements(round.recvBytes);
  const auto received = static_cast<std::size_t>(round.recvAt.back() + round.recvBytes.back());
  if (m_nccl != nullptr) {
    m_nccl->start(lets->sentDevice(), round.sendBytes, round.sendAt, lets->receiveDevice(received),
                  round.recvBytes, round.recvAt);
    return;
  }
  const std::byte* send = lets != nullptr ? lets->sentHost() : m_letOut.data();
  std::byte* recv = nullptr;
  if (lets != nullptr) {
    recv = lets->receiveHost(received);
  } else {
    m_letIn.resize(received);
    recv = m_letIn.data();
  }
  checkMpi(MPI_Ialltoallv(send, round.sendBytes.data(), round.sendAt.data(), MPI_BYTE, recv,
                          round.recvBytes.data(), round.recvAt.data(), MPI_BYTE, jobComm(),
                          &round.request),
           "MPI_Ialltoallv");
}

void RankShare::walkReceivedLets(const LetRound& round) {
  DeviceLets* lets = m_parts->deviceLets();
  if (lets == nullptr) throw std::logic_error("walkReceivedLets: a rank without device LETs");
  if (m_nccl != nullptr) {
    m_nccl->finish();
  } else {
    lets->uploadReceived();
  }
  for (std::size_t r = 0; r < round.recvBytes.size(); ++r) {
    if (round.recvBytes[r] == 0) continue;
    const auto at = static_cast<std::size_t>(round.recvAt[r]);
    const auto bytes = static_cast<std::size_t>(round.recvBytes[r]);
    LetSize received;
    try {
      received = lets->walkReceived(at, bytes);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error("the LET from rank " + std::to_string(r) + ": " + e.what());
    }
    m_report.letCellsReceived += received.cells;
    m_report.letParticlesReceived += received.particles;
    m_report.letBytesReceived += received.bytes;
  }
}

void RankShare::walkLocalAndReceivedLets(const LetRound& round) {
  std::vector<LetTree> lets;
  {
    StageTimer t(m_dist, Stage::Let);
    for (std::size_t r = 0; r < round.recvBytes.size(); ++r) {
      if (round.recvBytes[r] == 0) continue;
      const auto at = static_cast<std::size_t>(round.recvAt[r]);
      const auto bytes = static_cast<std::size_t>(round.recvBytes[r]);
      try {
        lets.push_back(letFromBytes(m_letIn.data() + at, bytes));
      } catch (const std::invalid_argument& e) {
        throw std::runtime_error("the LET from rank " + std::to_string(r) + ": " + e.what());
      }
      m_report.letCellsReceived += lets.back().cellCount();
      m_report.letParticlesReceived += lets.back().posMass.size();
      m_report.letBytesReceived += bytes;
    }
  }
  if (m_settings.mergeLets) {
    m_parts->walkLocalAndImported(lets);
    return;
  }
  m_parts->walkLocal();
  for (const LetTree& let : lets) m_parts->walkImported(let);
}

void RankShare::closeKicks(const Clock& clock) { m_local->closeKicks(clock); }

std::vector<std::uint32_t> RankShare::nonFiniteIds(std::size_t max) {
  std::vector<std::uint32_t> ids = gatherVectors(m_local->nonFiniteIds(max), m_rank, m_ranks);
  if (ids.size() > max) ids.resize(max);
  return ids;
}

Diagnostics RankShare::diagnostics(const Clock& clock) {
  Diagnostics d = m_local->diagnostics(clock);
  double sums[9] = {d.mass,
                    d.kinetic,
                    d.potential,
                    d.momentum[0],
                    d.momentum[1],
                    d.momentum[2],
                    d.angularMomentum[0],
                    d.angularMomentum[1],
                    d.angularMomentum[2]};
  const bool leader = m_rank == 0;
  checkMpi(MPI_Reduce(leader ? MPI_IN_PLACE : sums, sums, 9, MPI_DOUBLE, MPI_SUM, 0, jobComm()),
           "MPI_Reduce");
  std::vector<std::uint64_t>& h = d.binHistogram;
  checkMpi(MPI_Reduce(leader ? MPI_IN_PLACE : h.data(), h.data(), static_cast<int>(h.size()),
                      MPI_UINT64_T, MPI_SUM, 0, jobComm()),
           "MPI_Reduce");
  d.mass = sums[0], d.kinetic = sums[1], d.potential = sums[2];
  d.momentum = {sums[3], sums[4], sums[5]};
  d.angularMomentum = {sums[6], sums[7], sums[8]};
  return d;
}

StepProfile RankShare::combinedProfile() const {
  StepProfile p = m_local->profile();
  p += m_dist;
  return p;
}

StepProfile RankShare::profile() {
  const std::vector<StepProfile> all = gatherToLeader(combinedProfile(), m_rank, m_ranks);
  StepProfile slowest;
  for (const StepProfile& p : all) {
    for (std::size_t s = 0; s < p.ms.size(); ++s) slowest.ms[s] = std::max(slowest.ms[s], p.ms[s]);
    slowest.spanMs = std::max(slowest.spanMs, p.spanMs);
    slowest.interactions += p.interactions;
  }
  return slowest;
}

void RankShare::resetProfile() {
  const StepProfile p = combinedProfile();
  m_report.total += p;
  m_report.work += p.interactions.cell + p.interactions.particle;
  m_local->resetProfile();
  m_dist = {};
}

std::vector<RankReport> RankShare::reports() {
  RankReport r = m_report;
  const StepProfile current = combinedProfile();
  r.particles = m_local->size();
  r.deviceBytesPeak = m_local->deviceBytesPeak();
  r.last = current;
  r.total += current;
  r.work += current.interactions.cell + current.interactions.particle;
  return gatherToLeader(r, m_rank, m_ranks);
}

TreeStatistics RankShare::treeStatistics() {
  const std::vector<TreeStatistics> all =
      gatherToLeader(m_local->treeStatistics(), m_rank, m_ranks);
  TreeStatistics sum;
  for (const TreeStatistics& s : all) sum += s;
  return sum;
}

}  // namespace bhviz::sim::dist
