#version 450 core
// Extinction, step 1: the dust of every vertex that carries it (value ≥ uDustValue) as optical
// depth, added as a soft sprite (the stars' profile) into the depth slice holding its centre, at
// the dust grid's resolution, in 32-bit fixed point with stochastic rounding (as the splat adds
// light). Dust sprites smaller than uMinCells are drawn at that size and thinned by the area
// ratio, so a dust particle's absorbing area does not depend on the resolution or the zoom.
#include "sprite_profile.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Vertices { vec4 vertices[]; };  // (x, y, z, value)
layout(std430, binding = 2) buffer Dust { uint dust[]; };  // uSlices planes of uCells

uniform mat4 uView;
uniform mat4 uProj;
uniform uint uCount;
uniform float uDustValue;     // render::kDustValue
uniform ivec2 uCells;         // the dust grid [cells]
uniform vec2 uViewport;       // the picture [pixels]
uniform float uCellPixels;    // a cell's side [pixels]
uniform float uDustSize;      // dust sprite diameter [world length]
uniform float uCellsPerUnit;  // cells per world unit at unit depth
uniform float uMinCells;
uniform float uMaxCells;
uniform float uOpacity;       // optical depth at an unclamped dust sprite's centre
uniform float uSliceNear;     // view depth of the first slice's front [world length]
uniform float uSliceFar;      // and of the last slice's back
uniform int uSlices;
uniform float uFixedScale;    // fixed-point units per unit of optical depth

uint mixBits(uint x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

void main() {
  uint plane = uint(uCells.x * uCells.y);
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < uCount; i += stride) {
    vec4 v = vertices[i];
    if (v.w < uDustValue) continue;
    vec4 viewPosition = uView * vec4(v.xyz, 1.0);
    vec4 clip = uProj * viewPosition;
    if (clip.w <= 0.0 || abs(clip.z) > clip.w) continue;
    float depth = -viewPosition.z;
    float size = uDustSize * uCellsPerUnit / depth;
    float diameter = clamp(size, uMinCells, uMaxCells);
    float kept = min(size, uMaxCells);
    float tau = uOpacity * (kept * kept) / (diameter * diameter);
    int slice = clamp(int(floor((depth - uSliceNear) / (uSliceFar - uSliceNear) * float(uSlices))),
                      0, uSlices - 1);
    vec2 centre = (clip.xy / clip.w * 0.5 + 0.5) * uViewport / uCellPixels;
    float radius = 0.5 * diameter;
    if (any(lessThan(centre + radius, vec2(0.0))) ||
        any(greaterThan(centre - radius, vec2(uCells)))) {
      continue;
    }
    ivec2 lo = max(ivec2(ceil(centre - radius - 0.5)), ivec2(0));
    ivec2 hi = min(ivec2(floor(centre + radius - 0.5)), uCells - 1);
    uint base = uint(slice) * plane;
    for (int y = lo.y; y <= hi.y; ++y) {
      for (int x = lo.x; x <= hi.x; ++x) {
        vec2 d = (vec2(x, y) + 0.5 - centre) / radius;
        float r2 = dot(d, d);
        if (r2 >= 1.0) continue;
        uint cell = base + uint(y * uCells.x + x);
        float dither = float(mixBits(i * 0x9e3779b9u ^ cell) & 1023u) / 1024.0;
        uint q = uint(min(tau * spriteWeight(r2) * uFixedScale + dither, 4294967040.0));
        if (q != 0u) atomicAdd(dust[cell], q);
      }
    }
  }
}
