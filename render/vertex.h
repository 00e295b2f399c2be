#pragma once
// What the renderer draws: N particle vertices of one fixed layout, wireframe boxes and lines. The
// renderer knows nothing about what the particles are; the caller turns its data into these.

#include <cstddef>
#include <cstdint>
#include <glm/vec3.hpp>
#include <glm/vec4.hpp>

namespace bhviz::render {

/// One particle as the GPU sees it: 16 bytes, tightly packed, no padding (the layout a CUDA
/// kernel writes through cudaGraphicsGLRegisterBuffer: one float4 per particle).
///
/// `value` picks the colour: values in [0, 1] run along the palette (render/palette.h), from its
/// first colour at 0 to its last at 1 (Palette::valueOf(i) is the value of colour i); values
/// up to kDustValue are clamped to 1. A negative value hides the vertex (it is not drawn at all).
/// kDustValue + v (v in [0, 1]) is a star of palette coordinate v that also carries dust: with
/// RenderParams::extinction on, its dust dims the light of everything behind it (and half of its
/// own depth slice); with extinction off it is an ordinary star of coordinate v.
struct ParticleVertex {
  float x, y, z;  ///< world position [the caller's length unit]
  float value;    ///< colour coordinate in [0, 1], + kDustValue with dust; < 0 = hidden
};
static_assert(sizeof(ParticleVertex) == 16, "ParticleVertex must be 16 bytes (a float4)");

/// A value that hides a vertex.
inline constexpr float kHiddenValue = -1.0f;
/// Added to a star's palette coordinate when it carries dust (see ParticleVertex).
inline constexpr float kDustValue = 2.0f;

/// One axis-aligned wireframe box of the overlay (a tree cell, a group, a domain): 40 bytes.
struct OverlayBox {
  glm::vec3 centre{0.0f};    ///< [world length]
  glm::vec3 halfSize{0.0f};  ///< half the side along each axis [world length]
  glm::vec4 colour{1.0f};    ///< linear RGB and opacity, alpha-blended over the tone-mapped image
};
static_assert(sizeof(OverlayBox) == 40, "OverlayBox must be tightly packed");

/// One straight line of the overlay (a previewed orbit's segment, a disk's ring): 40 bytes.
struct OverlayLine {
  glm::vec3 a{0.0f};       ///< one end [world length]
  glm::vec3 b{0.0f};       ///< the other end [world length]
  glm::vec4 colour{1.0f};  ///< linear RGB and opacity, alpha-blended over the tone-mapped image
};
static_assert(sizeof(OverlayLine) == 40, "OverlayLine must be tightly packed");

/// One of the renderer's buffers (particle vertices, overlay boxes), for a bridge that writes
/// into it directly (CUDA–GL interop registers `name` once per `generation`).
struct VertexBufferInfo {
  std::uint32_t name = 0;        ///< the GL buffer object name (a GLuint)
  std::size_t bytes = 0;         ///< its allocated size: capacity × the element's size
  std::size_t capacity = 0;      ///< elements (vertices, boxes) it can hold
  std::uint64_t generation = 0;  ///< bumped whenever the storage is reallocated (re-register)
};

}  // namespace bhviz::render
