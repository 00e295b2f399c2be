// The README's promises for bad input, by class, where test_cli's table of bad values does not
// reach: numbers as typed (white space, beyond int's range, beyond single precision), output
// paths as a set (two outputs on one path, nothing created before the whole line is valid, a
// name too long), and a state that is non-finite from the first force evaluation. Scenario
// files, snapshots and the window's keys have theirs in test_scenarios, test_snapshot and
// test_window.

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "app/core/cli.h"
#include "process_support.h"
#include "sim/ic/initial_conditions.h"
#include "sim/io/snapshot.h"

namespace {

using bhviz::app::parseCommandLine;
using bhviz::app::UsageError;
using bhviz::test::Process;
using bhviz::test::readText;
using bhviz::test::runBhviz;
using bhviz::test::TempDir;
namespace fs = std::filesystem;

/// The UsageError's message for a headless command line, or "" when it parses.
std::string refusal(std::vector<std::string> args) {
  args.insert(args.begin(), {"--headless", "--scenario", "plummer", "--n", "100", "--steps", "1"});
  std::ostringstream out;
  try {
    parseCommandLine(args, out);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---- Numbers as typed ----------------------------------------------------------------------

TEST(BadNumber, LeadingWhiteSpaceIsNotANumber) {
  // strtoull skips " " and negates "-1": ' -1' used to run with seed 2^64 - 1.
  EXPECT_TRUE(contains(refusal({"--seed", " -1"}), "--seed"));
  EXPECT_TRUE(contains(refusal({"--seed", " 5"}), "--seed"));
  EXPECT_TRUE(contains(refusal({"--n", " 50"}), "--n"));
  EXPECT_TRUE(contains(refusal({"--theta", " 0.5"}), "--theta"));
  EXPECT_EQ(refusal({"--seed", "5"}), "");
}

TEST(BadNumber, LeafAndGroupSizesNameTheirRealRange) {
  for (const auto& [option, value] :
       std::vector<std::pair<std::string, std::string>>{{"--n-leaf", "2147483648"},
                                                        {"--n-leaf", "1.5"},
                                                        {"--n-group", "-2147483649"},
                                                        {"--n-group", "99999999999999999999999"},
                                                        {"--n-leaf", "1025"}}) {
    const std::string why = refusal({option, value});
    EXPECT_TRUE(contains(why, option + " = ")) << why;
    EXPECT_TRUE(contains(why, "[1, 1024]")) << why;
    EXPECT_FALSE(contains(why, "2147483647")) << why;
  }
  EXPECT_TRUE(contains(refusal({"--max-bin-depth", "4294967296"}), "[0, 20]"));
}

TEST(BadNumber, EchoesTheValueAsTyped) {
  // Single precision turned 1e-50 into 0 and 1e39 into inf before the message was made.
  for (const auto& [option, value] :
       std::vector<std::pair<std::string, std::string>>{{"--theta", "1e-50"},
                                                        {"--dt", "1e-50"},
                                                        {"--softening", "1e39"},
                                                        {"--eta", "1e-300"},
                                                        {"--theta", "2.000001"},
                                                        {"--mac-param", "-1e-3"}}) {
    const std::string why = refusal({option, value});
    EXPECT_TRUE(contains(why, option + " = " + value + " ")) << why;
    EXPECT_FALSE(contains(why, "= 0 ") || contains(why, "= inf")) << why;
  }
}

// ---- Output paths, as a set ----------------------------------------------------------------

TEST(BadOutputs, TwoOutputsOnOnePathAreRefused) {
  TempDir dir;
  const std::string json = (dir.path / "out.json").string();
  const std::string same = (dir.path / "." / "out.json").string();
  std::string why = refusal({"--stats", json, "--dump-accel", same});
  EXPECT_TRUE(contains(why, "--dump-accel") && contains(why, "--stats")) << why;
  why = refusal({"--screenshot", json, "--stats", json});
  EXPECT_TRUE(contains(why, "--screenshot") && contains(why, "--stats")) << why;
  why = refusal({"--save", json + ".tipsy", "--stats", json + ".tipsy"});
  EXPECT_TRUE(contains(why, "--save")) << why;
  // A file among a directory's numbered files would be overwritten by them, or them by it.
  why = refusal(
      {"--frames", dir.path.string(), "--screenshot", (dir.path / "frame_000001.png").string()});
  EXPECT_TRUE(contains(why, "--frames")) << why;
  // Both numbered sets may share a directory: their names differ.
  EXPECT_EQ(refusal({"--frames", dir.path.string(), "--save-every", "1", dir.path.string()}), "");
  EXPECT_FALSE(fs::exists(json));
}

TEST(BadOutputs, OnlySaveMayReplaceTheLoadedSnapshot) {
  TempDir dir;
  const fs::path snap = dir.path / "in.tipsy";
  bhviz::sim::io::writeSnapshot(snap.string(), bhviz::sim::makePlummer(50, 1), 0.0);
  std::ostringstream out;
  const auto ok = parseCommandLine(
      {"--headless", "--load", snap.string(), "--steps", "1", "--save", snap.string()}, out);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->savePath, snap.string());
  const std::vector<std::string> stats = {"--headless", "--load",  snap.string(), "--steps",
                                          "1",          "--stats", snap.string()};
  try {
    parseCommandLine(stats, out);
    ADD_FAILURE() << "--stats over the --load file was accepted";
  } catch (const UsageError& e) {
    EXPECT_TRUE(contains(e.what(), "--load")) << e.what();
  }
}

TEST(BadOutputs, NoDirectoryIsCreatedUntilTheWholeLineIsValid) {
  TempDir dir;
  const fs::path frames = dir.path / "newframes" / "deeper";
  const fs::path snaps = dir.path / "newsnaps";
  // Every option after the directories is checked before they are made.
  for (const std::vector<std::string>& later :
       {std::vector<std::string>{"--save", (dir.path / "x.txt").string()},
        std::vector<std::string>{"--pick", "100"},
        std::vector<std::string>{"--stats", (dir.path / "missing" / "s.json").string()}}) {
    std::vector<std::string> args = {"--frames", frames.string(), "--save-every", "1",
                                     snaps.string()};
    args.insert(args.end(), later.begin(), later.end());
    EXPECT_NE(refusal(args), "") << later[0];
    EXPECT_FALSE(fs::exists(dir.path / "newframes")) << later[0];
    EXPECT_FALSE(fs::exists(snaps)) << later[0];
  }
  // And a valid line makes them.
  EXPECT_EQ(refusal({"--frames", frames.string(), "--save-every", "1", snaps.string()}), "");
  EXPECT_TRUE(fs::is_directory(frames));
  EXPECT_TRUE(fs::is_directory(snaps));
}

TEST(BadOutputs, ANameTooLongSaysSo) {
  TempDir dir;
  const std::string longName(300, 'a');
  std::string why = refusal({"--stats", (dir.path / (longName + ".json")).string()});
  EXPECT_TRUE(contains(why, "--stats") && contains(why, "too long")) << why;
  // 250 bytes fit, but FILE.tmp (the atomic write's) would not at 253.
  why = refusal({"--stats", (dir.path / std::string(253, 'b')).string()});
  EXPECT_TRUE(contains(why, "too long")) << why;
  EXPECT_EQ(refusal({"--stats", (dir.path / std::string(250, 'b')).string()}), "");
  why = refusal({"--frames", (dir.path / longName / "x").string()});
  EXPECT_TRUE(contains(why, "--frames") && contains(why, "too long")) << why;
  EXPECT_TRUE(fs::is_empty(dir.path));
}

TEST(BadOutputs, TheExecutableExitsTwoAndLeavesNothing) {
  TempDir dir;
  const fs::path out = dir.path / "out.json";
  const Process p = runBhviz(
      "--headless --backend cpu --threads 1 --scenario plummer --n 200 "
      "--steps 1 --quiet --stats " +
      out.string() + " --dump-accel " + out.string() + " --frames " +
      (dir.path / "frames").string());
  EXPECT_EQ(p.status, 2) << p.err;
  EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1) << p.err;
  EXPECT_TRUE(fs::is_empty(dir.path));
}

// ---- A state non-finite from the start -------------------------------------------------------

// Positions of ~1e37: the first force evaluation overflows. The run names particles (exit 1)
// and still writes the stats file, marked aborted.
void expectAbortedAtStart(const std::string& format) {
  if (format == ".hdf5" && !bhviz::sim::io::haveHdf5()) GTEST_SKIP() << "no HDF5 in this build";
  TempDir dir;
  bhviz::sim::Particles p = bhviz::sim::makePlummer(100, 1);
  for (auto& pm : p.posMass) pm = {pm.x * 1e37f, pm.y * 1e37f, pm.z * 1e37f, pm.w};
  const fs::path snap = dir.path / ("huge" + format);
  bhviz::sim::io::writeSnapshot(snap.string(), p, 0.25);
  const fs::path stats = dir.path / "hp.json";
  const Process run = runBhviz("--headless --backend cpu --threads 1 --steps 1 --load " +
                               snap.string() + " --stats " + stats.string());
  EXPECT_EQ(run.status, 1) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_TRUE(contains(run.err, "non-finite")) << run.err;
  ASSERT_TRUE(fs::exists(stats)) << run.err;
  const nlohmann::json j = nlohmann::json::parse(readText(stats));
  EXPECT_TRUE(j.at("aborted").get<bool>());
  EXPECT_FALSE(j.at("nonfinite_ids").empty());
  EXPECT_EQ(j.at("steps"), 0);
  EXPECT_EQ(j.at("n"), 100);
  EXPECT_DOUBLE_EQ(j.at("time").get<double>(), 0.25);
}

TEST(BadState, NonFiniteFirstEvaluationStillWritesStatsTipsy) { expectAbortedAtStart(".tipsy"); }
TEST(BadState, NonFiniteFirstEvaluationStillWritesStatsHdf5) { expectAbortedAtStart(".hdf5"); }

}  // namespace
