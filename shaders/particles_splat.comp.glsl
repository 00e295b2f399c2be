#version 450 core
// The compute splat: the same sprites as the raster pass (particles.vert/frag.glsl), added up
// by a compute shader instead of the rasteriser. GPUs built for compute (H100, H200) have
// little raster hardware and draw points slowly; atomics they have plenty of. Each invocation
// takes particles (grid stride) and adds each pixel of its sprite into three planes of 32-bit
// fixed-point sums, one per colour channel; particles_resolve.comp.glsl turns the sums into
// the floating-point scene buffer. Rounding to fixed point is stochastic (a hash of particle
// and pixel), so faint light below one unit is kept on average instead of dropped.
//
// With depth of field, a sprite widened by blur beyond uLevelDiameter pixels is added into a
// coarser level of sums instead (half, quarter, eighth resolution: level k has cells of 2^k
// pixels), so that a blurred star costs a few dozen cells, not hundreds of pixels; the resolve
// adds the coarser levels back bilinearly. Light per cell is intensity, as per pixel, so the
// total light is the same.
#include "sprite_geometry.glsl"
#include "sprite_profile.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Vertices { vec4 vertices[]; };  // (x, y, z, value)
layout(std430, binding = 1) buffer Light { uint light[]; };  // per level: 3 planes of cells

uniform uint uCount;         // particles
uniform ivec2 uViewport;     // width, height [pixels]
uniform float uFixedScale;   // fixed-point units per unit of linear light
uniform int uLevels;         // levels of sums: 1 (full resolution only) to 4
uniform float uLevelDiameter;  // a blurred sprite wider than this many cells goes a level down
uniform ivec2 uLevelSize[4];   // cells of each level
uniform uint uLevelOffset[4];  // where each level's 3 planes start in light[]

uint mixBits(uint x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// Adds value (≥ 0) to light[index]; a sum that would pass the largest uint saturates there
// instead of wrapping round to black (each adder that wraps sets the maximum after its add).
void addLight(uint index, float value, float dither) {
  uint q = uint(min(value * uFixedScale + dither, 4294967040.0));
  if (q == 0u) return;
  uint before = atomicAdd(light[index], q);
  if (before > 0xffffffffu - q) atomicMax(light[index], 0xffffffffu);
}

void main() {
  uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < uCount; i += stride) {
    vec4 v = vertices[i];
    Sprite s = spriteOf(v.xyz, v.w);
    // Between the near and far planes; a sprite whose centre is off the sides but whose disc
    // reaches into the picture is drawn in part, as NVIDIA's rasteriser does (Mesa's drops
    // it, as the GL specification says), so sprites do not pop at the picture's edges.
    if (!s.visible || s.clip.w <= 0.0 || abs(s.clip.z) > s.clip.w) continue;
    // Only blur moves a sprite down: a sharp one is drawn exactly as the raster pass draws it.
    int level = 0;
    float blurred = min(s.diameter, s.blur);
    while (level + 1 < uLevels && blurred > uLevelDiameter * float(1 << level)) ++level;
    float cell = float(1 << level);
    ivec2 size = uLevelSize[level];
    uint plane = uint(size.x * size.y);
    uint base = uLevelOffset[level];
    // Level coordinates of the centre; a cell is covered when its centre is in the sprite.
    vec2 centre = (s.clip.xy / s.clip.w * 0.5 + 0.5) * vec2(uViewport) / cell;
    float radius = 0.5 * s.diameter / cell;
    if (any(lessThan(centre + radius, vec2(0.0))) ||
        any(greaterThan(centre - radius, vec2(size)))) {
      continue;
    }
    ivec2 lo = max(ivec2(ceil(centre - radius - 0.5)), ivec2(0));
    ivec2 hi = min(ivec2(floor(centre + radius - 0.5)), size - 1);
    float toUnit = 1.0 / radius;
    for (int y = lo.y; y <= hi.y; ++y) {
      for (int x = lo.x; x <= hi.x; ++x) {
        vec2 d = (vec2(x, y) + 0.5 - centre) * toUnit;
        float r2 = dot(d, d);
        if (r2 >= 1.0) continue;
        vec3 c = s.colour * spriteWeight(r2);
        uint pixel = base + uint(y * size.x + x);
        uint h = mixBits(i * 0x9e3779b9u ^ pixel);
        const float kTenBits = 1.0 / 1024.0;
        addLight(pixel, c.r, float(h & 1023u) * kTenBits);
        addLight(pixel + plane, c.g, float((h >> 10) & 1023u) * kTenBits);
        addLight(pixel + 2u * plane, c.b, float((h >> 20) & 1023u) * kTenBits);
      }
    }
  }
}
