#version 450 core
// The compute splat's second pass: the fixed-point sums of particles_splat.comp.glsl into the
// floating-point scene buffer, every pixel written; each sum is zeroed once read, so the next
// frame's splat starts from nothing without a clear pass. With depth of field, the coarser
// levels of blurred sprites, already turned into textures by particles_coarse.comp.glsl, are
// added bilinearly (the sampler's filter, clamped to the edge).
layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, binding = 1) buffer Light { uint light[]; };  // 3 planes of pixels
layout(rgba16f, binding = 0) writeonly uniform image2D uScene;

uniform ivec2 uViewport;
uniform float uInvFixedScale;
uniform int uLevels;              // 1: no coarser level, up to 4
uniform sampler2D uCoarse[3];     // levels 1..3: cells of 2, 4, 8 pixels
uniform vec2 uCoarseScale[3];     // 1 / (level size [cells] × cell size [pixels])

void main() {
  ivec2 p = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(p, uViewport))) return;
  uint plane = uint(uViewport.x * uViewport.y);
  uint i = uint(p.y * uViewport.x + p.x);
  vec3 c = vec3(float(light[i]), float(light[i + plane]), float(light[i + 2u * plane]));
  light[i] = 0u;
  light[i + plane] = 0u;
  light[i + 2u * plane] = 0u;
  c *= uInvFixedScale;
  // The pixel's centre in each level's texture coordinates: cell centres at (j + 0.5) / size.
  vec2 centre = vec2(p) + 0.5;
  if (uLevels > 1) c += textureLod(uCoarse[0], centre * uCoarseScale[0], 0.0).rgb;
  if (uLevels > 2) c += textureLod(uCoarse[1], centre * uCoarseScale[1], 0.0).rgb;
  if (uLevels > 3) c += textureLod(uCoarse[2], centre * uCoarseScale[2], 0.0).rgb;
  // A saturated sum stays the largest finite half float, not infinity.
  imageStore(uScene, p, vec4(min(c, vec3(65504.0)), 0.0));
}
