#include "app/scene/camera_follow.h"

#include <algorithm>
#include <cmath>

#include "app/core/galaxy_centre.h"

namespace bhviz::app {

namespace {

constexpr float kHeldFraction = 0.9f;  // the radius holds this share of the drawn particles
constexpr float kFramePadding = 1.3f;  // as the first view: the sphere a bit inside the view

glm::vec3 position(const sim::Particles& p, std::size_t i) {
  return {p.posMass[i].x, p.posMass[i].y, p.posMass[i].z};
}

float quantileDistance(const sim::Particles& p, const std::vector<std::size_t>& members,
                       const glm::vec3& centre, float fraction) {
  std::vector<float> d;
  d.reserve(members.size());
  for (std::size_t i : members) {
    const glm::vec3 x = position(p, i) - centre;
    d.push_back(std::sqrt(x.x * x.x + x.y * x.y + x.z * x.z));
  }
  if (d.empty()) return 0.0f;
  const auto k = static_cast<std::ptrdiff_t>(fraction * float(d.size() - 1));
  std::nth_element(d.begin(), d.begin() + k, d.end());
  return d[static_cast<std::size_t>(k)];
}

float glide(float seconds) {
  return 1.0f - std::exp(-std::max(seconds, 0.0f) / CameraFollower::kGlideSeconds);
}

}  // namespace

CameraAim aimAt(const sim::Particles& p, const CameraMode& mode, const ViewSettings& view,
                std::size_t stride) {
  CameraAim aim;
  stride = std::max<std::size_t>(stride, 1);
  std::vector<std::size_t> all, drawn;
  all.reserve(p.size() / stride + 1);
  drawn.reserve(p.size() / stride + 1);
  for (std::size_t i = 0; i < p.size(); i += stride) {
    all.push_back(i);
    if (view.visible[static_cast<std::size_t>(sim::tagComponent(p.tag[i]))]) drawn.push_back(i);
  }
  if (drawn.empty()) return aim;
  std::optional<Point3> centre;
  switch (mode.target) {
    case CameraTarget::Free:  // auto-framing alone centres on what is drawn
      centre = centreOfMass(p, drawn);
      break;
    case CameraTarget::Centre:
      centre = centreOfMass(p, all);
      break;
    case CameraTarget::Galaxy:
      centre = densestCentre(p, starsOfGalaxy(p, static_cast<unsigned>(mode.galaxy), stride));
      break;
  }
  if (!centre) return aim;
  aim.target = glm::vec3(float((*centre)[0]), float((*centre)[1]), float((*centre)[2]));
  const float r = quantileDistance(p, drawn, aim.target, kHeldFraction);
  aim.radius = r > 0.0f && std::isfinite(r) ? r : 1.0f;
  aim.valid = true;
  return aim;
}

bool SampleAge::due(const sim::Simulation& sim, Clock::time_point now) {
  const bool wentBack = sim.substeps() < m_substeps;
  m_substeps = sim.substeps();  // every call: a rewind is seen against the last frame's
  return !m_taken || m_seconds <= 0.0 || &sim != m_sim || sim.backend().size() != m_particles ||
         wentBack || std::chrono::duration<double>(now - m_at).count() >= m_seconds;
}

void SampleAge::taken(const sim::Simulation& sim, Clock::time_point now) {
  m_taken = true;
  m_sim = &sim;
  m_particles = sim.backend().size();
  m_substeps = sim.substeps();
  m_at = now;
}

CameraAim AimSampler::aim(const sim::Simulation& sim, const CameraMode& mode,
                          const ViewSettings& view) {
  const sim::Backend& b = sim.backend();
  const std::size_t n = b.size();
  const std::size_t stride = std::max<std::size_t>(1, (n + kAimSample - 1) / kAimSample);
  if (const sim::Particles* host = b.hostParticles()) return aimAt(*host, mode, view, stride);
  const SampleAge::Clock::time_point now = SampleAge::Clock::now();
  if (m_age.due(sim, now)) {
    b.downloadSample(m_sample, static_cast<std::uint32_t>(stride));
    m_age.taken(sim, now);
  }
  return aimAt(m_sample, mode, view, 1);
}

void CameraFollower::follow(render::Camera& camera, const CameraMode& mode, const CameraAim& aim,
                            float seconds, float aspect) {
  if (!aim.valid || !mode.active()) return;
  const float a = m_started || !m_jumpFirst ? glide(seconds) : 1.0f;
  if (!m_started) m_distance = camera.distance;
  m_started = true;
  // Auto-framing alone centres on what is drawn, too.
  camera.target += a * (aim.target - camera.target);
  if (!mode.autoFrame) return;
  render::Camera framed = camera;
  framed.frameSphere(aim.target, kFramePadding * aim.radius, aspect);
  // In log space: growing and shrinking glide alike.
  m_distance =
      std::exp(std::log(m_distance) + a * (std::log(framed.distance) - std::log(m_distance)));
  camera.distance = std::clamp(m_distance, camera.minDistance, camera.maxDistance);
}

bool CameraFollower::fly(render::Camera& camera, float seconds) {
  if (!m_flying) return false;
  const float a = glide(seconds);
  camera.target += a * (m_flight.target - camera.target);
  camera.distance = std::exp(std::log(camera.distance) +
                             a * (std::log(m_flight.distance) - std::log(camera.distance)));
  // The shorter way round.
  float dYaw = std::remainder(m_flight.yaw - camera.azimuth(), 6.2831853f);
  camera.yaw += a * dYaw;
  camera.pitch += a * (m_flight.pitch - camera.pitch);
  const glm::vec3 dt = m_flight.target - camera.target;
  if (std::abs(dYaw) < 1e-3f && std::abs(m_flight.pitch - camera.pitch) < 1e-3f &&
      std::abs(std::log(m_flight.distance / camera.distance)) < 1e-3f &&
      glm::dot(dt, dt) < 1e-6f * m_flight.distance * m_flight.distance) {
    m_flying = false;
  }
  return true;
}

CameraBookmark bookmarkOf(const render::Camera& camera, const CameraMode& mode, std::string name) {
  CameraBookmark b;
  b.name = std::move(name);
  b.target = camera.target;
  b.distance = camera.distance;
  b.yaw = camera.azimuth();
  b.pitch = camera.pitch;
  b.mode = mode;
  return b;
}

}  // namespace bhviz::app
