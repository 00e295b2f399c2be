#version 450 core
// The compute splat's second pass: the fixed-point sums of particles_splat.comp.glsl into the
// floating-point scene buffer, every pixel written; each full-resolution sum is zeroed once
// read, so the next frame's splat starts from nothing without a clear pass. The coarser levels
// of blurred sprites (depth of field) are added bilinearly; they are cleared after this pass.
layout(local_size_x = 16, local_size_y = 16) in;

layout(std430, binding = 1) buffer Light { uint light[]; };  // per level: 3 planes of cells
layout(rgba16f, binding = 0) writeonly uniform image2D uScene;

uniform ivec2 uViewport;
uniform float uInvFixedScale;
uniform int uLevels;
uniform ivec2 uLevelSize[4];
uniform uint uLevelOffset[4];

vec3 cellLight(uint base, uint plane, ivec2 size, ivec2 c) {
  c = clamp(c, ivec2(0), size - 1);
  uint i = base + uint(c.y * size.x + c.x);
  return vec3(float(light[i]), float(light[i + plane]), float(light[i + 2u * plane]));
}

void main() {
  ivec2 p = ivec2(gl_GlobalInvocationID.xy);
  if (any(greaterThanEqual(p, uViewport))) return;
  uint plane = uint(uViewport.x * uViewport.y);
  uint i = uint(p.y * uViewport.x + p.x);
  vec3 c = vec3(float(light[i]), float(light[i + plane]), float(light[i + 2u * plane]));
  light[i] = 0u;
  light[i + plane] = 0u;
  light[i + 2u * plane] = 0u;
  for (int k = 1; k < uLevels; ++k) {
    ivec2 size = uLevelSize[k];
    uint levelPlane = uint(size.x * size.y);
    vec2 q = (vec2(p) + 0.5) / float(1 << k) - 0.5;  // in cells, centres at integers
    ivec2 c0 = ivec2(floor(q));
    vec2 f = q - vec2(c0);
    uint base = uLevelOffset[k];
    c += mix(mix(cellLight(base, levelPlane, size, c0), cellLight(base, levelPlane, size,
                                                                   c0 + ivec2(1, 0)), f.x),
             mix(cellLight(base, levelPlane, size, c0 + ivec2(0, 1)),
                 cellLight(base, levelPlane, size, c0 + ivec2(1, 1)), f.x),
             f.y);
  }
  // A saturated sum stays the largest finite half float, not infinity.
  imageStore(uScene, p, vec4(min(c * uInvFixedScale, vec3(65504.0)), 0.0));
}
