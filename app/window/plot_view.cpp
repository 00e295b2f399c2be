#include "app/window/plot_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace bhviz::app {

namespace {

constexpr float kLeftMargin = 52.0f;    // room for the y tick labels [pixels]
constexpr float kBottomMargin = 34.0f;  // x tick labels and the x label
constexpr float kTopMargin = 8.0f;
constexpr float kRightMargin = 10.0f;
constexpr float kMarker = 2.5f;  // marker radius
constexpr float kDash = 5.0f;    // dash and gap length of dashed curves

bool usable(double x, double y) {
  return x > 0.0 && y > 0.0 && std::isfinite(x) && std::isfinite(y);
}

void dashedLine(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 colour) {
  const float dx = b.x - a.x, dy = b.y - a.y;
  const float length = std::sqrt(dx * dx + dy * dy);
  if (length <= 0.0f) return;
  for (float s = 0.0f; s < length; s += 2.0f * kDash) {
    const float e = std::min(s + kDash, length);
    dl->AddLine(ImVec2(a.x + dx * s / length, a.y + dy * s / length),
                ImVec2(a.x + dx * e / length, a.y + dy * e / length), colour, 1.5f);
  }
}

}  // namespace

LogRange logRangeOf(const std::vector<PlotCurve>& curves, bool xAxis) {
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  for (const PlotCurve& c : curves) {
    for (std::size_t i = 0; i < std::min(c.x.size(), c.y.size()); ++i) {
      if (!usable(c.x[i], c.y[i])) continue;
      const double v = std::log10(xAxis ? c.x[i] : c.y[i]);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (lo > hi) return {};  // nothing to show: one decade, 1 to 10
  LogRange r{std::floor(lo), std::ceil(hi)};
  if (r.hi <= r.lo) r.hi = r.lo + 1.0;
  return r;
}

void drawLogLogPlot(const char* id, const std::vector<PlotCurve>& curves, const char* xLabel,
                    const char* yLabel, ImVec2 size) {
  if (size.x <= 0.0f) size.x = ImGui::GetContentRegionAvail().x;
  ImGui::BeginChild(id, size, true,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 p0(origin.x + kLeftMargin, origin.y + kTopMargin);
  const ImVec2 p1(origin.x + avail.x - kRightMargin, origin.y + avail.y - kBottomMargin);
  const ImU32 axis = ImGui::GetColorU32(ImGuiCol_Text);
  const ImU32 grid = ImGui::GetColorU32(ImGuiCol_Border);
  const ImU32 faint = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  if (p1.x - p0.x < 20.0f || p1.y - p0.y < 20.0f) {
    ImGui::EndChild();
    return;
  }
  const LogRange rx = logRangeOf(curves, true), ry = logRangeOf(curves, false);
  auto toScreen = [&](double x, double y) {
    const double tx = (std::log10(x) - rx.lo) / (rx.hi - rx.lo);
    const double ty = (std::log10(y) - ry.lo) / (ry.hi - ry.lo);
    return ImVec2(p0.x + static_cast<float>(tx) * (p1.x - p0.x),
                  p1.y - static_cast<float>(ty) * (p1.y - p0.y));
  };
  char text[32];
  // Decade ticks with grid lines, and 2 and 5 minor ticks when few decades are spanned.
  for (double e = rx.lo; e <= rx.hi + 1e-9; e += 1.0) {
    const float x = toScreen(std::pow(10.0, e), std::pow(10.0, ry.lo)).x;
    dl->AddLine(ImVec2(x, p0.y), ImVec2(x, p1.y), grid);
    std::snprintf(text, sizeof text, "1e%+d", static_cast<int>(e));
    dl->AddText(ImVec2(x - ImGui::CalcTextSize(text).x * 0.5f, p1.y + 3.0f), faint, text);
    for (double m : {2.0, 5.0}) {
      if (e + std::log10(m) >= rx.hi || rx.hi - rx.lo > 3.0) continue;
      const float xm = toScreen(m * std::pow(10.0, e), std::pow(10.0, ry.lo)).x;
      dl->AddLine(ImVec2(xm, p1.y - 4.0f), ImVec2(xm, p1.y), axis);
    }
  }
  for (double e = ry.lo; e <= ry.hi + 1e-9; e += 1.0) {
    const float y = toScreen(std::pow(10.0, rx.lo), std::pow(10.0, e)).y;
    dl->AddLine(ImVec2(p0.x, y), ImVec2(p1.x, y), grid);
    std::snprintf(text, sizeof text, "1e%+d", static_cast<int>(e));
    const ImVec2 ts = ImGui::CalcTextSize(text);
    dl->AddText(ImVec2(p0.x - ts.x - 4.0f, y - ts.y * 0.5f), faint, text);
    for (double m : {2.0, 5.0}) {
      if (e + std::log10(m) >= ry.hi || ry.hi - ry.lo > 3.0) continue;
      const float ym = toScreen(std::pow(10.0, rx.lo), m * std::pow(10.0, e)).y;
      dl->AddLine(ImVec2(p0.x, ym), ImVec2(p0.x + 4.0f, ym), axis);
    }
  }
  dl->AddRect(p0, p1, axis);
  const ImVec2 xs = ImGui::CalcTextSize(xLabel);
  dl->AddText(ImVec2(0.5f * (p0.x + p1.x - xs.x), p1.y + 17.0f), axis, xLabel);
  dl->AddText(ImVec2(origin.x + 2.0f, origin.y), axis, yLabel);

  dl->PushClipRect(p0, p1, true);
  for (const PlotCurve& c : curves) {
    bool have = false;
    ImVec2 prev;
    for (std::size_t i = 0; i < std::min(c.x.size(), c.y.size()); ++i) {
      if (!usable(c.x[i], c.y[i])) continue;
      const ImVec2 q = toScreen(c.x[i], c.y[i]);
      if (have) {
        if (c.dashed) {
          dashedLine(dl, prev, q, c.colour);
        } else {
          dl->AddLine(prev, q, c.colour, 1.5f);
        }
      }
      dl->AddCircleFilled(q, kMarker, c.colour);
      prev = q;
      have = true;
    }
  }
  dl->PopClipRect();

  // Legend: one row per labelled curve, top right inside the frame.
  float rowY = p0.y + 4.0f, width = 0.0f;
  int rows = 0;
  for (const PlotCurve& c : curves) {
    width = std::max(width, ImGui::CalcTextSize(c.label.c_str()).x);
    rows += c.label.empty() ? 0 : 1;
  }
  const float left = p1.x - width - 40.0f;
  if (rows > 0) {
    ImVec4 bg = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
    bg.w = 0.85f;
    dl->AddRectFilled(ImVec2(left - 4.0f, rowY - 2.0f),
                      ImVec2(p1.x - 2.0f, rowY + rows * ImGui::GetTextLineHeight() + 2.0f),
                      ImGui::GetColorU32(bg));
  }
  for (const PlotCurve& c : curves) {
    if (c.label.empty()) continue;
    const float mid = rowY + ImGui::GetTextLineHeight() * 0.5f;
    if (c.dashed) {
      dashedLine(dl, ImVec2(left, mid), ImVec2(left + 24.0f, mid), c.colour);
    } else {
      dl->AddLine(ImVec2(left, mid), ImVec2(left + 24.0f, mid), c.colour, 1.5f);
    }
    dl->AddText(ImVec2(left + 30.0f, rowY), axis, c.label.c_str());
    rowY += ImGui::GetTextLineHeight();
  }
  ImGui::EndChild();
}

}  // namespace bhviz::app
