#include "render/camera.h"

#include <algorithm>
#include <cmath>
#include <glm/geometric.hpp>
#include <glm/gtc/matrix_transform.hpp>

namespace bhviz::render {

namespace {
constexpr float kTwoPi = 6.283185307f;
const glm::vec3 kWorldUp{0.0f, 0.0f, 1.0f};
}  // namespace

void Camera::orbit(float dxPixels, float dyPixels, float radiansPerPixel) {
  yaw = std::remainder(yaw - dxPixels * radiansPerPixel, kTwoPi);
  pitch = std::clamp(pitch + dyPixels * radiansPerPixel, -kMaxPitch, kMaxPitch);
}

void Camera::pan(float dxPixels, float dyPixels, float viewportHeight) {
  const float worldPerPixel = 2.0f * distance * std::tan(0.5f * fovY) / viewportHeight;
  target += worldPerPixel * (-dxPixels * right() + dyPixels * up());
}

void Camera::zoom(float factor) {
  distance = std::clamp(distance * factor, minDistance, maxDistance);
}

void Camera::advance(float seconds) {
  autoRotateAngle = std::fmod(autoRotateAngle + autoRotateSpeed * seconds, kTwoPi);
  if (autoRotateAngle < 0.0f) autoRotateAngle += kTwoPi;
}

void Camera::frameSphere(const glm::vec3& centre, float radius, float aspect) {
  const float halfY = 0.5f * fovY;
  const float halfX = std::atan(std::tan(halfY) * aspect);
  target = centre;
  distance = std::clamp(radius / std::sin(std::min(halfX, halfY)), minDistance, maxDistance);
}

glm::vec3 Camera::eye() const {
  const float a = azimuth();
  const float c = std::cos(pitch);
  return target + distance * glm::vec3(c * std::cos(a), c * std::sin(a), std::sin(pitch));
}

glm::vec3 Camera::forward() const { return glm::normalize(target - eye()); }
glm::vec3 Camera::right() const { return glm::normalize(glm::cross(forward(), kWorldUp)); }
glm::vec3 Camera::up() const { return glm::cross(right(), forward()); }

glm::mat4 Camera::view() const { return glm::lookAt(eye(), target, kWorldUp); }

glm::mat4 Camera::projection(float aspect) const {
  return glm::perspective(fovY, aspect, nearPlane(), farPlane());
}

float Camera::pixelsPerUnitAtUnitDepth(float viewportHeight) const {
  return 0.5f * viewportHeight / std::tan(0.5f * fovY);
}

glm::vec3 Camera::project(const glm::vec3& world, float width, float height) const {
  const glm::vec4 v = view() * glm::vec4(world, 1.0f);
  const glm::vec4 c = projection(width / height) * v;
  const float ndcX = c.x / c.w;
  const float ndcY = c.y / c.w;
  return {0.5f * (ndcX + 1.0f) * width, 0.5f * (1.0f - ndcY) * height, -v.z};
}

}  // namespace bhviz::render
