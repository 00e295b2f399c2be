#pragma once
// Each frame, the simulation's particles → the renderer's vertex buffer. With the CUDA backend
// and interop available, a kernel writes the buffer on the device (cuda_gl_bridge; colouring by
// force error, the per-id values go to the device once per new set of errors); otherwise the
// particles come to the host and ParticleView uploads them. The #if BHVIZ_HAVE_CUDA of the
// window lives here only.

#include <memory>
#include <string>
#include <vector>

#include "app/scene/particle_view.h"
#include "render/renderer.h"
#include "sim/simulation.h"

namespace bhviz::app {

/// The most particles a host upload draws (the copy to the host, above all a distributed run's
/// gather to rank 0, is the frame's cost): above it, the ids divisible by viewStride(N).
inline constexpr std::size_t kViewBudget = 4'000'000;
/// 1 up to kViewBudget particles, else ⌈N / kViewBudget⌉.
inline std::uint32_t viewStride(std::size_t n) {
  return n <= kViewBudget ? 1u : static_cast<std::uint32_t>((n + kViewBudget - 1) / kViewBudget);
}

class VertexWriter {
 public:
  /// `tryShared`: write through memory the GL shares where it can (cuda_gl_bridge.h), else
  /// through the mapped buffer; false: always the mapped buffer.
  explicit VertexWriter(bool tryShared = true);
  ~VertexWriter();  ///< needs the GL context still current (it unregisters the buffer)
  VertexWriter(const VertexWriter&) = delete;
  VertexWriter& operator=(const VertexWriter&) = delete;

  /// Writes one vertex per particle of `sim` into `renderer`'s buffer and sets the count.
  /// Returns a line to show the user once (interop refused, so uploading instead), else empty.
  std::string write(const sim::Simulation& sim, const ParticleView& view,
                    render::Renderer& renderer);

  /// How the last frame was written: "CUDA-GL shared memory" (the GL draws from device memory
  /// the kernel writes: no map or unmap), "CUDA-GL interop" (the GL's buffer mapped, written and
  /// unmapped), "host upload", or the host upload of a sample ("host upload of 1 in K particles
  /// (ids divisible by K)").
  std::string path() const;

 private:
  void upload(const sim::Simulation& sim, const ParticleView& view, render::Renderer& renderer);

  struct Interop;
  std::unique_ptr<Interop> m_interop;  // null without CUDA, or once interop was refused
  bool m_interopUsed = false;
  bool m_sharedUsed = false;   ///< the interop went through the shared memory
  std::uint32_t m_stride = 1;  ///< the last host upload's sample: ids divisible by it
  std::vector<render::ParticleVertex> m_vertices;
};

}  // namespace bhviz::app
