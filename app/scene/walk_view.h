#pragma once
// "See the walk": pick a particle, show its group's interaction list in the overlay (cells taken
// as multipoles, leaves taken particle by particle, cells the MAC opened), explain the MAC's
// decision on one cell, and step through the tree build and the walk. No GL and no ImGui: the
// window and the headless pictures both use it, and tests drive it.
//
// The walk shown is computed on a CPU tree built from a copy of the current state at the pick
// (sim/cpu/walk_inspect.h), whatever the backend: on the CUDA backend that is one download of
// the particles per pick, a teaching tool, not the GPU's own walk (which builds the same tree and
// applies the same MAC).

#include <cstdint>
#include <glm/vec2.hpp>
#include <glm/vec4.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/scene/particle_view.h"
#include "render/camera.h"
#include "render/vertex.h"
#include "sim/cpu/walk_inspect.h"

namespace bhviz::app {

/// Overlay colours (linear RGB, opacity) of the walk: one per verdict, and the picked group.
inline constexpr glm::vec4 kAcceptedColour{0.2f, 1.0f, 0.25f, 0.9f};  ///< green: multipole (M2P)
/// magenta: accepted and far, expanded about the group's centre once for the group (M2L)
inline constexpr glm::vec4 kExpandedColour{0.95f, 0.25f, 0.95f, 0.9f};
inline constexpr glm::vec4 kLeafColour{1.0f, 0.45f, 0.05f, 0.9f};       ///< orange: leaf, P2P
inline constexpr glm::vec4 kOpenedColour{0.3f, 0.45f, 1.0f, 0.8f};      ///< blue: opened by the MAC
inline constexpr glm::vec4 kPickedGroupColour{1.0f, 1.0f, 1.0f, 1.0f};  ///< white: the picked group
inline constexpr glm::vec4 kHighlightColour{1.0f, 1.0f, 0.2f,
                                            1.0f};  ///< yellow: the cell explained

/// The overlay colour of a verdict.
glm::vec4 verdictColour(sim::cpu::CellVerdict v);
/// A cell's colour in a walk: its verdict's, or kExpandedColour for an accepted cell the walk
/// expands about the group's centre.
glm::vec4 cellColour(const sim::cpu::GroupWalk& walk, std::uint32_t cell, sim::cpu::CellVerdict v);

/// Picking considers every particle up to this N; above it a strided sample of about this many
/// (so a click at 10^7 particles costs a few ms, and may pick a neighbour of the nearest).
inline constexpr std::size_t kPickFullLimit = 200'000;
/// Step-through (tree build level by level, walk front by front) is offered up to this N.
inline constexpr std::size_t kStepThroughMaxN = 20'000;

/// The visible particle (ViewSettings::visible) whose projection lies nearest `cursor` (pixels,
/// y down, in a width × height view), within `maxPixels`; particles behind the eye never count.
/// Returns its index in p.
std::optional<std::size_t> pickParticle(const sim::Particles& p, const ViewSettings& view,
                                        const render::Camera& camera, float width, float height,
                                        glm::vec2 cursor, float maxPixels = 25.0f);

/// One picked particle's walk (sim::cpu::GroupWalk) and the state's time, with what the
/// window adds: the cell under the cursor and a summary line.
class WalkInspection {
 public:
  /// Builds the inspection tree from `state` (any order) and picks the particle with this id.
  /// Throws std::out_of_range naming the id when the state has no such particle.
  void inspect(const sim::Particles& state, const sim::SimParams& params, std::uint32_t id,
               double time);
  void clear() { m_walk.reset(); }
  bool active() const { return m_walk.has_value(); }

  /// The walk (only while active()).
  const sim::cpu::GroupWalk& walk() const { return *m_walk; }
  const sim::cpu::WalkScene& scene() const { return m_walk->scene(); }
  std::uint32_t particleId() const { return m_walk->particleId(); }
  std::size_t group() const { return m_walk->group(); }
  double time() const { return m_time; }  ///< of the state inspected
  const sim::cpu::InteractionList& list() const { return m_walk->list(); }
  const std::vector<sim::cpu::WalkFront>& fronts() const { return m_walk->fronts(); }
  sim::cpu::MacExplanation explain(std::uint32_t cell) const { return m_walk->explain(cell); }
  /// The cell of the list (accepted, leaf or opened) whose cube centre projects nearest the
  /// cursor, within maxPixels; -1 when none.
  std::int64_t cellNear(const render::Camera& camera, float width, float height, glm::vec2 cursor,
                        float maxPixels = 12.0f) const;
  /// "walk of particle 17 (group 3 of 412, 16 targets): 121 accepted (70 of them expanded about
  /// the group's centre), 64 leaves (P2P), 40 opened"
  std::string summary() const;

 private:
  std::optional<sim::cpu::GroupWalk> m_walk;
  double m_time = 0.0;
};

/// What the walk overlay shows.
struct WalkOverlay {
  enum class Mode { List, Build, Walk };
  Mode mode = Mode::List;  ///< the whole list; the tree build up to `level`; the walk up to `step`
  int level = 0;           ///< Build: cells of levels 0..level
  int step = 0;            ///< Walk: fronts 0..step (the front `step` bright, earlier ones dim)
  std::int64_t highlight = -1;  ///< a cell drawn in kHighlightColour; -1 = none
};

/// The boxes of the inspection: the group's box, then the cells (geometric cubes) in the
/// colours of their verdicts.
std::vector<render::OverlayBox> walkBoxes(const WalkInspection& walk, const WalkOverlay& overlay);

}  // namespace bhviz::app
