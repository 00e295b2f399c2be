#pragma once
// What the Performance and Diagnostics panels plot: a ring of the last few hundred frames'
// records, and an exponential moving average for the numbers shown. Filled with the previous
// frames' timings, so showing them never waits for the GPU. No GL, no ImGui.

#include <cstddef>
#include <functional>
#include <vector>

#include "sim/profile.h"

namespace bhviz::app {

/// A fixed-capacity ring: push overwrites the oldest; index 0 is the oldest kept.
template <typename T>
class Ring {
 public:
  explicit Ring(std::size_t capacity) : m_items(capacity) {}
  void push(const T& item) {
    m_items[(m_first + m_size) % m_items.size()] = item;
    if (m_size < m_items.size()) {
      ++m_size;
    } else {
      m_first = (m_first + 1) % m_items.size();
    }
  }
  std::size_t size() const { return m_size; }
  std::size_t capacity() const { return m_items.size(); }
  bool empty() const { return m_size == 0; }
  const T& operator[](std::size_t i) const { return m_items[(m_first + i) % m_items.size()]; }
  const T& back() const { return (*this)[m_size - 1]; }
  void clear() { m_first = m_size = 0; }
  /// One number per kept item, oldest first (for ImGui::PlotLines).
  std::vector<float> series(const std::function<float(const T&)>& f) const {
    std::vector<float> out(m_size);
    for (std::size_t i = 0; i < m_size; ++i) out[i] = f((*this)[i]);
    return out;
  }

 private:
  std::vector<T> m_items;
  std::size_t m_first = 0;
  std::size_t m_size = 0;
};

/// One displayed frame.
struct FrameRecord {
  sim::StepProfile step;      ///< stage timings and interactions, summed over the frame's substeps
  int substeps = 0;           ///< substeps run in the frame
  double frameMs = 0.0;       ///< wall time from this frame's start to the next's [ms]
  double simMs = 0.0;         ///< wall time of the substeps [ms]
  double writeMs = 0.0;       ///< writing the vertex buffer (interop or upload) [ms]
  double renderMs = 0.0;      ///< submitting the scene and the UI [ms]
  double gpuRenderMs = -1.0;  ///< device time of a recent frame's scene (GL timer query read
                              ///< frames later, never waited for) [ms]; negative: not known
};

class PerfHistory {
 public:
  static constexpr std::size_t kFrames = 300;
  static constexpr double kSmoothing = 0.1;  ///< EMA weight of the newest frame

  void push(const FrameRecord& r);
  void clear();
  const Ring<FrameRecord>& frames() const { return m_frames; }
  /// The moving average of every field (substeps as a real number of them); the step fields
  /// average the frames that stepped, so a paused simulation shows its last measurements.
  const FrameRecord& smoothed() const { return m_smoothed; }
  double smoothedSubsteps() const { return m_substeps; }
  /// Frames per second from the smoothed frame time; 0 before the first frame.
  double fps() const { return m_smoothed.frameMs > 0.0 ? 1000.0 / m_smoothed.frameMs : 0.0; }
  /// Smoothed interactions (M2P + P2P) per particle that received a force.
  double interactionsPerParticle() const;
  /// Smoothed interactions per second of step time.
  double interactionsPerSecond() const;

 private:
  Ring<FrameRecord> m_frames{kFrames};
  FrameRecord m_smoothed;
  double m_substeps = 0.0;
  double m_cell = 0.0, m_particle = 0.0, m_targets = 0.0;  // smoothed counts
  bool m_started = false;
  bool m_stepStarted = false;
};

/// One sample of the conserved quantities.
struct DiagnosticsSample {
  double time = 0.0;         ///< [time]
  double energyDrift = 0.0;  ///< (E − E₀)/|E₀| [1]
  double momentum = 0.0;     ///< |Σ m v|
};

}  // namespace bhviz::app
