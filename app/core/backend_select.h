#pragma once
// The one place that turns --backend into a sim::Backend: the CPU backend where the host has
// room, the CUDA backend where it is built and a device has room, and what auto falls back to.
// Everything after this reaches the backend only through sim::Backend.

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

#include "app/core/settings.h"
#include "sim/backend.h"
#include "sim/dist/dist.h"

namespace bhviz::app {

/// The backend asked for is not in this build. what() is the whole line; exit status 2.
struct BackendUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct BackendSelection {
  std::unique_ptr<sim::Backend> backend;
  std::string note;  ///< one line for the user when the choice was made for them, else empty
};

/// The one place that maps --backend onto a backend for n particles: auto takes CUDA when it
/// is built, a device exists and n fits in its memory, else the CPU (and says why). Throws
/// BackendUnavailable when `cuda` was asked for and cannot run. `asRank`: n is a rank's share
/// of a distributed run, whose essential trees and exchanges need more memory per particle.
BackendSelection selectBackend(BackendChoice choice, std::size_t n, bool asRank = false);

/// selectBackend for the simulation itself: under mpirun (sim::dist::currentJob()) the chosen
/// backend becomes rank 0's share of a distributed backend over every rank, each rank running
/// the same kind. Throws BackendUnavailable when that kind cannot run distributed.
/// `rebalance`: sim::dist::DistSettings::imbalance (0: decompose at every full step; < 0: its
/// default).
BackendSelection selectSimulationBackend(BackendChoice choice, std::size_t n,
                                         double rebalance = -1.0);

/// A follower rank's share (sim::dist::Job::serve): the leader's kind for about n particles.
std::unique_ptr<sim::Backend> makeRankBackend(sim::dist::LocalKind kind, std::size_t n);

/// Throws UsageError (exit status 2) naming the option and the backend's range when `p` asks
/// for more than `backend` runs (sim::BackendLimits), before any work.
void requireWithinLimits(const sim::SimParams& p, const sim::Backend& backend);

}  // namespace bhviz::app
