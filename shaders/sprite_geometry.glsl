// Where a particle's sprite lands, how large and how bright it is: shared by the raster pass
// (particles.vert.glsl) and the compute splat (particles_splat.comp.glsl), so both draw the
// same picture. A vertex is (x, y, z, value): value in [0, 1] runs along the palette, a negative
// value hides the particle, uDustValue + v is a star of coordinate v that carries dust. The
// sprite's diameter follows the distance; a sprite smaller than uMinSizePx is drawn at that size
// and dimmed by the area ratio, so its total light is the same at every resolution and zoom.
// Depth of field widens it by its circle of confusion and dims it by the area ratio too;
// extinction dims it by the dust in front of its centre (dust_integrate.comp.glsl).

uniform mat4 uView;
uniform mat4 uProj;
uniform float uSpriteSize;     // diameter [world length]
uniform float uPixelsPerUnit;  // pixels per world unit at unit depth
uniform float uMinSizePx;
uniform float uMaxSizePx;
uniform float uBrightness;     // linear intensity at the centre of an unclamped sprite
uniform float uPaletteSize;    // texels in the palette
uniform sampler1D uPalette;
uniform float uDustValue;      // render::kDustValue
// Depth of field: circle of confusion = uCocScale · |depth − uFocus| / depth [pixels]; 0 = off.
uniform float uCocScale;
uniform float uFocus;          // [world length]
// Extinction: τ summed front to back at the slices' boundaries (layer k at depth
// uSliceNear + k · (uSliceFar − uSliceNear) / uSlices), over the picture scaled by uDustUv.
uniform bool uExtinction;
uniform sampler3D uOpticalDepth;
uniform float uSliceNear;
uniform float uSliceFar;
uniform float uSlices;
uniform vec2 uDustUv;

struct Sprite {
  bool visible;     // false: hidden by its value
  vec4 clip;        // clip-space position of the centre
  float diameter;   // drawn diameter [pixels]
  float blur;       // its circle of confusion [pixels], 0 without depth of field
  vec3 colour;      // linear light at the centre
};

// exp(−τ) of the dust in front of a point at view depth `depth` whose centre is at `clip`.
float transmission(vec4 clip, float depth) {
  vec2 uv = (clip.xy / clip.w * 0.5 + 0.5) * uDustUv;
  float w = clamp((depth - uSliceNear) / (uSliceFar - uSliceNear), 0.0, 1.0);
  float layer = (0.5 + w * uSlices) / (uSlices + 1.0);
  return exp(-textureLod(uOpticalDepth, vec3(uv, layer), 0.0).r);
}

Sprite spriteOf(vec3 position, float value) {
  Sprite s;
  s.visible = value >= 0.0;
  float v = value >= uDustValue ? value - uDustValue : value;
  vec4 viewPosition = uView * vec4(position, 1.0);
  s.clip = uProj * viewPosition;
  float depth = max(-viewPosition.z, 1e-6);
  float size = uSpriteSize * uPixelsPerUnit / depth;
  s.blur = uCocScale * abs(depth - uFocus) / depth;
  float widened = uCocScale > 0.0 ? sqrt(size * size + s.blur * s.blur) : size;
  s.diameter = clamp(widened, uMinSizePx, uMaxSizePx);
  // Light ∝ centre intensity × diameter²: kept when a sprite is widened or drawn at the minimum
  // size; a sprite larger than the maximum is drawn at it at full intensity, as without blur.
  float kept = min(size, uMaxSizePx);
  float flux = (kept * kept) / (s.diameter * s.diameter);
  if (uExtinction) flux *= transmission(s.clip, depth);
  // Value 0 → centre of the first texel, 1 → centre of the last.
  float t = (0.5 + clamp(v, 0.0, 1.0) * (uPaletteSize - 1.0)) / uPaletteSize;
  s.colour = textureLod(uPalette, t, 0.0).rgb * (uBrightness * flux);
  return s;
}
