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

class VertexWriter {
 public:
  VertexWriter();
  ~VertexWriter();  ///< needs the GL context still current (it unregisters the buffer)
  VertexWriter(const VertexWriter&) = delete;
  VertexWriter& operator=(const VertexWriter&) = delete;

  /// Writes one vertex per particle of `sim` into `renderer`'s buffer and sets the count.
  /// Returns a line to show the user once (interop refused, so uploading instead), else empty.
  std::string write(const sim::Simulation& sim, const ParticleView& view,
                    render::Renderer& renderer);

  /// "CUDA-GL interop" or "host upload": how the last frame was written.
  const char* path() const { return m_interopUsed ? "CUDA-GL interop" : "host upload"; }

 private:
  void upload(const sim::Simulation& sim, const ParticleView& view, render::Renderer& renderer);

  struct Interop;
  std::unique_ptr<Interop> m_interop;  // null without CUDA, or once interop was refused
  bool m_interopUsed = false;
  std::vector<render::ParticleVertex> m_vertices;
};

}  // namespace bhviz::app
