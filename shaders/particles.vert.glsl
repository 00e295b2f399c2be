#version 450 core
// Particles as point sprites. A vertex is (x, y, z, value): value in [0, 1] runs along the
// palette, a negative value hides the vertex. The sprite's diameter follows the distance; a
// sprite smaller than uMinSizePx is drawn at that size and dimmed by the area ratio, so its
// total light is the same at every resolution and zoom.

layout(location = 0) in vec3 aPosition;
layout(location = 1) in float aValue;

uniform mat4 uView;
uniform mat4 uProj;
uniform float uSpriteSize;     // diameter [world length]
uniform float uPixelsPerUnit;  // pixels per world unit at unit depth
uniform float uMinSizePx;
uniform float uMaxSizePx;
uniform float uBrightness;     // linear intensity at the centre of an unclamped sprite
uniform float uPaletteSize;    // texels in the palette
uniform sampler1D uPalette;

out vec3 vColour;

void main() {
  if (aValue < 0.0) {
    // Hidden: outside the clip volume, so the point is discarded before rasterisation.
    gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
    gl_PointSize = 1.0;
    vColour = vec3(0.0);
    return;
  }
  vec4 viewPosition = uView * vec4(aPosition, 1.0);
  gl_Position = uProj * viewPosition;
  float depth = max(-viewPosition.z, 1e-6);
  float size = uSpriteSize * uPixelsPerUnit / depth;
  float drawn = clamp(size, uMinSizePx, uMaxSizePx);
  float flux = size < uMinSizePx ? (size * size) / (drawn * drawn) : 1.0;
  gl_PointSize = drawn;
  // Value 0 → centre of the first texel, 1 → centre of the last.
  float t = (0.5 + clamp(aValue, 0.0, 1.0) * (uPaletteSize - 1.0)) / uPaletteSize;
  vColour = texture(uPalette, t).rgb * (uBrightness * flux);
}
