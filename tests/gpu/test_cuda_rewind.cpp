// Rewind on the CUDA backend: a state kept in device memory (and one kept on the host when the
// device has no room for it) replays the same bits.
#include <gtest/gtest.h>

#include "gpu_test_support.h"
#include "replay.h"
#include "sim/cuda/cuda_backend.h"

namespace {

using namespace bhviz;
using test::ReplayCase;

using bhviz::test::haveGpu;

class CudaReplay : public ::testing::TestWithParam<ReplayCase> {};

TEST_P(CudaReplay, DeviceAndHostStatesReplayTheSameBits) {
  if (!haveGpu()) GTEST_SKIP() << "no CUDA device";
  const auto make = [] { return sim::cuda::makeCudaBackend(100'000); };
  EXPECT_TRUE(test::expectReplayIsExact(make, GetParam(), 100'000, 5, 10, std::size_t(1) << 33));
  EXPECT_FALSE(test::expectReplayIsExact(make, GetParam(), 20'000, 5, 10, 0));
}

INSTANTIATE_TEST_SUITE_P(
    Steps, CudaReplay,
    ::testing::Values(ReplayCase{sim::TimeStepping::Shared, sim::MacKind::Bonsai},
                      ReplayCase{sim::TimeStepping::Block, sim::MacKind::Acceleration}),
    [](const auto& info) {
      return std::string(sim::toString(info.param.stepping)) + "_" +
             std::string(sim::toString(info.param.mac));
    });

}  // namespace
