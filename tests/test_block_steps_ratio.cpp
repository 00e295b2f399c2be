// bench_block_steps' comparison at equal p99 (bench/block_steps_ratio.h): shared runs on exact
// power laws in their step, so that the cost at any p99 between or beyond them is known.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "bench/block_steps_ratio.h"

namespace {

using bhviz::bench::atEqualP99;
using bhviz::bench::equalP99Table;
using bhviz::bench::RunCost;

// A shared run of step dt on the laws p99 = 3 dt², seconds = 0.002 / dt, evaluations = 1 / dt.
RunCost sharedRun(double dt) {
  return {"shared " + std::to_string(dt), 1.0 / dt, 0.002 / dt, 3.0 * dt * dt};
}

// The shared run's step that has this p99, on the same law.
double stepAt(double p99) { return std::sqrt(p99 / 3.0); }

TEST(BlockStepsRatio, RecoversTheSharedLawsBetweenAndBeyondTheRuns) {
  // Unsorted, one step twice (its second copy must not count).
  const std::vector<RunCost> shared = {sharedRun(1.0 / 32),
                                       sharedRun(1.0 / 8),
                                       sharedRun(1.0 / 64),
                                       sharedRun(1.0 / 16),
                                       {"twin", 99.0, 99.0, 3.0 / 256}};
  const std::vector<double> p99s = {3.0 / 256 / 2,  // between 1/16 and 1/32
                                    3.0 / 1024,     // on 1/32 itself
                                    3.0 / 40000,    // finer than 1/64: extrapolated
                                    0.2,            // coarser than 1/8: extrapolated
                                    3.0 / 100};     // between 1/8 and 1/16
  std::vector<RunCost> block;
  for (const double p : p99s) block.push_back({"block", 2.0, 0.01, p});
  block.push_back({"no error measured", 2.0, 0.01, 0.0});
  const auto rows = atEqualP99(shared, block);
  ASSERT_EQ(rows.size(), p99s.size()) << "the block run without a p99 is left out";
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const double dt = stepAt(p99s[k]);
    EXPECT_NEAR(rows[k].sharedEvaluations, 1.0 / dt, 1e-9 / dt) << "p99 " << p99s[k];
    EXPECT_NEAR(rows[k].sharedSeconds, 0.002 / dt, 1e-12 / dt) << "p99 " << p99s[k];
    const bool outside = p99s[k] < 3.0 / 4096 || p99s[k] > 3.0 / 64;
    EXPECT_EQ(rows[k].extrapolated, outside) << "p99 " << p99s[k];
  }
}

TEST(BlockStepsRatio, TheBracketingPairDecidesNotTheNearestLaw) {
  // Runs off one law: a block p99 between two runs takes those two alone, so each answer is
  // the geometric mean of its pair's (a and b; then b and c).
  const std::vector<RunCost> shared = {
      {"a", 8.0, 1.0, 1e-2}, {"b", 16.0, 2.0, 1e-3}, {"c", 32.0, 100.0, 1e-4}};
  const auto rows = atEqualP99(shared, {{"block", 1.0, 0.5, std::sqrt(1e-2 * 1e-3)},
                                        {"block", 1.0, 0.5, std::sqrt(1e-3 * 1e-4)}});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NEAR(rows[0].sharedSeconds, std::sqrt(1.0 * 2.0), 1e-12);
  EXPECT_NEAR(rows[0].sharedEvaluations, std::sqrt(8.0 * 16.0), 1e-12);
  EXPECT_NEAR(rows[1].sharedSeconds, std::sqrt(2.0 * 100.0), 1e-12);
  EXPECT_NEAR(rows[1].sharedEvaluations, std::sqrt(16.0 * 32.0), 1e-12);
  EXPECT_FALSE(rows[0].extrapolated);
  EXPECT_FALSE(rows[1].extrapolated);
}

TEST(BlockStepsRatio, NeedsTwoSharedRunsOfDistinctP99) {
  const std::vector<RunCost> block = {{"block", 2.0, 0.01, 1e-4}};
  EXPECT_TRUE(atEqualP99({}, block).empty());
  EXPECT_TRUE(atEqualP99({sharedRun(1.0 / 16)}, block).empty());
  EXPECT_TRUE(atEqualP99({sharedRun(1.0 / 16), {"same p99", 5.0, 5.0, 3.0 / 256}}, block).empty());
  EXPECT_TRUE(atEqualP99({sharedRun(1.0 / 16), {"no time", 32.0, 0.0, 3.0 / 1024}}, block).empty());
  EXPECT_TRUE(equalP99Table({}).empty());
}

TEST(BlockStepsRatio, TheTableShowsBothRatiosAndMarksExtrapolation) {
  const std::vector<RunCost> shared = {sharedRun(1.0 / 16), sharedRun(1.0 / 32)};
  // Between them at dt* = 1/24: shared 24 evaluations in 0.048 s; the block run 6 in 0.016 s.
  const double p = 3.0 / (24.0 * 24.0);
  const std::string table = equalP99Table(
      atEqualP99(shared, {{"block 0.4 auto", 6.0, 0.016, p}, {"block 1.6 auto", 2.0, 0.008, 0.5}}));
  EXPECT_NE(table.find("| block 0.4 auto | 5.21e-03 | 6.0 | 0.016 | 24.0 | 0.048 | 4.00 | 3.00× |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("| block 1.6 auto | 5.00e-01* |"), std::string::npos) << table;
}

}  // namespace
