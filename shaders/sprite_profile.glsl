// A soft round sprite's profile: a gaussian exp(-s r^2), shifted to reach zero at the rim
// (r = 1) and scaled to 1 at the centre; r is the distance from the centre in radii.
uniform float uSharpness;

float spriteWeight(float r2) {
  float rim = exp(-uSharpness);
  return (exp(-uSharpness * r2) - rim) / (1.0 - rim);
}
