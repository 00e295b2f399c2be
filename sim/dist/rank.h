#pragma once
// Private to sim/dist/: one rank's share of a distributed simulation. Every method is
// collective (each rank calls it, in the same order); the leader's arguments and results are
// the whole simulation's, the followers' are empty.

#include <chrono>
#include <memory>
#include <vector>

#include "sim/backend.h"
#include "sim/dist/dist.h"
#include "sim/dist/nccl_link.h"

namespace bhviz::sim::dist {

class RankShare {
 public:
  RankShare(std::unique_ptr<Backend> local, const DistSettings& settings);

  /// Leader: `all` every particle; followers: null. Spreads them over the ranks (ORB by count).
  void upload(const Particles* all);
  /// Leader: fills `all` with every rank's particles (rank by rank); followers: null.
  void download(Particles* all);
  /// download of the particles whose id is a multiple of stride, each rank sending only those.
  void downloadSample(Particles* all, std::uint32_t stride);
  std::uint64_t size() const { return m_size; }

  int openKicks(const Clock& clock, const SimParams& p);
  void drift(float dt);
  void computeForces(const Clock& clock, const SimParams& p, ForceTargets targets,
                     bool oldAccValid);
  void closeKicks(const Clock& clock);
  /// Leader: up to max ids from every rank.
  std::vector<std::uint32_t> nonFiniteIds(std::size_t max);
  /// Leader: the sums over every rank.
  Diagnostics diagnostics(const Clock& clock);
  /// Leader: per stage the slowest rank, interactions summed.
  StepProfile profile();
  void resetProfile();
  /// Leader: one report per rank.
  std::vector<RankReport> reports();
  /// Leader: every rank's tree statistics summed.
  TreeStatistics treeStatistics();

  /// Every rank's ORB domain from the last decomposition (known on every rank).
  const std::vector<Box>& domains() const { return m_domains; }

  Backend& local() { return *m_local; }
  const Backend& local() const { return *m_local; }

 private:
  /// ORB over every rank's particles (weights: measured work when an evaluation of every
  /// particle has measured it, else 1), then the particle exchange. More than one rank only.
  void decompose();
  /// Sends the particles that moved out of this rank's domain since the decomposition to the
  /// ranks whose domains they are in now (DistSettings::migrate). More than one rank only.
  void migrate();
  /// Sends the local particles `leaving` (ascending) to the ranks `to` through the host; keeps
  /// what arrives.
  void exchangeOnHost(const std::vector<std::uint32_t>& leaving, const std::vector<int>& to);
  /// Sends the particles outside this rank's domain of `cuts` to the ranks whose domains they
  /// lie in, packed and placed on the device: GPU to GPU (NCCL), or through pinned host memory.
  void exchangeOnDevice(DeviceExchange& device, const OrbCuts& cuts);
  bool rebalanceDue();
  /// The bounding box of every rank's particles (a reduction).
  Box globalBounds(const Box& local) const;
  /// The frame this evaluation's trees use: m_frame while it holds every particle, else a new
  /// one of the same kind around them.
  const KeyFrame* treeFrame();
  /// Whether the trees' frame should have its middle plane on the first cut, for the MAC of the
  /// last step (dist::frameOnFirstCut).
  bool frameOnCut() const;
  /// The ORB's settings for a decomposition of `root`: the frame's kind (frameOnCut) and margin.
  OrbSettings orbSettingsFor(const Box& root) const;
  StepProfile combinedProfile() const;

  // computeForces' essential trees, in three parts around the local walk.
  struct LetRound;  // rank.cpp
  /// Cuts a LET for every other rank with targets (every rank's region, `mine` among them,
  /// gathered first).
  void cutLets(LetRound& round, const TargetRegion& mine);
  /// Exchanges the sizes, then starts moving the LETs (NCCL, or MPI from the host).
  void startLetExchange(LetRound& round);
  /// A rank on a GPU, once they arrived (the host path waited already): walks the local groups
  /// over each, in device memory.
  void walkReceivedLets(const LetRound& round);
  /// A rank on the host, once they arrived: parses them and walks its tree with them merged in
  /// (DistSettings::mergeLets), or its tree and then each.
  void walkLocalAndReceivedLets(const LetRound& round);

  std::unique_ptr<Backend> m_local;
  ForceParts* m_parts = nullptr;
  DistSettings m_settings;
  int m_rank = 0, m_ranks = 1;
  std::uint64_t m_size = 0;  ///< particles on every rank together

  /// The key frame of every rank's tree: the ORB's cuts lie on its octree planes, so no cell
  /// finer than a cut's plane is cut by a domain face (K > 1; kept while it holds everyone).
  KeyFrame m_frame{{0, 0, 0}, 0.0f};
  bool m_frameOnCut = false;  ///< m_frame's middle plane is the first cut (set by decompose)
  /// The MAC of the last step (openKicks, computeForces): it chooses the frame (frameOnCut).
  MacKind m_mac = SimParams{}.mac;
  std::vector<Box> m_domains;  ///< every rank's, from the last decomposition
  OrbCuts m_cuts;              ///< the last decomposition's cuts (they place any point)
  /// An evaluation of every particle has measured the work since the last decomposition.
  bool m_workValid = false;
  /// Decompositions by measured work still due at the next full steps, whatever the threshold:
  /// the start's cut counts particles, and a particle's work depends on the domains it was
  /// measured in, so the cuts by work settle over two (a 20 k merger on three ranks: 1.086
  /// after the first, 1.011 after the second). Any decomposition without measured work (today
  /// the start's) arms them again; they bypass the threshold and the ledger.
  int m_settling = 0;
  /// Every rank's work in the first evaluation measured after the last decomposition (0: not
  /// measured yet): work grown past it by the threshold decomposes again.
  std::uint64_t m_workAfterDecomposition = 0;
  /// What the imbalance and growth cost since the last decomposition, against its cost.
  RebalanceLedger m_ledger;
  double m_cutMs = 0.0;  ///< this rank's wall time of the last decomposition [ms]
  std::chrono::steady_clock::time_point m_lastCheck;  ///< the last decomposition or check
  StepProfile m_dist;   ///< the distributed stages (domains, let) since resetProfile
  RankReport m_report;  ///< this rank's, totals up to the last resetProfile
  std::vector<std::byte> m_letOut, m_letIn;  ///< computeForces' LET buffers, sent and received
  Particles m_sample;  ///< downloadSample's share of this rank, kept from frame to frame
  /// The LETs' way GPU to GPU, where every rank has a GPU of its own (null: through the host).
  std::unique_ptr<NcclLink> m_nccl;
};

}  // namespace bhviz::sim::dist
