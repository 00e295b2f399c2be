#include "app/core/backend_select.h"

#include <fstream>
#include <iomanip>
#include <sstream>
#include <string>
#include <utility>

#include "app/core/cli.h"
#if BHVIZ_HAVE_CUDA
#include "sim/cuda/cuda_backend.h"
#endif

namespace bhviz::app {

namespace {

/// MemAvailable from /proc/meminfo [bytes]; 0 when it cannot be read (then nothing is checked).
double availableHostBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0.0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024.0;
  }
  return 0.0;
}

/// Refuses `need` bytes of host memory where fewer are available, before any is allocated:
/// "<what> needs about X GiB of memory <where>, but only Y GiB are available".
void checkHostMemory(double need, const std::string& what, const std::string& where) {
  const double available = availableHostBytes();
  if (available > 0.0 && need > available) {
    std::ostringstream s;
    s << std::setprecision(3) << what << " needs about " << need / 1073741824.0 << " GiB of memory "
      << where << ", but only " << available / 1073741824.0 << " GiB are available";
    throw UsageError(s.str());
  }
}

// The CPU backend, once the host has room for n particles on it (a rank's share: with its
// essential trees and exchanges).
std::unique_ptr<sim::Backend> makeCpu(std::size_t n, bool asRank) {
  const double perParticle =
      asRank ? sim::dist::kRankCpuHostBytesPerParticle : sim::kCpuPeakBytesPerParticle;
  checkHostMemory(static_cast<double>(n) * perParticle,
                  asRank ? "a rank's share of " + std::to_string(n) + " particles"
                         : "--n = " + std::to_string(n),
                  "on the CPU backend");
  return sim::makeCpuBackend();
}

/// Under mpirun, rank 0's machine: every particle while rank 0 makes and spreads them, and the
/// shares of the ranks there when they run the CPU backend. Checked before any rank allocates,
/// so that a run the machine cannot hold is refused once, with status 2.
void checkLeaderMachine(std::size_t n, const sim::dist::Job& job, bool cpuRanks) {
  const double share = static_cast<double>(sim::dist::rankShare(n, job.size()));
  const double ranksHere = job.localSize();
  const double need = static_cast<double>(n) * sim::dist::kLeaderHostBytesPerParticle +
                      (cpuRanks ? ranksHere * share * sim::dist::kRankCpuHostBytesPerParticle : 0);
  std::ostringstream where;
  where << "on rank 0's machine under mpirun (rank 0 holds every particle while it spreads them";
  if (cpuRanks) where << "; its " << job.localSize() << " ranks there hold their shares";
  where << ")";
  checkHostMemory(need, "--n = " + std::to_string(n), where.str());
}

}  // namespace

BackendSelection selectBackend(BackendChoice choice, std::size_t n, bool asRank) {
  if (choice == BackendChoice::Cpu) return {makeCpu(n, asRank), ""};
#if BHVIZ_HAVE_CUDA
  try {
    auto backend = sim::cuda::makeCudaBackend(
        n, asRank ? sim::cuda::kDeviceBytesPerRankParticle : sim::cuda::kDeviceBytesPerParticle);
    std::string note;
    if (choice == BackendChoice::Auto) {
      note = "bhviz: --backend auto: using the CUDA backend on " + sim::cuda::deviceDescription();
    }
    return {std::move(backend), note};
  } catch (const sim::cuda::CudaUnavailable& e) {
    if (choice == BackendChoice::Cuda) {
      throw BackendUnavailable(std::string("the CUDA backend cannot run: ") + e.what() +
                               "; use --backend cpu or auto");
    }
    return {makeCpu(n, asRank),
            std::string("bhviz: --backend auto: ") + e.what() + "; using the CPU backend"};
  }
#else
  (void)n;
  (void)asRank;
  if (choice == BackendChoice::Cuda) {
    throw BackendUnavailable(
        "the CUDA backend is not available in this build; use --backend cpu or auto");
  }
  return {makeCpu(n, asRank), "bhviz: --backend auto: using the CPU backend"};
#endif
}

BackendSelection selectSimulationBackend(BackendChoice choice, std::size_t n, double rebalance) {
  sim::dist::Job* job = sim::dist::currentJob();
  if (job == nullptr) return selectBackend(choice, n);
  // Each rank's backend holds about n / K particles (rank 0 holds them all on the host while it
  // spreads them, not on its device). Rank 0's machine is checked whole first where the kind is
  // known, and again once auto has chosen.
  if (choice == BackendChoice::Cpu) checkLeaderMachine(n, *job, true);
  BackendSelection selection = selectBackend(choice, sim::dist::rankShare(n, job->size()), true);
  if (choice != BackendChoice::Cpu) {
    checkLeaderMachine(n, *job, !selection.backend->traits().onDevice);
  }
  if (selection.backend->forceParts() == nullptr) {
    throw BackendUnavailable("the " + std::string(selection.backend->name()) +
                             " backend cannot run under mpirun yet; use --backend cpu");
  }
  sim::dist::DistSettings settings;
  if (rebalance >= 0.0) settings.imbalance = rebalance;
  selection.backend = sim::dist::makeDistributedBackend(std::move(selection.backend), n, settings);
  std::ostringstream note;
  note << "bhviz: " << job->size() << " rank" << (job->size() > 1 ? "s" : "") << " (mpirun), "
       << selection.backend->name() << " backend on each";
  selection.note = selection.note.empty() ? note.str() : selection.note + "\n" + note.str();
  return selection;
}

std::unique_ptr<sim::Backend> makeRankBackend(sim::dist::LocalKind kind, std::size_t n) {
#if BHVIZ_HAVE_CUDA
  // The ranks of one machine take its GPUs in turn (rank 0 keeps device 0, as it chose it).
  if (kind == sim::dist::LocalKind::Cuda) {
    sim::cuda::useDevice(sim::dist::currentJob()->localRank());
  }
#endif
  const bool cuda = kind == sim::dist::LocalKind::Cuda;
  return selectBackend(cuda ? BackendChoice::Cuda : BackendChoice::Cpu, n, true).backend;
}

void requireWithinLimits(const sim::SimParams& p, const sim::Backend& backend) {
  try {
    sim::validate(p, backend.traits().limits, backend.name());
  } catch (const sim::InvalidParameter& e) {
    throw UsageError(std::string("--") + e.what());  // sim names parameters as the options
  }
}

}  // namespace bhviz::app
