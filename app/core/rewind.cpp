#include "app/core/rewind.h"

#include <unistd.h>

#include <algorithm>

namespace bhviz::app {

namespace {

constexpr std::size_t kMaxDefaultBudget = std::size_t(4) << 30;
constexpr double kFirstInterval = 8.0;  // dtMax intervals between kept states, at first
constexpr std::size_t kMinStates = 4;   // never thinned below this many

}  // namespace

std::size_t defaultRewindBudget() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return kMaxDefaultBudget / 4;
  return std::min(kMaxDefaultBudget, static_cast<std::size_t>(pages) * std::size_t(page) / 4);
}

StateRing::StateRing(std::size_t budgetBytes) : m_budget(budgetBytes) {}

void StateRing::clear() {
  m_states.clear();
  m_bytes = 0;
  m_interval = 0.0;
}

std::size_t StateRing::onDevice() const {
  return static_cast<std::size_t>(
      std::count_if(m_states.begin(), m_states.end(), [](const auto& s) { return s->onDevice(); }));
}

void StateRing::update(const sim::Simulation& sim, const std::function<bool()>& settle) {
  const double t = sim.time();
  const double tick = sim.clock().tickDt();
  while (!m_states.empty() && m_states.back()->time() > t + 0.5 * tick) {
    m_bytes -= m_states.back()->bytes();
    m_states.pop_back();
  }
  if (m_interval <= 0.0) m_interval = kFirstInterval * sim.params().dtMax;
  if (!m_states.empty() && t - m_states.back()->time() < m_interval - 0.5 * tick) return;
  const std::size_t perState = sim.backend().size() * sim::kParticleBytes;
  if (perState > m_budget) return;  // not even one fits: nothing is kept
  if (settle && !settle()) return;  // before thinning: a state not kept loses no history
  while (m_bytes + perState > m_budget && m_states.size() >= kMinStates) thin();
  if (m_bytes + perState > m_budget) return;
  m_states.push_back(sim.keep(m_budget - m_bytes));
  m_bytes += m_states.back()->bytes();
}

// Every other state goes (the first stays), and they come half as often from now on.
void StateRing::thin() {
  std::vector<std::unique_ptr<sim::KeptState>> kept;
  m_bytes = 0;
  for (std::size_t k = 0; k < m_states.size(); ++k) {
    if (k % 2 != 0) continue;
    m_bytes += m_states[k]->bytes();
    kept.push_back(std::move(m_states[k]));
  }
  m_states = std::move(kept);
  m_interval *= 2.0;
}

}  // namespace bhviz::app
