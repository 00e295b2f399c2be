#pragma once
// Rewind and replay: the window keeps states of the running simulation (sim::KeptState: on the
// GPU where the backend has room, else in host memory) every `interval` of simulated time,
// within a byte budget. When the budget is full every other state goes and the interval
// doubles, so the whole run stays covered, more coarsely as it grows. Going back to a kept
// state and running on drops the states after it: the run continues from there, and replays
// the same bits on the same backend (tests/test_rewind.cpp).

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "sim/simulation.h"

namespace bhviz::app {

/// The default budget: a quarter of the host's memory, at most 4 GiB [bytes].
std::size_t defaultRewindBudget();

class StateRing {
 public:
  explicit StateRing(std::size_t budgetBytes = defaultRewindBudget());

  /// Forgets every state (a new simulation). The next update() keeps one at once.
  void clear();
  /// After a frame's steps: states later than the simulation's time go (it went back and ran
  /// on), then the state is kept if `interval` has passed since the last one kept. `settle`, if
  /// given, is called just before a state is kept (a substep still running must end first:
  /// SimSession::settle); where it returns false nothing is kept.
  void update(const sim::Simulation& sim, const std::function<bool()>& settle = {});

  std::size_t size() const { return m_states.size(); }
  const sim::KeptState& at(std::size_t k) const { return *m_states.at(k); }
  double interval() const { return m_interval; }
  std::size_t bytes() const { return m_bytes; }
  std::size_t budget() const { return m_budget; }
  std::size_t onDevice() const;  ///< states kept in device memory [1]

 private:
  void thin();

  std::vector<std::unique_ptr<sim::KeptState>> m_states;  // by time
  std::size_t m_budget;
  std::size_t m_bytes = 0;
  double m_interval = 0.0;  // set from dtMax at the first state [time]
};

}  // namespace bhviz::app
