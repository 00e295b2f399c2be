#include "app/scene/vertex_writer.h"

#include <memory>
#include <vector>

#if BHVIZ_HAVE_CUDA
#include "app/bridge/cuda_gl_bridge.h"
#endif

namespace bhviz::app {

#if BHVIZ_HAVE_CUDA
struct VertexWriter::Interop {
  CudaGlBridge bridge;
  // Colour by force error: the palette values by id on the device, uploaded when the view's
  // errors change (the meter's every few frames), not the particles every frame.
  std::shared_ptr<const std::vector<float>> uploaded;  // held, so its address is not reused

  void uploadValues(const ParticleView& view) {
    if (view.errors() == uploaded) return;
    bridge.setValues(view.errorValuesById());
    uploaded = view.errors();
  }
};
#else
struct VertexWriter::Interop {};
#endif

std::string VertexWriter::path() const {
  if (m_interopUsed) return "CUDA-GL interop";
  if (m_stride <= 1) return "host upload";
  const std::string k = std::to_string(m_stride);
  return "host upload of 1 in " + k + " particles (ids divisible by " + k + ")";
}

VertexWriter::VertexWriter() : m_interop(std::make_unique<Interop>()) {}
VertexWriter::~VertexWriter() = default;

void VertexWriter::upload(const sim::Simulation& sim, const ParticleView& view,
                          render::Renderer& renderer) {
  m_interopUsed = false;
  m_stride = 1;
  if (const sim::Particles* host = sim.backend().hostParticles()) {
    view.fill(*host, m_vertices);  // no copy of the state
  } else {
    m_stride = viewStride(sim.backend().size());
    sim::Particles sample;
    sim.backend().downloadSample(sample, m_stride);
    view.fill(sample, m_vertices);
  }
  renderer.setParticles(m_vertices.data(), m_vertices.size());
}

std::string VertexWriter::write(const sim::Simulation& sim, const ParticleView& view,
                                render::Renderer& renderer) {
#if BHVIZ_HAVE_CUDA
  if (m_interop) {
    if (const sim::DeviceAccess* access = sim.backend().deviceAccess()) {
      const sim::DeviceArrays device = access->particles();
      renderer.reserveParticles(device.n);
      try {
        const bool byError = view.settings().colorBy == ColorBy::ForceError;
        if (byError) m_interop->uploadValues(view);
        m_interop->bridge.write(device, view.rule(), renderer.particleBuffer(), byError);
        renderer.setParticleCount(device.n);
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
