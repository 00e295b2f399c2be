#pragma once
// A CUDA backend's stage timing: a pair of events around each stage's launches on the
// backend's stream, read into the step's profile when the step settles (cuda_backend.cu), so
// that timing a stage adds no wait of its own.

#include <cuda_runtime.h>

#include <vector>

#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/cuda_stages.h"
#include "sim/profile.h"

namespace bhviz::sim::cuda {

/// Pairs of CUDA events, one per timed span; a stage may be timed several times before the
/// spans are read (the predict stage twice a substep, the walk once per tree). The pairs are
/// kept and reused: after the first steps no event is created.
class StageEvents {
 public:
  StageEvents() = default;
  ~StageEvents() {
    for (const Span& s : m_spans) {
      (void)cudaEventDestroy(s.start);
      (void)cudaEventDestroy(s.stop);
    }
  }
  StageEvents(const StageEvents&) = delete;
  StageEvents& operator=(const StageEvents&) = delete;

  /// Opens a span of `stage`; end() closes it, or drop() forgets it (its launch threw).
  void begin(Stage stage, Stream s) {
    if (m_used == m_spans.size()) {
      Span span{};
      BHVIZ_CUDA_CHECK(cudaEventCreate(&span.start));
      if (const cudaError_t e = cudaEventCreate(&span.stop); e != cudaSuccess) {
        (void)cudaEventDestroy(span.start);
        BHVIZ_CUDA_CHECK(e);
      }
      m_spans.push_back(span);
    }
    Span& span = m_spans[m_used];
    span.stage = stage;
    BHVIZ_CUDA_CHECK(cudaEventRecord(span.start, s));
    ++m_used;  // only once its start is recorded
  }
  void end(Stream s) { BHVIZ_CUDA_CHECK(cudaEventRecord(m_spans[m_used - 1].stop, s)); }
  /// Forgets the span begin() opened last: its stop will never be recorded.
  void drop() { --m_used; }

  bool pending() const { return m_used > 0; }

  /// Adds the spans' times to the profile and frees them (waits for their stop events: none
  /// where the caller has waited for the stream already).
  void collect(StepProfile& profile) {
    const std::size_t used = m_used;
    m_used = 0;  // freed even when a read below throws
    for (std::size_t k = 0; k < used; ++k) {
      const Span& span = m_spans[k];
      BHVIZ_CUDA_CHECK(cudaEventSynchronize(span.stop));
      float ms = 0.0f;
      BHVIZ_CUDA_CHECK(cudaEventElapsedTime(&ms, span.start, span.stop));
      profile[span.stage] += ms;
    }
    if (used == 0) return;
    // One stream: the spans follow one another, the first began earliest and the last ended last.
    float span = 0.0f;
    BHVIZ_CUDA_CHECK(cudaEventElapsedTime(&span, m_spans[0].start, m_spans[used - 1].stop));
    profile.spanMs += span;
  }

 private:
  struct Span {
    cudaEvent_t start = nullptr, stop = nullptr;
    Stage stage = Stage::Predict;
  };
  std::vector<Span> m_spans;  ///< the first m_used are open or waiting to be read
  std::size_t m_used = 0;
};

/// Runs `launch` between a stage's two events; a launch that throws leaves no open span.
template <typename Launch>
void timed(StageEvents& events, Stage stage, Stream s, Launch&& launch) {
  events.begin(stage, s);
  try {
    launch();
  } catch (...) {
    events.drop();
    throw;
  }
  events.end(s);
}

}  // namespace bhviz::sim::cuda
