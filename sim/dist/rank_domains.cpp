// A rank's domains (rank.h): spreading the leader's particles and gathering them back, the
// ORB's cuts, the particle exchanges (through the host or on the device), the trees' key
// frame, and when to cut again. The forces, the LETs and the reports are in rank.cpp.
#include <algorithm>
#include <chrono>
#include <climits>
#include <stdexcept>
#include <type_traits>

#include "sim/cpu/cpu_stages.h"
#include "sim/dist/mpi_util.h"
#include "sim/dist/rank.h"
#include "sim/stage_timer.h"

namespace bhviz::sim::dist {

namespace {

/// How much larger than the particles' cube the trees' frame is made at a decomposition [1].
constexpr float kFrameMargin = 0.05f;
/// Decompositions by measured work after the start's by counts (RankShare::m_settling).
constexpr int kSettlingCuts = 2;

}  // namespace

void RankShare::upload(const Particles* all) {
  if (m_ranks == 1) {  // one domain, the particles' box: nothing to spread, cut or move
    m_size = all->size();
    m_local->upload(*all);
    m_domains = {cpu::boundingBox(all->posMass)};
    m_report.domain = m_domains[0];
    m_workValid = false;
    return;
  }
  std::uint64_t n = m_rank == 0 ? all->size() : 0;
  checkMpi(MPI_Bcast(&n, 1, MPI_UINT64_T, 0, jobComm()), "MPI_Bcast");
  m_size = n;
  // The leader makes the start's cut itself first, on one process (unit weights, the same root
  // and settings: the same integer sums, so the same domains), and sends each rank the
  // particles of its domain: the collective cut that follows finds them in place and moves
  // none. (Equal runs by index moved about half of them, the peak of every rank's memory:
  // docs/BENCHMARKS.md, "Host memory under mpirun".)
  const bool leader = m_rank == 0;
  const auto K = static_cast<std::size_t>(m_ranks);
  std::vector<int> counts(K, 0);
  std::vector<std::uint32_t> order;  // leader: the particles by domain
  if (leader) {
    HostOrbParticles orb(all->posMass, {});  // unit weights: no array of ones
    const Box root = cpu::boundingBox(all->posMass);
    dist::decompose(
        m_ranks, root, orb, [](std::vector<std::uint64_t>&) {}, orbSettingsFor(root));
    const std::vector<int>& domain = orb.domain();
    std::vector<std::uint64_t> held(K, 0);
    for (int d : domain) ++held[static_cast<std::size_t>(d)];
    for (std::size_t r = 0; r < K; ++r) {
      if (held[r] > INT_MAX) throw std::runtime_error("more than 2^31 particles per rank");
      counts[r] = static_cast<int>(held[r]);
    }
    std::vector<int> at = displacements(counts);
    order.resize(domain.size());
    for (std::size_t i = 0; i < domain.size(); ++i) {
      order[static_cast<std::size_t>(at[static_cast<std::size_t>(domain[i])]++)] =
          static_cast<std::uint32_t>(i);
    }
  }
  checkMpi(MPI_Bcast(counts.data(), m_ranks, MPI_INT, 0, jobComm()), "MPI_Bcast");
  const std::vector<int> displs = displacements(counts);
  // Array by array, each put in domain order on the leader only while it is sent, so that no
  // packed copy of every particle is made.
  Particles mine;
  mine.resize(static_cast<std::size_t>(counts[static_cast<std::size_t>(m_rank)]));
  {
    StageTimer t(m_dist, Stage::Domains);
    auto scatter = [&](const auto& from, auto& into) {
      using T = typename std::decay_t<decltype(into)>::value_type;
      std::vector<T> sorted;
      if (leader) {
        sorted.resize(order.size());
        for (std::size_t k = 0; k < order.size(); ++k) sorted[k] = from[order[k]];
      }
      const MPI_Datatype type = bytesType(sizeof(T));
      checkMpi(MPI_Scatterv(sorted.data(), counts.data(), displs.data(), type, into.data(),
                            static_cast<int>(into.size()), type, 0, jobComm()),
               "MPI_Scatterv");
    };
    const Particles none;
    const Particles& from = leader ? *all : none;
    scatter(from.posMass, mine.posMass);
    scatter(from.vel, mine.vel);
    scatter(from.accPot, mine.accPot);
    scatter(from.id, mine.id);
    scatter(from.tag, mine.tag);
    scatter(from.bin, mine.bin);
  }
  order = {};
  m_local->upload(mine);
  mine = Particles{};  // the backend holds its copy
  m_workValid = false;
  decompose();
}

void RankShare::download(Particles* all) { downloadSample(all, 1); }

void RankShare::downloadSample(Particles* all, std::uint32_t stride) {
  if (m_ranks == 1) {
    m_local->downloadSample(*all, stride);
    return;
  }
  // Array by array into the leader's arrays, which keep their memory from frame to frame (the
  // window's view of a large run gathers millions each frame: packing each particle and making
  // the arrays anew cost ~0.5 s for 4 M).
  Particles& mine = m_sample;
  m_local->downloadSample(mine, stride);
  if (mine.size() > INT_MAX) throw std::runtime_error("a rank holds more than 2^31 particles");
  const std::vector<int> counts = gatherToLeader(static_cast<int>(mine.size()), m_rank, m_ranks);
  std::vector<int> displs;
  if (m_rank == 0) {
    displs = displacements(counts);
    all->resize(static_cast<std::size_t>(displs.back() + counts.back()));
  }
  const bool leader = m_rank == 0;
  auto gather = [&](const auto& from, auto* into) {
    const MPI_Datatype type = bytesType(sizeof(*into));
    checkMpi(MPI_Gatherv(from.data(), static_cast<int>(from.size()), type, into, counts.data(),
                         displs.data(), type, 0, jobComm()),
             "MPI_Gatherv");
  };
  gather(mine.posMass, leader ? all->posMass.data() : static_cast<Vec4*>(nullptr));
  gather(mine.vel, leader ? all->vel.data() : static_cast<Vec4*>(nullptr));
  gather(mine.accPot, leader ? all->accPot.data() : static_cast<Vec4*>(nullptr));
  gather(mine.id, leader ? all->id.data() : static_cast<std::uint32_t*>(nullptr));
  gather(mine.tag, leader ? all->tag.data() : static_cast<std::uint8_t*>(nullptr));
  gather(mine.bin, leader ? all->bin.data() : static_cast<std::uint8_t*>(nullptr));
}

void RankShare::decompose() {
  StageTimer t(m_dist, Stage::Domains);
  const auto start = std::chrono::steady_clock::now();
  const Box root = globalBounds(m_parts->bounds());
  const SumOverRanks sum = [](std::vector<std::uint64_t>& v) {
    checkMpi(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_UINT64_T,
                           MPI_SUM, jobComm()),
             "MPI_Allreduce");
  };
  // The trees' frame until the next decomposition: a little larger than the particles' cube,
  // so that the particles stay inside it while they move, and with its middle plane on the
  // first cut, so that no cell below its root straddles that cut (a rank's own cell and the
  // other's LET cell where one tree has one: 8 % more interactions on a Plummer sphere cut at
  // a fine plane through its centre; docs/ARCHITECTURE.md). The later cuts snap to its planes.
  const bool onCut = frameOnCut();
  const OrbSettings orbSettings = orbSettingsFor(root);
  // Weights: the measured work where an evaluation of every particle measured it, else 1.
  const std::unique_ptr<OrbParticles> orb = m_parts->orbParticles(!m_workValid);
  m_settling = m_workValid ? std::max(m_settling - 1, 0) : kSettlingCuts;
  const OrbResult result = dist::decompose(m_ranks, root, *orb, sum, orbSettings);
  m_frame = result.frame;
  m_frameOnCut = onCut;
  m_domains = result.domains;
  m_cuts = result.cuts;
  m_report.domain = result.domains[static_cast<std::size_t>(m_rank)];
  ++m_report.decompositions;
  m_workAfterDecomposition = 0;  // measured at the next check
  const auto cut = std::chrono::steady_clock::now();
  m_report.orbMs += std::chrono::duration<double, std::milli>(cut - start).count();
  if (DeviceExchange* device = m_parts->deviceExchange()) {
    exchangeOnDevice(*device, m_cuts);  // the cuts place every particle as the ORB did
  } else {
    std::vector<std::uint32_t> leaving;
    std::vector<int> to;
    orb->leavers(m_rank, leaving, to);
    exchangeOnHost(leaving, to);
  }
  m_workValid = false;
  m_lastCheck = std::chrono::steady_clock::now();
  m_report.exchangeMs += std::chrono::duration<double, std::milli>(m_lastCheck - cut).count();
  m_cutMs = std::chrono::duration<double, std::milli>(m_lastCheck - start).count();
  m_ledger.clear();
}

void RankShare::migrate() {
  if (!m_settings.migrate || m_cuts.levels() == 0) return;
  StageTimer t(m_dist, Stage::Domains);
  const auto start = std::chrono::steady_clock::now();
  if (DeviceExchange* device = m_parts->deviceExchange()) {
    exchangeOnDevice(*device, m_cuts);
  } else {
    std::vector<std::uint32_t> leaving;
    std::vector<int> to;
    m_parts->strays(m_cuts, m_rank, leaving, to);
    exchangeOnHost(leaving, to);
  }
  m_report.exchangeMs +=
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

void RankShare::exchangeOnDevice(DeviceExchange& device, const OrbCuts& cuts) {
  // Packed on the device by destination; only the counts come to the host.
  const std::vector<int> sendCounts = device.packLeavers(cuts, m_rank);
  std::vector<int> recvCounts(sendCounts.size(), 0);
  checkMpi(MPI_Alltoall(sendCounts.data(), 1, MPI_INT, recvCounts.data(), 1, MPI_INT, jobComm()),
           "MPI_Alltoall");
  const std::vector<int> sendAt = displacements(sendCounts);
  const std::vector<int> recvAt = displacements(recvCounts);
  const auto sent = static_cast<std::size_t>(sendAt.back() + sendCounts.back());
  const auto received = static_cast<std::size_t>(recvAt.back() + recvCounts.back());
  m_report.particlesSent += sent;
  // Nothing left or came: the particles, their order and their measured work stay as they are.
  const bool still = sent == 0 && received == 0;
  if (m_nccl != nullptr) {
    // Sends and receives between pairs: a rank with nothing to move takes no part.
    if (still) return;
    m_nccl->exchangeOn(device.stream(), sizeof(PackedParticle),
                       reinterpret_cast<const std::byte*>(device.sentDevice()), sendCounts, sendAt,
                       reinterpret_cast<std::byte*>(device.receiveDevice(received)), recvCounts,
                       recvAt);
  } else {
    // A collective: every rank calls it, one with nothing to move too (from K = 3 two ranks may
    // trade while a third has nothing: it returned early here, and the job hung). A rank that
    // sends none does not wait for the device's copy of nothing.
    const PackedParticle* out = sent > 0 ? device.sentHost() : nullptr;
    PackedParticle* in = device.receiveHost(received);
    checkMpi(MPI_Alltoallv(out, sendCounts.data(), sendAt.data(), packedParticleType(), in,
                           recvCounts.data(), recvAt.data(), packedParticleType(), jobComm()),
             "MPI_Alltoallv");
    if (still) return;
  }
  device.placeArrivals();
}

void RankShare::exchangeOnHost(const std::vector<std::uint32_t>& leaving,
                               const std::vector<int>& to) {
  // Only the particles that change rank travel: they come to the host, the others stay.
  const auto K = static_cast<std::size_t>(m_ranks);
  std::vector<int> sendCounts(K, 0), recvCounts(K, 0);
  for (int r : to) ++sendCounts[static_cast<std::size_t>(r)];
  const std::vector<int> sendDispls = displacements(sendCounts);
  std::vector<PackedParticle> out(leaving.size());
  {
    // Each copy lives only as long as it is needed: at the start's decomposition about half of
    // a rank's particles move (docs/BENCHMARKS.md, "Host memory under mpirun").
    const Particles movers = m_parts->gather(leaving);
    std::vector<int> at = sendDispls;
    for (std::size_t k = 0; k < movers.size(); ++k) {
      const auto o = static_cast<std::size_t>(to[k]);
      out[static_cast<std::size_t>(at[o]++)] = pack(movers, k);
    }
  }
  checkMpi(MPI_Alltoall(sendCounts.data(), 1, MPI_INT, recvCounts.data(), 1, MPI_INT, jobComm()),
           "MPI_Alltoall");
  const std::vector<int> recvDispls = displacements(recvCounts);
  std::vector<PackedParticle> in(static_cast<std::size_t>(recvDispls.back() + recvCounts.back()));
  checkMpi(MPI_Alltoallv(out.data(), sendCounts.data(), sendDispls.data(), packedParticleType(),
                         in.data(), recvCounts.data(), recvDispls.data(), packedParticleType(),
                         jobComm()),
           "MPI_Alltoallv");
  m_report.particlesSent += out.size();
  // Nothing left or came: the particles, their order and their measured work stay as they are.
  if (out.empty() && in.empty()) return;
  out = {};
  const Particles arriving = unpackAll(in);
  in = {};
  m_parts->exchange(leaving, arriving);
}

Box RankShare::globalBounds(const Box& local) const {
  // One reduction a step: the lows negated, so that their minimum is a maximum.
  float v[6] = {-local.lo.x, -local.lo.y, -local.lo.z, local.hi.x, local.hi.y, local.hi.z};
  checkMpi(MPI_Allreduce(MPI_IN_PLACE, v, 6, MPI_FLOAT, MPI_MAX, jobComm()), "MPI_Allreduce");
  return Box{{-v[0], -v[1], -v[2]}, {v[3], v[4], v[5]}};
}

const KeyFrame* RankShare::treeFrame() {
  if (m_ranks == 1) return nullptr;  // no cuts: the tree of one process, bit for bit
  const Box all = globalBounds(m_parts->bounds());
  const Vec3 top = m_frame.origin + m_frame.side * Vec3{1, 1, 1};
  const bool inside = m_frame.side > 0.0f && all.lo.x >= m_frame.origin.x &&
                      all.lo.y >= m_frame.origin.y && all.lo.z >= m_frame.origin.z &&
                      all.hi.x < top.x && all.hi.y < top.y && all.hi.z < top.z;
  // A new frame around every particle, of the same kind (on the first cut or plain; the same
  // on every rank: the bounds are reduced), and the cuts sided in it.
  if (!inside) {
    const bool onCut = m_frameOnCut && m_cuts.levels() > 0;
    m_frame = frameAroundCut(all, onCut ? m_cuts.cut[0] : OrbCut{}, kFrameMargin);
    m_cuts = cutsInFrame(m_cuts, m_frame, onCut);
  }
  return &m_frame;
}

bool RankShare::frameOnCut() const { return frameOnFirstCut(m_settings, m_mac); }

OrbSettings RankShare::orbSettingsFor(const Box& root) const {
  OrbSettings s = m_settings.orb;
  const bool onCut = frameOnCut();
  s.gridOnFirstCut = onCut;
  s.gridMargin = kFrameMargin;
  if (!onCut) s.grid = frameAroundCut(root, OrbCut{}, kFrameMargin);
  return s;
}

bool RankShare::rebalanceDue() {
  if (m_settings.imbalance <= 0.0) return true;
  const std::uint64_t work = m_parts->workSum();
  std::uint64_t sum = work;
  checkMpi(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_UINT64_T, MPI_SUM, jobComm()), "MPI_Allreduce");
  // In one reduction, the slowest rank's: the most work (exact as a double below 2^53), the
  // time since the last check and the last decomposition's cost. The ledger sees the same
  // numbers on every rank.
  const auto now = std::chrono::steady_clock::now();
  double most[3] = {static_cast<double>(work),
                    std::chrono::duration<double, std::milli>(now - m_lastCheck).count(), m_cutMs};
  m_lastCheck = now;
  checkMpi(MPI_Allreduce(MPI_IN_PLACE, most, 3, MPI_DOUBLE, MPI_MAX, jobComm()), "MPI_Allreduce");
  if (sum == 0) return false;
  const double imbalance = most[0] * m_ranks / static_cast<double>(sum);
  // Particles that wander out of their domains spread every rank's groups over the others'
  // domains: the LETs, and with them every rank's work, grow alike, which the imbalance does
  // not see (a Plummer sphere's LETs grew from 28 to 104 MB in 20 steps at 16 M).
  if (m_workAfterDecomposition == 0) m_workAfterDecomposition = sum;
  const double growth = static_cast<double>(sum) / static_cast<double>(m_workAfterDecomposition);
  // Past the threshold, a decomposition once the time lost since the last has paid for it (on
  // four H200s the threshold alone cut every ~5 steps, ~14 ms each against 32 ms steps).
  return m_ledger.due(most[1], imbalance, growth, m_settings.imbalance, most[2]);
}

}  // namespace bhviz::sim::dist
