// The CUDA backend's limits are part of its interface (sim::BackendLimits): N_group ≤ 128 there
// (the walk's largest group). The command line refuses more before any work, naming the option
// and the range (exit 2); the window's session refuses it with one line and runs on.
#include <gtest/gtest.h>

#include <string>

#include "app/core/sim_session.h"
#include "process_support.h"
#include "sim/cuda/cuda_backend.h"
#include "sim/cuda/cuda_stages.h"

namespace {

using bhviz::test::Process;
using bhviz::test::runBhviz;

bool haveDevice() { return bhviz::sim::cuda::deviceCount() > 0; }

std::size_t lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

TEST(CudaLimits, TheCommandLineRefusesAGroupBeyondTheBackendsLimit) {
  if (!haveDevice()) GTEST_SKIP() << "no CUDA device";
  for (const char* backend : {"cuda", "auto"}) {
    const Process p = runBhviz(std::string("--headless --backend ") + backend +
                               " --scenario plummer --n 2000 --steps 1 --n-group 129");
    EXPECT_EQ(p.status, 2) << p.err;
    EXPECT_EQ(lines(p.err), 1u) << p.err;
    EXPECT_NE(p.err.find("--n-group = 129"), std::string::npos) << p.err;
    EXPECT_NE(p.err.find("[1, 128]"), std::string::npos) << p.err;
    EXPECT_EQ(p.err.find("launchGroups"), std::string::npos) << p.err;
  }
  const Process ok = runBhviz(
      "--headless --backend cuda --scenario plummer --n 2000 --steps 1 "
      "--n-group 128 --quiet");
  EXPECT_EQ(ok.status, 0) << ok.err;
}

TEST(CudaLimits, TheSessionRefusesAGroupBeyondTheLimitAndRunsOn) {
  if (!haveDevice()) GTEST_SKIP() << "no CUDA device";
  bhviz::app::SceneSettings scene;
  scene.scenario = "plummer";
  scene.n = 5000;
  scene.backend = bhviz::app::BackendChoice::Cuda;
  bhviz::app::SimSession session(scene, bhviz::sim::defaultSimParams());
  EXPECT_EQ(session.limits().maxGroupSize, 128);
  bhviz::sim::SimParams p = session.simulation().params();
  p.nGroup = 129;
  const std::string refused = session.applyParams(p);
  EXPECT_NE(refused.find("[1, 128]"), std::string::npos) << refused;
  EXPECT_NE(refused.find("cuda"), std::string::npos) << refused;
  const double t = session.simulation().time();
  EXPECT_NO_THROW(session.step());
  EXPECT_GT(session.simulation().time(), t);
}

}  // namespace
