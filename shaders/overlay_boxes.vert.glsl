#version 450 core
// Instanced wireframe boxes: the 12 edges of the cube [-1, 1]^3, scaled and moved per box.

layout(location = 0) in vec3 aCorner;    // an edge end point of the unit cube
layout(location = 1) in vec3 iCentre;    // per box
layout(location = 2) in vec3 iHalfSize;  // per box
layout(location = 3) in vec4 iColour;    // per box: RGB and opacity

uniform mat4 uViewProj;
out vec4 vColour;

void main() {
  gl_Position = uViewProj * vec4(iCentre + aCorner * iHalfSize, 1.0);
  vColour = iColour;
}
