#include "app/core/view_options.h"

namespace bhviz::app {

std::optional<ColorBy> parseColorBy(const std::string& text) {
  if (text == "component") return ColorBy::Component;
  if (text == "speed") return ColorBy::Speed;
  if (text == "bin") return ColorBy::Bin;
  if (text == "population") return ColorBy::Population;
  return std::nullopt;
}

std::string toString(ColorBy c) {
  switch (c) {
    case ColorBy::Component:
      return "component";
    case ColorBy::Speed:
      return "speed";
    case ColorBy::Bin:
      return "bin";
    case ColorBy::ForceError:
      return "force error";
    case ColorBy::Population:
      return "population";
  }
  return "?";
}

std::optional<OverlayKind> parseOverlayKind(const std::string& text) {
  if (text == "none") return OverlayKind::None;
  if (text == "tree") return OverlayKind::Tree;
  if (text == "groups") return OverlayKind::Groups;
  if (text == "domains") return OverlayKind::Domains;
  return std::nullopt;
}

std::string toString(OverlayKind k) {
  switch (k) {
    case OverlayKind::None:
      return "none";
    case OverlayKind::Tree:
      return "tree";
    case OverlayKind::Groups:
      return "groups";
    case OverlayKind::Domains:
      return "domains";
  }
  return "?";
}

}  // namespace bhviz::app
