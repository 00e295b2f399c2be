#include "app/scene/vertex_writer.h"

#include <algorithm>
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
  // The shared vertex memory (cuda_gl_bridge.h): tried first; off for good once the GL or the
  // driver refuses it (then map and unmap). The renderer's buffer it was imported as: another
  // name or generation means the renderer has let go of it (an upload, a reserve).
  bool shared = true;
  render::VertexBufferInfo imported;

  void uploadValues(const ParticleView& view) {
    if (view.errors() == uploaded) return;
    bridge.setValues(view.errorValuesById());
    uploaded = view.errors();
  }

  /// The renderer's vertex buffer on the shared memory, room for n. Where it cannot be, the
  /// shared memory goes off for good (its device memory released) and `why` says why.
  bool importFor(std::size_t n, render::Renderer& renderer, std::string& why) {
    const render::VertexBufferInfo now = renderer.particleBuffer();
    if (renderer.particleMemoryImported() && now.name == imported.name &&
        now.generation == imported.generation && now.capacity >= n) {
      return true;
    }
    try {
      if (!CudaGlBridge::hasCurrentDevice(render::glDeviceUuids()))
        throw InteropUnavailable("the GL names no device UUID that is CUDA's");
      // Never smaller than asked for before, and never empty.
      const std::size_t capacity = std::max({n, now.capacity, std::size_t{1}});
      const ExportedMemory m = bridge.exportShared(capacity * sizeof(render::ParticleVertex));
      renderer.importParticleMemory(m.fd, m.bytes, capacity);
    } catch (const std::runtime_error& e) {  // InteropUnavailable, render::GlError
      shared = false;
      bridge.releaseShared();
      why = std::string("bhviz: the GL cannot draw from CUDA's memory (") + e.what() +
            "); mapping its vertex buffer every frame instead";
      return false;
    }
    imported = renderer.particleBuffer();
    return true;
  }
};
#else
struct VertexWriter::Interop {};
#endif

std::string VertexWriter::path() const {
  if (m_interopUsed) return m_sharedUsed ? "CUDA-GL shared memory" : "CUDA-GL interop";
  if (m_stride <= 1) return "host upload";
  const std::string k = std::to_string(m_stride);
  return "host upload of 1 in " + k + " particles (ids divisible by " + k + ")";
}

VertexWriter::VertexWriter(bool tryShared) : m_interop(std::make_unique<Interop>()) {
#if BHVIZ_HAVE_CUDA
  m_interop->shared = tryShared;
#else
  (void)tryShared;
#endif
}
VertexWriter::~VertexWriter() = default;

void VertexWriter::upload(const sim::Simulation& sim, const ParticleView& view,
                          render::Renderer& renderer) {
  m_interopUsed = false;
  m_sharedUsed = false;
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
      try {
        const bool byError = view.settings().colorBy == ColorBy::ForceError;
        if (byError) m_interop->uploadValues(view);
        m_interopUsed = true;
        std::string note;
        m_sharedUsed = m_interop->shared && m_interop->importFor(device.n, renderer, note);
        if (m_sharedUsed) {
          renderer.waitForParticleReads();  // the last frame's draw has read them
          m_interop->bridge.writeShared(device, view.rule(), byError);
        } else {
          renderer.reserveParticles(device.n);  // storage of its own, which CUDA maps
          m_interop->bridge.write(device, view.rule(), renderer.particleBuffer(), byError);
        }
        renderer.setParticleCount(device.n);
        return note;
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
