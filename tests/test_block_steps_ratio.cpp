// bench_block_steps' comparison at equal p99 (bench/block_steps_ratio.h): shared runs on exact
// power laws in their step, so that the cost at any p99 between or beyond them is known.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "bench/block_steps_ratio.h"

namespace {

using bhviz::bench::atEqualP99;
using bhviz::bench::EqualP99ByMode;
using bhviz::bench::equalP99Table;
using bhviz::bench::RunCost;

// A shared run of step dt on the laws p99 = 3 dt², seconds = 0.002 / dt, evaluations = 1 / dt.
RunCost sharedRun(double dt) {
  return {"shared " + std::to_string(dt), 1.0 / dt, 0.002 / dt, 3.0 * dt * dt};
}

// The shared run's step that has this p99, on the same law.
double stepAt(double p99) { return std::sqrt(p99 / 3.0); }

TEST(BlockStepsRatio, RecoversTheSharedLawsBetweenAndBeyondTheRuns) {
  // Unsorted, and a second run of 1/16's p99 (it must not count).
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
  // Runs off one law, so each answer shows the pair it came from: between two runs their
  // geometric mean; on a run that run; beyond the ends the nearest pair, extended.
  const std::vector<RunCost> shared = {
      {"a", 8.0, 1.0, 1e-2}, {"b", 16.0, 2.0, 1e-3}, {"c", 32.0, 100.0, 1e-4}};
  struct Case {
    double p99, evaluations, seconds;
    bool extrapolated, tooFar;
  };
  const std::vector<Case> cases = {
      {std::sqrt(1e-2 * 1e-3), std::sqrt(8.0 * 16.0), std::sqrt(1.0 * 2.0), false, false},
      {std::sqrt(1e-3 * 1e-4), std::sqrt(16.0 * 32.0), std::sqrt(2.0 * 100.0), false, false},
      {1e-2, 8.0, 1.0, false, false},        // the coarsest run itself
      {1e-4, 32.0, 100.0, false, false},     // the finest run itself
      {1e-1, 4.0, 0.5, true, false},         // a and b, one pair's width out: f = −1
      {1e-5, 64.0, 5000.0, true, false},     // b and c, one pair's width out: f = 2
      {1e-6, 128.0, 250000.0, true, true}};  // b and c, two widths out: f = 3, too far
  std::vector<RunCost> block;
  for (const Case& c : cases) block.push_back({"block", 1.0, 0.5, c.p99});
  const auto rows = atEqualP99(shared, block);
  ASSERT_EQ(rows.size(), cases.size());
  for (std::size_t k = 0; k < cases.size(); ++k) {
    EXPECT_NEAR(rows[k].sharedEvaluations, cases[k].evaluations, 1e-9 * cases[k].evaluations)
        << "p99 " << cases[k].p99;
    EXPECT_NEAR(rows[k].sharedSeconds, cases[k].seconds, 1e-9 * cases[k].seconds)
        << "p99 " << cases[k].p99;
    EXPECT_EQ(rows[k].extrapolated, cases[k].extrapolated) << "p99 " << cases[k].p99;
    EXPECT_EQ(rows[k].tooFar, cases[k].tooFar) << "p99 " << cases[k].p99;
  }
}

TEST(BlockStepsRatio, RunsWithoutFiniteCostsAreLeftOut) {
  const std::vector<RunCost> good = {{"a", 8.0, 1.0, 1e-2}, {"b", 16.0, 2.0, 1e-3}};
  std::vector<RunCost> shared = good;
  shared.push_back({"blew up", 64.0, 1.0, INFINITY});
  shared.push_back({"no p99", 64.0, 1.0, NAN});
  shared.push_back({"no time", 64.0, 0.0, 1e-4});
  const std::vector<RunCost> block = {
      {"kept", 1.0, 0.5, 3e-3},           {"no p99", 1.0, 0.5, NAN},
      {"zero p99", 1.0, 0.5, 0.0},        {"no time", 1.0, 0.0, 3e-3},
      {"no evaluations", 0.0, 0.5, 3e-3}, {"infinite time", 1.0, INFINITY, 3e-3}};
  const auto rows = atEqualP99(shared, block);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].block.label, "kept");
  const auto alone = atEqualP99(good, {block[0]});
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(rows[0].sharedSeconds, alone[0].sharedSeconds) << "the unusable runs changed it";
  EXPECT_EQ(rows[0].sharedEvaluations, alone[0].sharedEvaluations);
}

TEST(BlockStepsRatio, EachRebuildModeAgainstItsOwnSharedRunsInTheOrderGiven) {
  EqualP99ByMode byMode;
  // Mode "every": shared 2× the cost of mode "auto" at every p99.
  byMode.add("every", true, {"shared 1 every", 8.0, 2.0, 1e-2});
  byMode.add("auto", true, {"shared 1 auto", 8.0, 1.0, 1e-2});
  byMode.add("auto", true, {"shared 2 auto", 16.0, 2.0, 1e-3});
  byMode.add("auto", false, {"block auto", 1.0, 0.5, 1e-3});
  byMode.add("every", true, {"shared 2 every", 16.0, 4.0, 1e-3});
  byMode.add("every", false, {"block every", 1.0, 0.5, 1e-3});
  byMode.add("4", false, {"block 4, no shared run", 1.0, 0.5, 1e-3});
  const auto rows = byMode.rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].block.label, "block every") << "the modes in the order they first came";
  EXPECT_NEAR(rows[0].sharedSeconds, 4.0, 1e-12);
  EXPECT_EQ(rows[1].block.label, "block auto");
  EXPECT_NEAR(rows[1].sharedSeconds, 2.0, 1e-12);
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
  // Beyond 1/16 (p99 3/256): 0.02 lies 0.39 of the pair's width out (dt* = √(0.02 / 3): 12.2
  // evaluations in 0.024 s), 0.5 lies 2.7 widths out.
  const std::string table =
      equalP99Table(atEqualP99(shared, {{"block 0.4 auto", 6.0, 0.016, p},
                                        {"block 1.6 auto", 2.0, 0.008, 0.02},
                                        {"block 3.2 auto", 2.0, 0.008, 0.5}}));
  EXPECT_NE(
      table.find("| block 0.4 auto | 5.21e-03 | 6.0 | 0.016 | 24.0 | 0.048 | 4.00× | 3.00× |"),
      std::string::npos)
      << table;
  EXPECT_NE(
      table.find("| block 1.6 auto | 2.00e-02* | 2.0 | 0.008 | 12.2 | 0.024 | 6.12× | 3.06× |"),
      std::string::npos)
      << table;
  EXPECT_NE(table.find("| block 3.2 auto | 5.00e-01* | 2.0 | 0.008 | — | — | — | — |"),
            std::string::npos)
      << table;
}

}  // namespace
