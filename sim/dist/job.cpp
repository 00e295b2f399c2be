// The job (MPI start and end), the commands the leader sends, the followers' loop that serves
// them, and the leader's distributed backend that sends them.

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>

#include "sim/dist/dist.h"
#include "sim/dist/mpi_util.h"
#include "sim/dist/rank.h"

namespace bhviz::sim::dist {

namespace {

Job* g_job = nullptr;
MPI_Comm g_comm = MPI_COMM_NULL;

enum class Op : std::uint32_t {
  Quit,
  Create,
  Destroy,
  Upload,
  Download,
  Sample,
  OpenKicks,
  Drift,
  Forces,
  CloseKicks,
  NonFinite,
  Diagnostics,
  Profile,
  ResetProfile,
  Reports,
  TreeStatistics,
};

/// One command, as the leader broadcasts it: the operation and every argument any one takes.
struct Command {
  Op op = Op::Quit;
  std::uint32_t handle = 0;  ///< which distributed backend (the leader may hold several)
  std::int32_t value = 0;    ///< Quit: exit status; Create: LocalKind; Forces: ForceTargets
  std::uint8_t flag = 0;     ///< Forces: oldAccValid
  float dt = 0.0f;
  std::uint64_t n = 0;  ///< Create: particles; NonFinite: how many ids; Sample: the stride
  Clock clock;
  SimParams params;
  DistSettings settings;
};

void broadcast(Command& c) { checkMpi(MPI_Bcast(&c, sizeof c, MPI_BYTE, 0, g_comm), "MPI_Bcast"); }

/// Runs one command on a rank's share; the leader's results go through `out` where it has them.
void execute(const Command& c, RankShare& s) {
  switch (c.op) {
    case Op::Upload:
      s.upload(nullptr);
      break;
    case Op::Download:
      s.download(nullptr);
      break;
    case Op::Sample:
      s.downloadSample(nullptr, static_cast<std::uint32_t>(c.n));
      break;
    case Op::OpenKicks:
      s.openKicks(c.clock, c.params);
      break;
    case Op::Drift:
      s.drift(c.dt);
      break;
    case Op::Forces:
      s.computeForces(c.clock, c.params, static_cast<ForceTargets>(c.value), c.flag != 0);
      break;
    case Op::CloseKicks:
      s.closeKicks(c.clock);
      break;
    case Op::NonFinite:
      s.nonFiniteIds(c.n);
      break;
    case Op::Diagnostics:
      s.diagnostics(c.clock);
      break;
    case Op::Profile:
      s.profile();
      break;
    case Op::ResetProfile:
      s.resetProfile();
      break;
    case Op::Reports:
      s.reports();
      break;
    case Op::TreeStatistics:
      s.treeStatistics();
      break;
    default:
      throw std::logic_error("a command that is not a rank's");
  }
}

/// The leader's backend: each call is broadcast as a command, then run on its own share.
class DistBackend final : public Backend {
 public:
  DistBackend(std::unique_ptr<Backend> local, std::size_t n, const DistSettings& settings)
      : m_handle(++s_handles) {
    const LocalKind kind = local->traits().onDevice ? LocalKind::Cuda : LocalKind::Cpu;
    m_traits = local->traits();
    m_traits.name = kind == LocalKind::Cuda ? "cuda (mpi)" : "cpu (mpi)";
    m_traits.onDevice = false;  // the whole state is on no one device
    // The ranks compute the potentials at every step end (setPotentialWanted stays here).
    m_traits.potentialOnDemand = false;
    // Each evaluation is every rank's whole rebuild (no refit, no rebuild around the targets).
    m_traits.rebuildsAroundTargets = false;
    Command c = command(Op::Create);
    c.value = static_cast<std::int32_t>(kind);
    c.n = n;
    c.settings = settings;
    collective(c, [&] { m_share = std::make_unique<RankShare>(std::move(local), settings); });
  }
  ~DistBackend() override {
    // Once the job has ended, or the followers were told to quit, nobody would receive it.
    if (g_job == nullptr || g_comm == MPI_COMM_NULL || g_job->finished()) return;
    collective(command(Op::Destroy), [] {});
  }

  BackendTraits traits() const override { return m_traits; }
  void upload(const Particles& p) override {
    collective(command(Op::Upload), [&] { m_share->upload(&p); });
  }
  void download(Particles& p) const override {
    collective(command(Op::Download), [&] { m_share->download(&p); });
  }
  void downloadSample(Particles& p, std::uint32_t stride) const override {
    Command c = command(Op::Sample);
    c.n = stride;
    collective(c, [&] { m_share->downloadSample(&p, stride); });
  }
  std::size_t size() const override { return m_share->size(); }

  int openKicks(const Clock& clock, const SimParams& p) override {
    Command c = command(Op::OpenKicks);
    c.clock = clock;
    c.params = p;
    int deepest = 0;
    collective(c, [&] { deepest = m_share->openKicks(clock, p); });
    return deepest;
  }
  void drift(float dt) override {
    Command c = command(Op::Drift);
    c.dt = dt;
    collective(c, [&] { m_share->drift(dt); });
  }
  void computeForces(const Clock& clock, const SimParams& p, ForceTargets targets,
                     bool oldAccValid) override {
    Command c = command(Op::Forces);
    c.clock = clock;
    c.params = p;
    c.value = static_cast<std::int32_t>(targets);
    c.flag = oldAccValid ? 1 : 0;
    collective(c, [&] { m_share->computeForces(clock, p, targets, oldAccValid); });
  }
  void closeKicks(const Clock& clock) override {
    Command c = command(Op::CloseKicks);
    c.clock = clock;
    collective(c, [&] { m_share->closeKicks(clock); });
  }
  std::vector<std::uint32_t> nonFiniteIds(std::size_t max) const override {
    Command c = command(Op::NonFinite);
    c.n = max;
    std::vector<std::uint32_t> ids;
    collective(c, [&] { ids = m_share->nonFiniteIds(max); });
    return ids;
  }
  Diagnostics diagnostics(const Clock& clock) const override {
    Command c = command(Op::Diagnostics);
    c.clock = clock;
    Diagnostics d;
    collective(c, [&] { d = m_share->diagnostics(clock); });
    return d;
  }
  const StepProfile& profile() const override {
    collective(command(Op::Profile), [&] { m_profile = m_share->profile(); });
    return m_profile;
  }
  void resetProfile() override {
    collective(command(Op::ResetProfile), [&] { m_share->resetProfile(); });
  }
  std::vector<RankReport> rankReports() const override {
    std::vector<RankReport> reports;
    collective(command(Op::Reports), [&] { reports = m_share->reports(); });
    return reports;
  }

  // What the leader draws is its own share's tree; the scratch and the reference are one
  // process's, of the local kind.
  TreeCensus treeCensus() const override { return m_share->local().treeCensus(); }
  // The statistics, though, are of every rank's tree, summed.
  TreeStatistics treeStatistics() const override {
    TreeStatistics s;
    collective(command(Op::TreeStatistics), [&] { s = m_share->treeStatistics(); });
    return s;
  }
  std::size_t boxCount(const BoxQuery& q) const override {
    return m_share->local().boxCount(q) + (q.domains ? m_share->domains().size() : 0);
  }
  std::vector<DrawBox> boxes(const BoxQuery& q) const override {
    std::vector<DrawBox> out = m_share->local().boxes(q);
    if (q.domains) {
      const std::vector<Box>& d = m_share->domains();
      for (std::size_t r = 0; r < d.size(); ++r) {
        out.push_back(drawBox(d[r], q.domainColour[r % q.domainColour.size()]));
      }
    }
    return out;
  }
  std::unique_ptr<Backend> makeScratch(std::size_t n) const override {
    return m_share->local().makeScratch(n);
  }
  ReferenceSum referenceSum() const override { return m_share->local().referenceSum(); }

 private:
  Command command(Op op) const {
    Command c;
    c.op = op;
    c.handle = m_handle;
    return c;
  }
  /// Broadcasts the command and runs `body` (this rank's part of it). A failure after the
  /// broadcast would leave the followers waiting in the command: it ends the job instead.
  template <typename Body>
  void collective(Command c, Body&& body) const {
    try {
      broadcast(c);
      body();
    } catch (const std::exception& e) {
      abortJob(e.what());
    }
  }

  static inline std::uint32_t s_handles = 0;
  std::uint32_t m_handle;
  BackendTraits m_traits;
  std::unique_ptr<RankShare> m_share;
  mutable StepProfile m_profile;
};

/// Ranks on one host share its cores: unless OMP_NUM_THREADS says otherwise, each takes its
/// part (OpenMPI tells the ranks on this host), so K ranks do not run K × cores threads.
void shareCores() {
  if (std::getenv("OMP_NUM_THREADS") != nullptr) return;
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const int ranksHere = local != nullptr ? std::max(1, std::atoi(local)) : 1;
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  omp_set_num_threads(std::max(1, cores / ranksHere));
}

bool launchedByMpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

}  // namespace

MPI_Comm jobComm() { return g_comm; }

std::unique_ptr<Job> Job::startIfLaunched(int* argc, char*** argv) {
  if (!launchedByMpirun()) return nullptr;
  int provided = 0;
  checkMpi(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  checkMpi(MPI_Comm_dup(MPI_COMM_WORLD, &g_comm), "MPI_Comm_dup");
  int rank = 0, size = 1;
  MPI_Comm_rank(g_comm, &rank);
  MPI_Comm_size(g_comm, &size);
  shareCores();
  std::unique_ptr<Job> job(new Job(rank, size));
  MPI_Comm here = MPI_COMM_NULL;  // the ranks that share this machine's memory
  checkMpi(MPI_Comm_split_type(g_comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &here),
           "MPI_Comm_split_type");
  MPI_Comm_rank(here, &job->m_localRank);
  MPI_Comm_size(here, &job->m_localSize);
  MPI_Comm_free(&here);
  g_job = job.get();
  return job;
}

Job::~Job() {
  if (leader() && !m_finished) finish(1);
  g_job = nullptr;
  MPI_Comm_free(&g_comm);
  g_comm = MPI_COMM_NULL;
  MPI_Finalize();
}

Job* currentJob() { return g_job; }

namespace {

/// The commands a follower serves before it fails as a test asked (BHVIZ_TEST_FAIL_RANK = its
/// rank, BHVIZ_TEST_FAIL_AFTER = the count, default 50): how DistCli.ThrowingRankEndsTheJob
/// makes a rank throw mid-run, as one whose backend fails would. -1: never.
long testFailureAfter(int rank) {
  const char* r = std::getenv("BHVIZ_TEST_FAIL_RANK");
  if (r == nullptr || std::strtol(r, nullptr, 10) != rank) return -1;
  const char* after = std::getenv("BHVIZ_TEST_FAIL_AFTER");
  return after != nullptr ? std::strtol(after, nullptr, 10) : 50;
}

}  // namespace

int Job::serve(const LocalFactory& make) {
  std::map<std::uint32_t, std::unique_ptr<RankShare>> shares;
  const long failAfter = testFailureAfter(m_rank);
  for (long served = 0;; ++served) {
    Command c;
    try {
      broadcast(c);
      if (served == failAfter) {
        throw std::runtime_error("failed on purpose after " + std::to_string(served) +
                                 " commands (BHVIZ_TEST_FAIL_RANK)");
      }
      switch (c.op) {
        case Op::Quit:
          return c.value;
        case Op::Create:
          shares[c.handle] = std::make_unique<RankShare>(
              make(static_cast<LocalKind>(c.value), rankShare(c.n, m_size)), c.settings);
          break;
        case Op::Destroy:
          shares.erase(c.handle);
          break;
        default: {
          const auto it = shares.find(c.handle);
          if (it == shares.end()) throw std::logic_error("a command for a backend never made");
          execute(c, *it->second);
        }
      }
    } catch (const std::exception& e) {
      abortJob(e.what());
    }
  }
}

void Job::finish(int status) {
  if (!leader() || m_finished) return;
  m_finished = true;
  Command c;
  c.op = Op::Quit;
  c.value = status;
  broadcast(c);
}

std::unique_ptr<Backend> makeDistributedBackend(std::unique_ptr<Backend> local, std::size_t n,
                                                const DistSettings& settings) {
  if (g_job == nullptr || !g_job->leader()) {
    throw std::logic_error("makeDistributedBackend needs the leader of a running job");
  }
  if (local->forceParts() == nullptr) {
    throw std::invalid_argument(std::string("the ") + std::string(local->name()) +
                                " backend cannot run under mpirun yet; use --backend cpu");
  }
  return std::make_unique<DistBackend>(std::move(local), n, settings);
}

void abortJob(const std::string& why) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::cerr << "bhviz: rank " << rank << ": error: " << why << std::endl;
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // MPI_Abort does not return
}

}  // namespace bhviz::sim::dist
