#pragma once
// A backend holds the particles and runs the stages of a step on them. The order of the
// stages lives once, in Simulation; each backend (CPU reference, CUDA) implements them on
// its own data with the per-element math of sim/common.

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sim/clock.h"
#include "sim/common/draw.h"
#include "sim/diagnostics.h"
#include "sim/direct_sum.h"
#include "sim/let.h"
#include "sim/orb.h"
#include "sim/params.h"
#include "sim/particles.h"
#include "sim/profile.h"
#include "sim/tree_statistics.h"

namespace bhviz::sim {

/// Which particles get new forces.
enum class ForceTargets { Active, All };

/// Whether an evaluation computes the targets' potentials (accPot.w): where every particle is a
/// target, that is all of them, or a substep at whose end every particle's step ends (every
/// shared step, a block step's last substep). Elsewhere each target keeps the potential it had.
/// Its readers take it where every step ends: the diagnostics (the window's plot samples there),
/// snapshots and --dump-accel (both finish the block step first). A block substep that ends only
/// some steps saves the potential's share of the walk (GPU: 3 of the ~38 instructions an M2P
/// takes in the walk's loop). A simulation whose potentials are wanted only now and then (the
/// window's, Simulation::setPotentialOnDemand) skips them at the other step ends too
/// (Backend::computesPotential).
inline bool evaluatesPotential(const Clock& clock, ForceTargets targets) {
  return targets == ForceTargets::All || clock.synchronized();
}

/// The ranges a backend runs, part of its interface: validate(params, limits) checks them, the
/// command line refuses a value beyond them before any work, and the UI's sliders stop there.
struct BackendLimits {
  int maxLeafSize = kMaxLeafSize;    ///< largest N_leaf [particles]
  int maxGroupSize = kMaxGroupSize;  ///< largest N_group [particles]
  bool mutualP2p = true;             ///< P2pMode::Mutual is implemented
};

/// What a backend is, for the code that drives it: nothing outside sim/ compares names or casts
/// a backend to find these out.
struct BackendTraits {
  std::string_view name;  ///< "cpu" or "cuda": for people (logs, stats, panels), not for branching
  BackendLimits limits;
  /// The state lives in device memory: deviceAccess() is not null, and referenceSum() sums there.
  bool onDevice = false;
  /// An N that one frame of the window steps at an interactive rate; 0: the scenario's own.
  std::size_t interactiveParticles = 0;
  /// Backend::setPotentialWanted is obeyed (the distributed backend hands its evaluations on to
  /// the ranks, which compute the potentials at every step end: Simulation stays off demand).
  bool potentialOnDemand = true;
  /// Backend::rebuildAroundTargets does more than refit (RebuildTuner weighs it then).
  bool rebuildsAroundTargets = false;
};

/// The cover of a rebuild around the targets (Backend::rebuildAroundTargets): a cell holding
/// targets is split into its children while they are fewer than this share of its particles
/// (docs/BENCHMARKS.md, "A tree rebuilt around the targets": 0.25 kept 99 % of what a whole
/// rebuild wins over a refit on M31 at 10^6, sorting 24 % of the particles again).
inline constexpr double kAroundTargetsShare = 0.25;

/// Throws InvalidParameter (as validate(p) does) when `p` is out of sim's ranges or the backend's.
void validate(const SimParams& p, const BackendLimits& limits, std::string_view backendName);

/// The tree and groups of the last force evaluation in numbers.
struct TreeCensus {
  std::size_t cells = 0;   ///< cells of the octree [1]
  int levels = 0;          ///< levels of the octree (0: no tree built yet) [1]
  std::size_t groups = 0;  ///< walk groups [1]
};

/// A backend's particle arrays in device memory, read-only, for a reader on the same device
/// (the app's CUDA–GL bridge). Key order, as after the last build; valid until the backend's
/// next step or upload.
struct DeviceArrays {
  const Vec4* posMass = nullptr;      ///< x, y, z [length]; w = mass [mass]
  const Vec4* vel = nullptr;          ///< [length/time]
  const std::uint8_t* tag = nullptr;  ///< component and galaxy (makeTag)
  const std::uint8_t* bin = nullptr;  ///< time bin
  const std::uint32_t* id = nullptr;  ///< particle ids
  std::size_t n = 0;                  ///< number of particles
  void* stream = nullptr;  ///< the backend's cudaStream_t: work queued on it follows the step
};

/// What a backend whose state lives in device memory offers a reader on the same device.
class DeviceAccess {
 public:
  virtual ~DeviceAccess() = default;
  virtual DeviceArrays particles() const = 0;
  /// Writes the boxes of `q` (Backend::boxCount(q) of them) into device memory `out`, on the
  /// particles' stream (no wait; launch errors are thrown).
  virtual void writeBoxes(const BoxQuery& q, DrawBox* out) const = 0;
};

/// The LETs of a backend whose trees live in device memory, kept there as bytes: cut into a
/// send buffer, moved device to device (NCCL) or through pinned host memory (MPI), and walked
/// where they arrive, without the host building, serialising or parsing them. Pointers named
/// "device" are device memory of the backend's GPU; stream() orders the work on them.
class DeviceLets {
 public:
  virtual ~DeviceLets() = default;
  /// Empties the send buffer.
  virtual void clearSent() = 0;
  /// Cuts the built tree's LET for `region` (ForceParts::essentialTree's) onto the end of the
  /// send buffer; queued on stream(). Zero sizes: nothing to send.
  virtual LetSize appendCut(const TargetRegion& region) = 0;
  /// The send buffer's bytes: every LET appended since clearSent, end to end.
  virtual const std::byte* sentDevice() const = 0;
  /// The same bytes copied to pinned host memory (waits for the cuts); valid until the next cut.
  virtual const std::byte* sentHost() = 0;
  /// A receive buffer of `bytes` in device memory, or in pinned host memory to be uploaded by
  /// uploadReceived(); each valid until the next call of either.
  virtual std::byte* receiveDevice(std::size_t bytes) = 0;
  virtual std::byte* receiveHost(std::size_t bytes) = 0;
  /// Queues on stream() the copy of the host receive buffer into the device one.
  virtual void uploadReceived() = 0;
  /// Walks the built groups over the LET at `offset` of the device receive buffer, `bytes`
  /// long: adds to accPot of the targets (walkImported's). Throws std::invalid_argument on bytes
  /// that are not a whole, consistent LET.
  virtual LetSize walkReceived(std::size_t offset, std::size_t bytes) = 0;
  /// The backend's cudaStream_t.
  virtual void* stream() const = 0;
  /// A second stream of the same GPU (a cudaStream_t) on which LETs move beside the walk,
  /// ordered with stream() by the two calls below.
  virtual void* exchangeStream() = 0;
  /// Work queued on the exchange stream from now on waits for the cuts queued on stream().
  virtual void exchangeAfterCuts() = 0;
  /// Work queued on stream() from now on waits for what is queued on the exchange stream.
  virtual void walkAfterExchange() = 0;
  /// The GPU, unique on its host (its PCI bus id): ranks that share one cannot use NCCL.
  virtual std::string deviceId() const = 0;
};

/// The particle exchange of a backend whose particles live in device memory: the particles that
/// leave are packed there (PackedParticle), move device to device (NCCL) or through pinned host
/// memory (MPI), and are placed where they arrive; the host learns only how many. Pointers named
/// "device" are device memory of the backend's GPU; stream() orders the work on them.
class DeviceExchange {
 public:
  virtual ~DeviceExchange() = default;
  /// ForceParts::strays and gather at once: packs the particles that lie outside domain `rank`
  /// of `cuts` into the send buffer, grouped by the domain they lie in (ascending, each group in
  /// the particles' order). Returns how many go to each rank (blocking).
  virtual std::vector<int> packLeavers(const OrbCuts& cuts, int rank) = 0;
  /// The send buffer: the particles packLeavers packed.
  virtual const PackedParticle* sentDevice() const = 0;
  /// The same copied to pinned host memory (waits for the packing); valid until the next pack.
  virtual const PackedParticle* sentHost() = 0;
  /// A receive buffer for `count` particles in device memory, or in pinned host memory; the one
  /// asked for last is what placeArrivals reads.
  virtual PackedParticle* receiveDevice(std::size_t count) = 0;
  virtual PackedParticle* receiveHost(std::size_t count) = 0;
  /// ForceParts::exchange of the packed particles for the received ones, on stream() after
  /// whatever was queued there to fill the receive buffer (blocking).
  virtual void placeArrivals() = 0;
  /// The backend's cudaStream_t.
  virtual void* stream() const = 0;
};

/// A force evaluation in parts, what the distributed backend (sim/dist/) needs of each rank's
/// local backend: the local tree is built first, the essential trees other ranks need are cut
/// from it, and the trees other ranks sent are walked by the local groups after the local tree.
/// computeForces(...) is build(...) then walkLocal().
class ForceParts {
 public:
  virtual ~ForceParts() = default;
  /// bbox → keys → sort → tree → moments → groups of the targets; no walk yet. With a frame
  /// (holding every particle), the tree's cells are that cube's octree cells, as on every rank;
  /// with the run's `domains` too (their cuts sided in that frame), a cell whose cube several
  /// domains meet is one part of it, and its opening value takes its share (paramOfParts).
  virtual void build(const Clock& clock, const SimParams& p, ForceTargets targets, bool oldAccValid,
                     const KeyFrame* frame = nullptr, const OrbCuts* domains = nullptr) = 0;
  /// The bounding box of the particles as they are now (before build: where the frame must
  /// reach).
  virtual Box bounds() const = 0;
  /// Where the built groups are (the region other ranks cut their LETs for).
  virtual TargetRegion targetRegion() const = 0;
  /// The LET of the built tree for another rank's region, with build()'s MAC.
  virtual LetTree essentialTree(const TargetRegion& region) const = 0;
  /// Walks the built groups over the local tree: writes accPot of the targets.
  virtual void walkLocal() = 0;
  /// walkLocal in two halves, so that the caller's host work (a rank's MPI exchange) runs while
  /// the device walks: begin launches it, end takes its counts (the CUDA backend queues their
  /// copy, read with the profile). A backend that computes on the host walks in begin.
  virtual void beginWalkLocal() { walkLocal(); }
  virtual void endWalkLocal() {}
  /// Walks the built groups over another rank's LET: adds to accPot of the targets.
  virtual void walkImported(const LetTree& let) = 0;
  /// walkLocal and walkImported of each LET, as the backend does them best: here one after the
  /// other; the CPU backend merges the LETs into its tree first and walks that one tree
  /// (mergeEssentialTree: fewer interactions, as accurate). The trees must share the build's
  /// key frame.
  virtual void walkLocalAndImported(const std::vector<LetTree>& lets) {
    walkLocal();
    for (const LetTree& let : lets) walkImported(let);
  }
  /// Per particle, in the current order: its interactions (cells and particles) in the walks
  /// since the last build; meaningful for the particles that were targets of that build.
  virtual std::vector<std::uint32_t> work() const = 0;
  /// The sum of work() over the particles.
  virtual std::uint64_t workSum() const {
    std::uint64_t sum = 0;
    for (std::uint32_t w : work()) sum += w;
    return sum;
  }
  /// The LETs as device bytes (essentialTree and walkImported without the host); null where
  /// the trees live on the host.
  virtual DeviceLets* deviceLets() { return nullptr; }

  // The decomposition where the particles are: the ORB counts there, and only the particles
  // that change rank leave (through the host here, or DeviceExchange).

  /// The ORB's view of the particles (sim/orb.h), each weighed by orbWeight of its work since
  /// the last build, or 1 each with `unitWeights`.
  virtual std::unique_ptr<OrbParticles> orbParticles(bool unitWeights) const = 0;
  /// The particles that now lie outside domain `rank` of `cuts` (they moved out since the
  /// decomposition), ascending (current order), and the domain each lies in: what a rank sends
  /// on before each evaluation, so that its tree never reaches into another rank's domain (a
  /// few such particles give a tree sparse cells as wide as the domain face, which every group
  /// opens: +2.3 % interactions after one step of a 1 M merger; docs/ARCHITECTURE.md).
  virtual void strays(const OrbCuts& cuts, int rank, std::vector<std::uint32_t>& index,
                      std::vector<int>& domain) const = 0;
  /// Copies of the particles at `indices` (current order).
  virtual Particles gather(const std::vector<std::uint32_t>& indices) const = 0;
  /// Removes the particles at `leaving` (current order, ascending, distinct) and adds
  /// `arriving`, where planExchange (sim/particles.h) places them: the staying particles keep
  /// their slots but those beyond the new end, which fill the holes. The tree and the work of
  /// the last build are gone.
  virtual void exchange(const std::vector<std::uint32_t>& leaving, const Particles& arriving) = 0;
  /// strays, gather and exchange without the host (DeviceExchange); null where the particles
  /// live on the host.
  virtual DeviceExchange* deviceExchange() { return nullptr; }
};

/// What a backend's tree was built with, so that a refit can tell whether it still fits.
struct TreeShape {
  bool built = false;            ///< a tree of these particles exists (in their current order)
  int nLeaf = 0;                 ///< its N_leaf [particles]
  Curve curve = Curve::Hilbert;  ///< its keys' curve
  std::size_t particles = 0;     ///< how many it holds [1]
  bool fits(const SimParams& p, std::size_t n) const {
    return built && nLeaf == p.nLeaf && curve == p.curve && particles == n;
  }
};

/// One rank of a distributed run, for the statistics and the Performance panel.
struct RankReport {
  std::uint64_t particles = 0;  ///< particles the rank holds [1]
  StepProfile last;             ///< the last substep
  StepProfile total;            ///< summed since the start
  std::uint64_t work = 0;       ///< interactions (cells + particles) since the start [1]
  std::uint64_t letCellsSent = 0, letParticlesSent = 0, letBytesSent = 0;
  std::uint64_t letCellsReceived = 0, letParticlesReceived = 0, letBytesReceived = 0;
  std::uint64_t decompositions = 0;  ///< ORB decompositions and particle exchanges [1]
  std::uint64_t particlesSent = 0;   ///< particles the exchanges sent to other ranks [1]
  /// Wall time of the domains stage's two parts since the start: the ORB's cuts (at the
  /// decompositions) and the particle exchanges (after each decomposition, and the strays before
  /// each evaluation) [ms].
  double orbMs = 0.0, exchangeMs = 0.0;
  Box domain;                         ///< the rank's ORB domain
  bool letsOverNccl = false;          ///< the LETs move GPU to GPU (NCCL), not through the host
  std::uint64_t deviceBytesPeak = 0;  ///< Backend::deviceBytesPeak of the rank's backend [bytes]
};

/// A kept copy of a backend's state (Backend::keepState): on the host, or in the backend's own
/// device memory where it fits.
class BackendState {
 public:
  virtual ~BackendState() = default;
  virtual std::size_t bytes() const = 0;  ///< memory it holds [bytes]
  virtual bool onDevice() const = 0;
  virtual std::size_t size() const = 0;  ///< particles [1]
};

/// The host copy: the particles in the backend's order, as download() gave them.
class HostState final : public BackendState {
 public:
  explicit HostState(Particles p) : m_p(std::move(p)) {}
  std::size_t bytes() const override { return m_p.size() * kParticleBytes; }
  bool onDevice() const override { return false; }
  std::size_t size() const override { return m_p.size(); }
  const Particles& particles() const { return m_p; }

 private:
  Particles m_p;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendTraits traits() const = 0;
  std::string_view name() const { return traits().name; }

  /// Replaces the state (the particles may come in any order).
  virtual void upload(const Particles& p) = 0;
  /// A copy of the state, in the backend's current order (key order after a build).
  virtual void download(Particles& p) const = 0;
  virtual std::size_t size() const = 0;
  /// The most device memory the backend's process held at once so far [bytes] (0 on the host):
  /// what a run of this size needs, beyond the CUDA context.
  virtual std::size_t deviceBytesPeak() const { return 0; }
  /// The particles whose id is a multiple of `stride` (everyNthId), in the backend's order: what
  /// a view draws when all of them would be too many. The default downloads every particle.
  virtual void downloadSample(Particles& p, std::uint32_t stride) const {
    download(p);
    if (stride > 1) p = everyNthId(p, stride);
  }
  /// A copy of everything the next substep reads (every particle array, in this order), to
  /// go back to with restoreState: stepping on from it gives the same bits as from the
  /// original. `deviceBytesFree`: a device backend keeps it in its own memory when it fits
  /// below this; else (and on the host) a HostState.
  virtual std::unique_ptr<BackendState> keepState(std::size_t deviceBytesFree) const {
    (void)deviceBytesFree;
    Particles p;
    download(p);
    return std::make_unique<HostState>(std::move(p));
  }
  /// Back to a state kept by this backend (or any HostState).
  virtual void restoreState(const BackendState& state) {
    const auto* host = dynamic_cast<const HostState*>(&state);
    if (host == nullptr) throw std::invalid_argument("restoreState: a state of another backend");
    upload(host->particles());
  }

  /// For each particle active at clock.tick: choose its new bin (common/timestep.h), then kick
  /// its velocity by a·dt/2 of that bin. Returns the deepest occupied bin afterwards.
  virtual int openKicks(const Clock& clock, const SimParams& p) = 0;
  /// Moves every particle by v·dt.
  virtual void drift(float dt) = 0;
  /// Rebuilds the tree and computes accelerations of the targets, and their potentials where
  /// computesPotential(clock, targets) (else each keeps its own).
  /// `oldAccValid`: accPot holds accelerations from an earlier evaluation (acceleration MAC).
  virtual void computeForces(const Clock& clock, const SimParams& p, ForceTargets targets,
                             bool oldAccValid) = 0;
  /// As computeForces, on the last evaluation's tree refitted: its particle order and topology
  /// kept, its moments, tight boxes and opening values made from the current positions. The
  /// forces keep the MAC's bound (it reads the tight boxes); only the tree's compactness ages as
  /// the particles move, which costs walk time (RebuildTuner weighs it). Rebuilds instead and
  /// returns false where it holds no tree of these particles with p's N_leaf and curve; the
  /// default always does.
  virtual bool refitForces(const Clock& clock, const SimParams& p, ForceTargets targets,
                           bool oldAccValid) {
    computeForces(clock, p, targets, oldAccValid);
    return false;
  }
  /// As refitForces, with the tree made fresh where the targets are: the cells covering them
  /// (from the smallest holding every target down, split while their targets are fewer than
  /// kAroundTargetsShare of their particles: cpu::coverTargets) have their particles keyed again
  /// (in the last build's frame, clamped into their cell) and sorted within their ranges, and
  /// the topology is built from those keys; outside the cover it is the last tree's. The forces
  /// are a rebuild's near the targets for the cost of sorting the particles around them.
  /// Returns what refitForces returns; the default refits (traits().rebuildsAroundTargets).
  virtual bool rebuildAroundTargets(const Clock& clock, const SimParams& p, ForceTargets targets,
                                    bool oldAccValid) {
    return refitForces(clock, p, targets, oldAccValid);
  }
  /// What a refit would walk, without the walk: the last tree refitted to the particles'
  /// current positions, and every `sampleEvery`-th of the groups this evaluation makes on it (by
  /// their index, so every backend samples the same ones) walked into scratch memory, the
  /// particles' state untouched and none of it in the profile. Returns whether it probed (false
  /// where the backend cannot: no tree of these particles with p's N_leaf and curve, the mutual
  /// near field, or the default); refitProbe() tells the result once the evaluation's wait has
  /// passed, so that no probe waits for the device. The rebuild tuner's probe of the aging
  /// (RebuildTuner::recordProbe): the caller evaluates the forces next, rebuilding.
  virtual bool probeRefit(const Clock& clock, const SimParams& p, ForceTargets targets,
                          bool oldAccValid, std::uint32_t sampleEvery) {
    (void)clock, (void)p, (void)targets, (void)oldAccValid, (void)sampleEvery;
    return false;
  }
  /// The last probeRefit's sample: its interactions a target (cells and particles) and what the
  /// probe took [ms]; negative where nothing was probed. Read once, after the backend's wait
  /// (Simulation::recordEvaluation).
  struct RefitProbe {
    double interactionsPerTarget = -1.0;
    double ms = -1.0;
  };
  virtual RefitProbe refitProbe() { return {}; }
  /// For each particle active at clock.tick: v += a·dt/2 of its bin.
  virtual void closeKicks(const Clock& clock) = 0;
  /// Whether the evaluations at which every step ends compute the potentials (true until told
  /// otherwise; those of every particle always do). Simulation::setPotentialOnDemand clears it
  /// for the step ends nobody reads them at, where traits().potentialOnDemand.
  void setPotentialWanted(bool wanted) { m_potentialWanted = wanted; }
  /// The potentials of the last evaluation's targets, made by walking its tree and groups again
  /// with its settings: the bits that evaluation would have written had it computed them (the
  /// acceleration MAC reads the group's |a_old| kept from then; the mutual near field walks
  /// again as the plain one, to fp32 rounding), its accelerations untouched, no
  /// work or interactions counted. False, with nothing changed, where the backend cannot: the
  /// particles moved or were replaced since (drift, upload, restore, exchange), it was a
  /// distributed evaluation, or the backend keeps no such walk (the default).
  virtual bool recomputePotentials() { return false; }
  /// Ids of up to `max` particles with a non-finite position, velocity or acceleration.
  virtual std::vector<std::uint32_t> nonFiniteIds(std::size_t max) const = 0;

  /// Energies, momenta and the bin census of the current state (computeDiagnostics's rules).
  /// The default copies the state to the host; backends override it to sum where the data is.
  virtual Diagnostics diagnostics(const Clock& clock) const {
    Particles p;
    download(p);
    return computeDiagnostics(p, clock);
  }

  /// Timings and interaction counts since the last resetProfile().
  virtual const StepProfile& profile() const = 0;
  virtual void resetProfile() = 0;

  // ---- Exports: what the app may draw and measure, whatever the backend --------------------

  virtual TreeCensus treeCensus() const = 0;
  /// Histograms of the last force evaluation's tree (cells per level, leaves by occupancy) and
  /// of its targets' interactions, counted where the tree lives (sim/tree_statistics.h).
  virtual TreeStatistics treeStatistics() const = 0;
  /// The number of boxes `q` exports (levels beyond the tree's are left out).
  virtual std::size_t boxCount(const BoxQuery& q) const = 0;
  /// The boxes of `q` on the host.
  virtual std::vector<DrawBox> boxes(const BoxQuery& q) const = 0;
  /// Not null when the state lives in device memory (traits().onDevice).
  virtual const DeviceAccess* deviceAccess() const { return nullptr; }
  /// The state itself, in key order, when it lives in host memory (read without a copy;
  /// valid until the next step or upload); null otherwise.
  virtual const Particles* hostParticles() const { return nullptr; }

  /// A new, empty backend of the same kind on the same device, for n particles: the scratch of
  /// the accuracy meter and the sweeps.
  virtual std::unique_ptr<Backend> makeScratch(std::size_t n) const = 0;
  /// Exact direct summation where this backend computes: the accuracy reference. Empty: the
  /// CPU's directSum.
  virtual ReferenceSum referenceSum() const { return {}; }

  // ---- Distribution ---------------------------------------------------------------------------

  /// The force evaluation in parts; null for a backend that cannot serve as a rank's local one.
  virtual ForceParts* forceParts() { return nullptr; }
  /// One report per rank of a distributed run (in rank order); empty for one process.
  virtual std::vector<RankReport> rankReports() const { return {}; }

 protected:
  /// What a backend's evaluation decides: evaluatesPotential's rule, within setPotentialWanted.
  bool computesPotential(const Clock& clock, ForceTargets targets) const {
    return targets == ForceTargets::All ||
           (m_potentialWanted && evaluatesPotential(clock, targets));
  }

 private:
  bool m_potentialWanted = true;
};

std::unique_ptr<Backend> makeCpuBackend();

/// Peak host memory of a run on the CPU backend per particle (initial conditions, the
/// simulation's copies, keys, sort buffers and tree): 194 B measured at N = 10^6 (peak RSS of a
/// one-step Plummer run), rounded up.
inline constexpr double kCpuPeakBytesPerParticle = 256.0;

}  // namespace bhviz::sim
