#version 450 core
// The compute splat: the same sprites as the raster pass (particles.vert/frag.glsl), added up
// by a compute shader instead of the rasteriser. GPUs built for compute (H100, H200) have
// little raster hardware and draw points slowly; atomics they have plenty of. Each pixel of a
// sprite is added into three planes of 32-bit fixed-point sums, one per colour channel;
// particles_resolve.comp.glsl turns the sums into the floating-point scene buffer. Rounding to
// fixed point is stochastic (a hash of particle and pixel), so faint light below one unit is
// kept on average instead of dropped.
//
// A work group draws its particles a chunk of 128 at a time: each invocation finds one
// particle's sprite and the box of pixels it covers, a scan lays the chunk's boxes end to end,
// and the invocations then take the boxes' pixels in turn, consecutive invocations consecutive
// pixels of a row. So every invocation has the same share of pixels however the sprites' sizes
// differ, and a warp's atomics go to neighbouring addresses of one or two sprites, not to the
// scattered pixels of 32 (neighbours in the buffer are neighbours in space: overlapping sprites,
// so the same pixels). The sums are integers: the order of the adds does not change them.
//
// With depth of field, a sprite widened by blur beyond uLevelDiameter pixels is added into a
// coarser level of sums instead (half, quarter, eighth resolution: level k has cells of 2^k
// pixels), so that a blurred star costs a few dozen cells, not hundreds of pixels; the resolve
// adds the coarser levels back bilinearly. Light per cell is intensity, as per pixel, so the
// total light is the same.
#include "sprite_geometry.glsl"
#include "sprite_profile.glsl"

// = local_size_x; a power of two (the search below halves it). 128, 256 and 512 draw the 1 M
// merger's sprites (42 pixels each) equally fast on the H200; at 16 M (10 pixels) 128 took 3.19
// ms against 3.54 and 3.59: the scan costs a chunk the same however small its boxes.
const uint kChunk = 128u;
layout(local_size_x = 128) in;

layout(std430, binding = 0) readonly buffer Vertices { vec4 vertices[]; };  // (x, y, z, value)
layout(std430, binding = 1) buffer Light { uint light[]; };  // per level: 3 planes of cells

uniform uint uCount;         // particles
uniform ivec2 uViewport;     // width, height [pixels]
uniform float uFixedScale;   // fixed-point units per unit of linear light
uniform int uLevels;         // levels of sums: 1 (full resolution only) to 4
uniform float uLevelDiameter;  // a blurred sprite wider than this many cells goes a level down
uniform ivec2 uLevelSize[4];   // cells of each level
uniform uint uLevelOffset[4];  // where each level's 3 planes start in light[]

// The chunk's sprites, one slot per invocation: what drawing a covered cell needs.
shared vec2 sCentre[kChunk];   // the sprite's centre [level cells]
shared vec4 sColour[kChunk];   // linear light at the centre (rgb), 1 / radius [1 / cells]
shared ivec4 sBox[kChunk];     // first covered cell (x, y), cells a row, level
shared uint sEnd[kChunk];      // cells of the boxes up to and including this one

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

// Particle i's sprite into this invocation's slot; returns the cells of its box (0: nothing
// to draw).
uint findSprite(uint i, uint slot) {
  vec4 v = vertices[i];
  Sprite s = spriteOf(v.xyz, v.w);
  // Between the near and far planes; a sprite whose centre is off the sides but whose disc
  // reaches into the picture is drawn in part, as NVIDIA's rasteriser does (Mesa's drops
  // it, as the GL specification says), so sprites do not pop at the picture's edges.
  if (!s.visible || s.clip.w <= 0.0 || abs(s.clip.z) > s.clip.w) return 0u;
  // Only blur moves a sprite down: a sharp one is drawn exactly as the raster pass draws it.
  int level = 0;
  float blurred = min(s.diameter, s.blur);
  while (level + 1 < uLevels && blurred > uLevelDiameter * float(1 << level)) ++level;
  float cell = float(1 << level);
  ivec2 size = uLevelSize[level];
  // Level coordinates of the centre; a cell is covered when its centre is in the sprite.
  vec2 centre = (s.clip.xy / s.clip.w * 0.5 + 0.5) * vec2(uViewport) / cell;
  float radius = 0.5 * s.diameter / cell;
  if (any(lessThan(centre + radius, vec2(0.0))) ||
      any(greaterThan(centre - radius, vec2(size)))) {
    return 0u;
  }
  ivec2 lo = max(ivec2(ceil(centre - radius - 0.5)), ivec2(0));
  ivec2 hi = min(ivec2(floor(centre + radius - 0.5)), size - 1);
  if (any(lessThan(hi, lo))) return 0u;
  sCentre[slot] = centre;
  sColour[slot] = vec4(s.colour, 1.0 / radius);
  sBox[slot] = ivec4(lo, hi.x - lo.x + 1, level);
  return uint(hi.x - lo.x + 1) * uint(hi.y - lo.y + 1);
}

// Cell k of the chunk's boxes laid end to end (k below their total).
void drawCell(uint first, uint k) {
  // The sprite whose box holds k: the first slot whose running end passes k.
  uint j = 0u;
  for (uint step = kChunk / 2u; step > 0u; step >>= 1u) {
    if (sEnd[j + step - 1u] <= k) j += step;
  }
  uint start = j == 0u ? 0u : sEnd[j - 1u];
  ivec4 box = sBox[j];
  uint within = k - start;
  uint row = within / uint(box.z);
  ivec2 at = box.xy + ivec2(int(within - row * uint(box.z)), int(row));
  vec4 colour = sColour[j];
  vec2 d = (vec2(at) + 0.5 - sCentre[j]) * colour.w;
  float r2 = dot(d, d);
  if (r2 >= 1.0) return;
  vec3 c = colour.rgb * spriteWeight(r2);
  ivec2 size = uLevelSize[box.w];
  uint plane = uint(size.x * size.y);
  uint pixel = uLevelOffset[box.w] + uint(at.y * size.x + at.x);
  uint h = mixBits((first + j) * 0x9e3779b9u ^ pixel);
  const float kTenBits = 1.0 / 1024.0;
  addLight(pixel, c.r, float(h & 1023u) * kTenBits);
  addLight(pixel + plane, c.g, float((h >> 10) & 1023u) * kTenBits);
  addLight(pixel + 2u * plane, c.b, float((h >> 20) & 1023u) * kTenBits);
}

void main() {
  uint slot = gl_LocalInvocationID.x;
  // The whole group goes round this loop together (its bounds are the group's alone), as the
  // barriers inside it require.
  for (uint first = gl_WorkGroupID.x * kChunk; first < uCount;
       first += gl_NumWorkGroups.x * kChunk) {
    uint cells = first + slot < uCount ? findSprite(first + slot, slot) : 0u;
    // The boxes' running end: an inclusive scan over the chunk (Hillis–Steele).
    sEnd[slot] = cells;
    barrier();
    for (uint offset = 1u; offset < kChunk; offset <<= 1u) {
      uint before = slot >= offset ? sEnd[slot - offset] : 0u;
      barrier();
      sEnd[slot] += before;
      barrier();
    }
    uint total = sEnd[kChunk - 1u];
    for (uint k = slot; k < total; k += kChunk) drawCell(first, k);
    barrier();  // the slots are the next chunk's
  }
}
