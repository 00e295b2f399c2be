// The particle state's own operations (sim/particles.h) that the tests of the backends do not
// cover alone: the exchange's placement.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <stdexcept>
#include <vector>

#include "sim/particles.h"

using namespace bhviz::sim;

// The particle exchange's placement (planExchange, both backends): the staying particles and
// the arrivals, each once, in `size` slots; a staying particle below the new end keeps its
// slot, so only the few beyond it move (from ≥ size > to: the moves may run in parallel).
TEST(Exchange, PlanMovesOnlyTheParticlesBeyondTheNewEnd) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 400; ++trial) {
    const std::size_t n = rng() % 300;
    const double leaveShare = std::array<double, 4>{0.0, 0.02, 0.5, 1.0}[trial % 4];
    std::vector<std::uint32_t> leaving;
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (std::uint32_t i = 0; i < n; ++i) {
      if (u(rng) < leaveShare) leaving.push_back(i);
    }
    const std::size_t arriving = rng() % (2 * leaving.size() + 3);
    const ExchangePlan plan = planExchange(n, leaving, arriving);
    ASSERT_EQ(plan.size, n - leaving.size() + arriving);
    ASSERT_EQ(plan.from.size(), plan.to.size());
    ASSERT_EQ(plan.arrivalAt.size(), arriving);
    // Slots hold labels: particle i is i, arrival j is n + j, a hole is -1.
    std::vector<long> slot(std::max(n, plan.size), -1);
    for (std::size_t i = 0; i < n; ++i) slot[i] = static_cast<long>(i);
    for (std::uint32_t i : leaving) slot[i] = -1;
    for (std::size_t k = 0; k < plan.from.size(); ++k) {
      ASSERT_GE(plan.from[k], plan.size);
      ASSERT_LT(plan.to[k], plan.size);
      ASSERT_NE(slot[plan.from[k]], -1) << "a leaving particle moved";
      ASSERT_EQ(slot[plan.to[k]], -1) << "a move onto a staying particle";
      slot[plan.to[k]] = slot[plan.from[k]];
    }
    for (std::size_t j = 0; j < arriving; ++j) {
      ASSERT_LT(plan.arrivalAt[j], plan.size);
      ASSERT_EQ(slot[plan.arrivalAt[j]], -1) << "an arrival onto a particle";
      slot[plan.arrivalAt[j]] = static_cast<long>(n + j);
    }
    slot.resize(plan.size);
    std::vector<long> expected;
    std::size_t next = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (next < leaving.size() && leaving[next] == i) {
        ++next;
        continue;
      }
      expected.push_back(static_cast<long>(i));
      if (i < plan.size) {
        EXPECT_EQ(slot[i], static_cast<long>(i)) << "a staying particle moved";
      }
    }
    for (std::size_t j = 0; j < arriving; ++j) expected.push_back(static_cast<long>(n + j));
    std::vector<long> held = slot;
    std::sort(held.begin(), held.end());
    ASSERT_EQ(held, expected) << "n " << n << " leaving " << leaving.size();
  }
  EXPECT_THROW(planExchange(5, {1, 1}, 0), std::invalid_argument);
  EXPECT_THROW(planExchange(5, {3, 2}, 0), std::invalid_argument);
  EXPECT_THROW(planExchange(5, {5}, 0), std::out_of_range);
}
