#pragma once
// Many processes, one simulation: `mpirun -np K bhviz …` runs K ranks. Rank 0, the leader,
// runs the program as always (command line, window, outputs); its simulation's backend is a
// distributed one (makeDistributedBackend) that sends each call to every rank as a command
// and runs it everywhere on each rank's share of the particles: ORB domains (orb.h), particle
// exchange, local essential trees (sim/let.h), reductions. The other ranks, followers, do
// nothing but serve those commands. A plain `bhviz` never starts MPI.
//
// This header is MPI-free: sim/dist/ is the only place that includes <mpi.h>, in its .cpp files.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "sim/backend.h"
#include "sim/dist/orb.h"

namespace bhviz::sim::dist {

/// The kind of backend each rank runs on its share (the leader's, on every rank).
enum class LocalKind : std::uint8_t { Cpu = 0, Cuda = 1 };

/// Makes a rank's local backend for about n particles (the app's backend choice and checks).
using LocalFactory = std::function<std::unique_ptr<Backend>(LocalKind kind, std::size_t n)>;

/// The particles a rank of K sizes its backend for, out of n: its share with a tenth more, for
/// domains balanced by work rather than counts (a 16 M merger's ranks held 0.98–1.03 of the
/// mean on four GPUs, a 480 M merger's 0.993–1.007 on two). The leader too: it holds the whole
/// state on the host while it spreads it, never on its device, so a run K GPUs hold is not
/// refused for not fitting on one (480 M on two H200s: docs/BENCHMARKS.md, "Past one GPU").
inline std::size_t rankShare(std::uint64_t n, int ranks) {
  const std::uint64_t share = n / static_cast<std::uint64_t>(ranks > 0 ? ranks : 1);
  return static_cast<std::size_t>(share + share / 10 + 1024);
}

/// Host memory a rank's CPU backend peaks at, per particle of its share (rankShare): its
/// particles, tree, the LETs it imports and merges. Measured 151–260 B at 8 M (merger, Milky
/// Way, Plummer; K = 2 and 3; peak RSS over the start and a step; one process's CPU backend:
/// 194 B), 2026-11-27 (docs/BENCHMARKS.md, "Host memory under mpirun").
inline constexpr double kRankCpuHostBytesPerParticle = 300.0;
/// Host memory rank 0 holds besides its own share, per particle of the whole run, while it
/// makes the initial state, cuts it and spreads it (and gathers every output). Measured 89–107 B
/// at 8 M (its peak RSS less a follower's), 2026-11-27.
inline constexpr double kLeaderHostBytesPerParticle = 130.0;

/// How the LETs of ranks whose trees live on GPUs travel (sim/dist/nccl_link.h).
enum class LetTransport : std::uint8_t {
  Auto,  ///< device to device by NCCL where every rank has a GPU of its own and NCCL loads;
         ///< else Host
  Host,  ///< copied to pinned host memory, sent by MPI, copied to the receiver's GPU
};

/// DistSettings::imbalance's default (bhviz --rebalance).
inline constexpr double kDefaultRebalance = 1.02;

/// When to decompose again (at a point where every particle is synchronised, after an
/// evaluation of every particle has measured the work): when the work's imbalance (max / mean
/// over ranks) passes `imbalance`, or every rank's work together has grown by that factor since
/// the first measurement after the last decomposition (particles wandering out of their domains
/// grow the LETs), and the time that cost since the last decomposition has reached what that
/// one cost (RebalanceLedger); 0: at every full step. Whatever it is, the start's cut (by
/// counts: nothing is measured yet) is followed by cuts by the measured work at the first two
/// full steps. The default, 1.02: with it a merger went 20 steps without a cut, a Plummer sphere
/// cut three (16 M) and five (64 M) times (two H100s; docs/BENCHMARKS.md, "Two GPUs, the LETs
/// on the device"); on four H200s, before the ledger, the threshold alone cut every ~5 steps. A
/// cut then cost 5–62 ms; on two H200s it now costs 2.0–2.3 ms at 16 M, 3–4 % of a step.
struct DistSettings {
  double imbalance = kDefaultRebalance;
  OrbSettings orb;
  LetTransport lets = LetTransport::Auto;
  /// A rank that walks on the host (the CPU backend) merges the LETs it imports into its tree
  /// and walks that one tree (mergeEssentialTree: in the plain frame a 1 M Plummer sphere on two
  /// ranks did 5.5 % fewer interactions, as accurately; with the frame on the first cut two
  /// ranks have nothing to merge, more ranks still do); false: its tree and then each LET
  /// (bench_dist --merge-lets off; tests that compare with it). The CUDA backend walks them
  /// apart either way (not built there yet).
  bool mergeLets = true;
  /// Before each evaluation, the particles that moved out of their rank's domain since the
  /// decomposition go to the rank whose domain they are in now (ForceParts::strays; the cuts
  /// stay). false: they stay until the next decomposition (bench_dist --migrate off), and their
  /// rank's tree reaches across the domain face.
  bool migrate = true;
  /// The trees' key frame has its middle plane on the ORB's first cut (frameAroundCut), so
  /// that no cell below the root straddles it; false: the particles' cube, grown by a margin
  /// (bench_dist --frame plain). The multipole MAC always takes the plain frame: the frame on
  /// the cut, up to twice as wide as the particles' cube, cost it 13 % in p99 error (one
  /// process in that frame measured the same), where the plain frame, with the cubes that
  /// domain faces cross given their parts' shares of Δ_mul (paramOfParts), matches one process.
  bool frameOnFirstCut = true;
};

/// Whether the trees' frame has its middle plane on the first cut for a run with `mac`:
/// DistSettings::frameOnFirstCut, but never for the multipole MAC.
inline bool frameOnFirstCut(const DistSettings& s, MacKind mac) {
  return s.frameOnFirstCut && mac != MacKind::Multipole;
}

class Job {
 public:
  /// Starts MPI when the environment shows that an MPI launcher started this process
  /// (OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_SIZE); otherwise returns null and MPI is never
  /// touched. Throws std::runtime_error when launched so but built without MPI (more than one
  /// rank), naming what to install.
  static std::unique_ptr<Job> startIfLaunched(int* argc, char*** argv);
  ~Job();  ///< MPI_Finalize
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  int rank() const { return m_rank; }
  int size() const { return m_size; }
  /// This rank among the ranks on its machine (0, 1, …): which of the machine's GPUs it takes.
  int localRank() const { return m_localRank; }
  /// The ranks on this rank's machine, which share its memory.
  int localSize() const { return m_localSize; }
  bool leader() const { return m_rank == 0; }

  /// Followers: serves the leader's commands until it finishes; returns the exit status the
  /// leader finished with. A failure here ends the whole job (abortJob).
  int serve(const LocalFactory& make);
  /// Leader: ends every follower's serve() with this exit status.
  void finish(int status);
  /// Whether finish() has run: the followers serve no more commands.
  bool finished() const { return m_finished; }

 private:
  Job(int rank, int size) : m_rank(rank), m_size(size) {}
  int m_rank = 0;
  int m_size = 1;
  int m_localRank = 0;
  int m_localSize = 1;
  bool m_finished = false;
};

/// The job of this process, or null when it runs alone.
Job* currentJob();

/// Leader: a backend that runs `local`'s kind on every rank of the current job, for n
/// particles. Throws std::invalid_argument when `local` cannot serve as a rank's share
/// (no Backend::forceParts()).
std::unique_ptr<Backend> makeDistributedBackend(std::unique_ptr<Backend> local, std::size_t n,
                                                const DistSettings& settings = {});

/// Ends every rank of the job now: prints "bhviz: rank R: <why>" once and calls MPI_Abort
/// (exit status 1). For a failure in the middle of a command, where the other ranks would
/// otherwise wait for this one forever.
[[noreturn]] void abortJob(const std::string& why);

}  // namespace bhviz::sim::dist
