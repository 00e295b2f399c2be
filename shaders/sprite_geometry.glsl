// Where a particle's sprite lands, how large and how bright it is: shared by the raster pass
// (particles.vert.glsl) and the compute splat (particles_splat.comp.glsl), so both draw the
// same picture. A vertex is (x, y, z, value): value in [0, 1] runs along the palette, a negative
// value hides the particle. The sprite's diameter follows the distance; a sprite smaller than
// uMinSizePx is drawn at that size and dimmed by the area ratio, so its total light is the same
// at every resolution and zoom.

uniform mat4 uView;
uniform mat4 uProj;
uniform float uSpriteSize;     // diameter [world length]
uniform float uPixelsPerUnit;  // pixels per world unit at unit depth
uniform float uMinSizePx;
uniform float uMaxSizePx;
uniform float uBrightness;     // linear intensity at the centre of an unclamped sprite
uniform float uPaletteSize;    // texels in the palette
uniform sampler1D uPalette;

struct Sprite {
  bool visible;     // false: hidden by its value
  vec4 clip;        // clip-space position of the centre
  float diameter;   // drawn diameter [pixels]
  vec3 colour;      // linear light at the centre
};

Sprite spriteOf(vec3 position, float value) {
  Sprite s;
  s.visible = value >= 0.0;
  vec4 viewPosition = uView * vec4(position, 1.0);
  s.clip = uProj * viewPosition;
  float depth = max(-viewPosition.z, 1e-6);
  float size = uSpriteSize * uPixelsPerUnit / depth;
  s.diameter = clamp(size, uMinSizePx, uMaxSizePx);
  float flux = size < uMinSizePx ? (size * size) / (s.diameter * s.diameter) : 1.0;
  // Value 0 → centre of the first texel, 1 → centre of the last.
  float t = (0.5 + clamp(value, 0.0, 1.0) * (uPaletteSize - 1.0)) / uPaletteSize;
  s.colour = texture(uPalette, t).rgb * (uBrightness * flux);
  return s;
}
