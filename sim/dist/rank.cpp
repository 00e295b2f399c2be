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

/// Gathers one trivially copyable value from every rank on rank 0.
template <typename T>
std::vector<T> gatherToLeader(const T& mine, int rank, int ranks) {
  std::vector<T> all(rank == 0 ? static_cast<std::size_t>(ranks) : 0);
  checkMpi(MPI_Gather(&mine, sizeof(T), MPI_BYTE, all.data(), sizeof(T), MPI_BYTE, 0, jobComm()),
           "MPI_Gather");
  return all;
}

/// Gathers a vector from every rank on rank 0, rank by rank.
template <typename T>
std::vector<T> gatherVectors(const std::vector<T>& mine, int rank, int ranks,
                             MPI_Datatype type = MPI_DATATYPE_NULL) {
  if (mine.size() > INT_MAX) throw std::runtime_error("a rank holds more than 2^31 elements");
  const int count = static_cast<int>(mine.size());
  std::vector<int> counts = gatherToLeader(count, rank, ranks);
  std::vector<int> displs = rank == 0 ? displacements(counts) : std::vector<int>{};
  std::size_t total = 0;
  for (int c : counts) total += static_cast<std::size_t>(c);
  std::vector<T> all(total);
  if (type == MPI_DATATYPE_NULL) {
    // Bytes: counts and displacements scaled by the element size.
    std::vector<int> bytes(counts.size()), at(counts.size());
    for (std::size_t r = 0; r < counts.size(); ++r) {
      bytes[r] = counts[r] * static_cast<int>(sizeof(T));
      at[r] = displs[r] * static_cast<int>(sizeof(T));
    }
    checkMpi(MPI_Gatherv(mine.data(), count * static_cast<int>(sizeof(T)), MPI_BYTE, all.data(),
                         bytes.data(), at.data(), MPI_BYTE, 0, jobComm()),
             "MPI_Gatherv");
  } else {
    checkMpi(MPI_Gatherv(mine.data(), count, type, all.data(), counts.data(), displs.data(), type,
                         0, jobComm()),
             "MPI_Gatherv");
  }
  return all;
}

/// How much larger than the particles' cube the trees' frame is made at a decomposition [1].
constexpr float kFrameMargin = 0.05f;
/// Decompositions by measured work after the start's by counts (RankShare::m_settling).
constexpr int kSettlingCuts = 2;

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
    std::vector<int> domain;
    {
      HostOrbParticles orb(all->posMass, std::vector<std::uint64_t>(all->size(), 1));
      const Box root = cpu::boundingBox(all->posMass);
      dist::decompose(
          m_ranks, root, orb, [](std::vector<std::uint64_t>&) {}, orbSettingsFor(root));
      domain = orb.domains();
    }
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
  if (sent == 0 && received == 0) return;
  if (m_nccl != nullptr) {
    m_nccl->exchangeOn(device.stream(), sizeof(PackedParticle),
                       reinterpret_cast<const std::byte*>(device.sentDevice()), sendCounts, sendAt,
                       reinterpret_cast<std::byte*>(device.receiveDevice(received)), recvCounts,
                       recvAt);
  } else {
    const PackedParticle* out = device.sentHost();
    PackedParticle* in = device.receiveHost(received);
    checkMpi(MPI_Alltoallv(out, sendCounts.data(), sendAt.data(), packedParticleType(), in,
                           recvCounts.data(), recvAt.data(), packedParticleType(), jobComm()),
             "MPI_Alltoallv");
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

int RankShare::openKicks(const Clock& clock, const SimParams& p) {
  m_mac = p.mac;
  // The same on every rank: rebalanceDue's reductions run on all or none.
  if (m_ranks > 1 && clock.synchronized() && m_workValid && (m_settling > 0 || rebalanceDue())) {
    decompose();
  }
  int deepest = m_local->openKicks(clock, p);
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
    slowest.interactions.cell += p.interactions.cell;
    slowest.interactions.particle += p.interactions.particle;
    slowest.interactions.targets += p.interactions.targets;
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
