#include "app/vertex_writer.h"

#include "sim/cpu/cpu_backend.h"
#if BHVIZ_HAVE_CUDA
#include "app/cuda_gl_bridge.h"
#endif

namespace bhviz::app {

#if BHVIZ_HAVE_CUDA
struct VertexWriter::Interop {
  CudaGlBridge bridge;
};
#else
struct VertexWriter::Interop {};
#endif

VertexWriter::VertexWriter() : m_interop(std::make_unique<Interop>()) {}
VertexWriter::~VertexWriter() = default;

void VertexWriter::upload(const sim::Simulation& sim, const ParticleView& view,
                          render::Renderer& renderer) {
  m_interopUsed = false;
  if (const auto* cpu = dynamic_cast<const sim::CpuBackend*>(&sim.backend())) {
    view.fill(cpu->particles(), m_vertices);  // no copy of the state
  } else {
    view.fill(sim.particles(), m_vertices);
  }
  renderer.setParticles(m_vertices.data(), m_vertices.size());
}

std::string VertexWriter::write(const sim::Simulation& sim, const ParticleView& view,
                                render::Renderer& renderer) {
#if BHVIZ_HAVE_CUDA
  // The errors by id live on the host: that colouring goes through the upload.
  if (m_interop && view.settings().colorBy != ColorBy::ForceError) {
    if (const auto device = sim::cuda::deviceView(sim.backend())) {
      renderer.reserveParticles(device->n);
      try {
        m_interop->bridge.write(*device, view.rule(), renderer.particleBuffer());
        renderer.setParticleCount(device->n);
        m_interopUsed = true;
        return {};
      } catch (const InteropUnavailable& e) {
        m_interop.reset();
        upload(sim, view, renderer);
        return std::string("bhviz: CUDA-GL interop is not available (") + e.what() +
               "); copying the particles through the host instead";
      }
    }
  }
#endif
  upload(sim, view, renderer);
  return {};
}

}  // namespace bhviz::app
