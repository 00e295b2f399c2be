// The near field pair by pair (P2pMode::Mutual; seed 004, Shan & Lei): walkGroups' cells and
// leaves, but each near pair that both sides need is evaluated once, Newton's third law giving
// the other particle its share.
//
// Which pairs both sides need. Plain P2P gives every particle of group g every particle of the
// leaves on g's list. Cut the particles into pieces, each the particles of one group in one leaf
// (or of one leaf in no group: runs without an active particle). Piece a of group g needs piece b
// of group h when b's leaf is on g's list; when also a's leaf is on h's list, the two pieces
// need each other, and their pairs are evaluated once, by the lower group (by the lower piece
// within one group), each side getting its share. A piece needed one way (b's side does not
// need a, or b is in no group) is evaluated one way, as plain P2P. So the pairs are plain P2P's,
// the same ones; only their order and the rounding of the sums change.
//
// Two passes over the groups: the walk with its multipoles (the lists' leaves kept), then the
// near field. A counter-force that lands in another group goes to a separate array with
// atomic adds, added to the forces at the end.
#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/common/gravity.h"
#include "sim/cpu/cpu_stages.h"
#include "sim/cpu/target_block.h"

namespace bhviz::sim::cpu {

namespace {

constexpr std::uint32_t kNoGroup = std::numeric_limits<std::uint32_t>::max();

/// Particles [begin, end) of the key order.
struct Range {
  std::uint32_t begin = 0, end = 0;
};

/// Which leaf and which group (kNoGroup: none) each particle is in.
struct Owners {
  std::vector<std::uint32_t> leaf, group;

  Owners(const Tree& t, const Groups& g, std::size_t n) : leaf(n, 0), group(n, kNoGroup) {
    const auto cells = static_cast<std::int64_t>(t.cellCount());
#pragma omp parallel for schedule(static)
    for (std::int64_t c = 0; c < cells; ++c) {
      if (!t.isLeaf(static_cast<std::uint32_t>(c))) continue;
      std::fill_n(leaf.begin() + t.first[c], t.count[c], static_cast<std::uint32_t>(c));
    }
    for (std::size_t k = 0; k < g.size(); ++k) {
      std::fill_n(group.begin() + g.first[k], g.count[k], static_cast<std::uint32_t>(k));
    }
  }
};

/// A piece: particles of one group in one leaf (or of one leaf in no group).
struct Piece {
  Range range;
  std::uint32_t owner;  // the leaf (a target piece) or the group (a source piece)
};

/// `r` cut where `owner` changes, each piece labelled with it.
void cutPieces(Range r, const std::vector<std::uint32_t>& owner, std::vector<Piece>& out) {
  out.clear();
  for (std::uint32_t i = r.begin; i < r.end;) {
    const std::uint32_t o = owner[i];
    std::uint32_t j = i + 1;
    while (j < r.end && owner[j] == o) ++j;
    out.push_back({{i, j}, o});
    i = j;
  }
}

/// Every particle of one group (inactive ones too: they are sources of a mutual pair) in
/// separate arrays, with their near-field sums. Rows are the group's particles from 0; the loops
/// over rows vectorise.
class PairBlock {
 public:
  void load(std::uint32_t first, std::uint32_t count, const std::vector<Vec4>& posMass) {
    m_first = first;
    for (auto* v : {&m_x, &m_y, &m_z, &m_m}) v->resize(count);
    for (auto* v : {&m_ax, &m_ay, &m_az, &m_pot}) v->assign(count, 0.0f);
    for (std::uint32_t k = 0; k < count; ++k) {
      const Vec4 p = posMass[first + k];
      m_x[k] = p.x, m_y[k] = p.y, m_z[k] = p.z, m_m[k] = p.w;
    }
  }
  std::uint64_t size() const { return m_x.size(); }
  /// The rows of the particles `r` (inside the group).
  Range rows(Range r) const { return {r.begin - m_first, r.end - m_first}; }

  /// The particles of `sources` on `rows`, one way.
  void addOneWay(Range rows, const std::vector<Vec4>& posMass, Range sources, float eps2) {
    const float *x = m_x.data(), *y = m_y.data(), *z = m_z.data();
    float *ax = m_ax.data(), *ay = m_ay.data(), *az = m_az.data(), *pot = m_pot.data();
    for (std::uint32_t j = sources.begin; j < sources.end; ++j) {
      const Vec4 source = posMass[j];
#pragma omp simd
      for (std::uint32_t k = rows.begin; k < rows.end; ++k) {
        Vec4 a{ax[k], ay[k], az[k], pot[k]};
        p2p(Vec3{x[k], y[k], z[k]}, source, eps2, a);
        ax[k] = a.x, ay[k] = a.y, az[k] = a.z, pot[k] = a.w;
      }
    }
  }

  /// Every pair between `rows` and the particles `sources` of another group, once: the
  /// counter-forces of the active ones are added to `counter` (four floats a particle),
  /// atomically.
  void addMutual(Range rows, const std::vector<Vec4>& posMass,
                 const std::vector<std::uint8_t>& active, Range sources, float eps2,
                 std::vector<float>& counter) {
    for (std::uint32_t j = sources.begin; j < sources.end; ++j) {
      const Vec4 sum = pairsWith(posMass[j], rows, eps2);
      if (!active[j]) continue;
      float* c = counter.data() + 4 * std::size_t(j);
#pragma omp atomic
      c[0] += sum.x;
#pragma omp atomic
      c[1] += sum.y;
#pragma omp atomic
      c[2] += sum.z;
#pragma omp atomic
      c[3] += sum.w;
    }
  }

  /// Every pair between `rows` and `others` (rows of this group too, disjoint), once.
  void addMutual(Range rows, Range others, float eps2) {
    for (std::uint32_t j = others.begin; j < others.end; ++j) add(j, pairsWith(row(j), rows, eps2));
  }

  /// Every pair within `rows`, once.
  void addWithin(Range rows, float eps2) {
    for (std::uint32_t j = rows.begin + 1; j < rows.end; ++j) {
      add(j, pairsWith(row(j), {rows.begin, j}, eps2));
    }
  }

  /// Adds the sums of the group's active particles to accPot (the potential too if `potential`).
  void store(const std::vector<std::uint8_t>& active, std::vector<Vec4>& accPot,
             bool potential) const {
    for (std::size_t k = 0; k < m_x.size(); ++k) {
      if (!active[m_first + k]) continue;
      Vec4& out = accPot[m_first + k];
      out = {out.x + m_ax[k], out.y + m_ay[k], out.z + m_az[k],
             potential ? out.w + m_pot[k] : out.w};
    }
  }

 private:
  Vec4 row(std::uint32_t k) const { return {m_x[k], m_y[k], m_z[k], m_m[k]}; }
  void add(std::uint32_t k, const Vec4& a) {
    m_ax[k] += a.x, m_ay[k] += a.y, m_az[k] += a.z, m_pot[k] += a.w;
  }

  /// Source j on `rows`, both ways: their sums grow, and j's share of the pairs is returned.
  Vec4 pairsWith(const Vec4& j, Range rows, float eps2) {
    const float *x = m_x.data(), *y = m_y.data(), *z = m_z.data(), *m = m_m.data();
    float *ax = m_ax.data(), *ay = m_ay.data(), *az = m_az.data(), *pot = m_pot.data();
    float jx = 0.0f, jy = 0.0f, jz = 0.0f, jw = 0.0f;
#pragma omp simd reduction(+ : jx, jy, jz, jw)
    for (std::uint32_t k = rows.begin; k < rows.end; ++k) {
      Vec4 a{ax[k], ay[k], az[k], pot[k]}, b{};
      p2pPair(Vec4{x[k], y[k], z[k], m[k]}, j, eps2, a, b);
      ax[k] = a.x, ay[k] = a.y, az[k] = a.z, pot[k] = a.w;
      jx += b.x, jy += b.y, jz += b.z, jw += b.w;
    }
    return {jx, jy, jz, jw};
  }

  std::uint32_t m_first = 0;
  std::vector<float> m_x, m_y, m_z, m_m, m_ax, m_ay, m_az, m_pot;
};

std::uint64_t length(Range r) { return r.end - r.begin; }

/// Rows of a group that take one source piece the same way, gathered while they are
/// consecutive and evaluated together.
struct RowRun {
  Range rows;
  bool open = false;

  /// Appends `r` when it continues the run; otherwise returns false (flush, then start()).
  bool extend(Range r) {
    if (!open || rows.end != r.begin) return false;
    rows.end = r.end;
    return true;
  }
  void start(Range r) { rows = r, open = true; }
};

/// The near field of one group at a time (the second pass).
class NearField {
 public:
  struct Scratch {
    PairBlock block;
    std::vector<Piece> mine, theirs;
    std::uint64_t evaluated = 0, both = 0;  // MutualCounts::pairs and ::onceBoth
  };

  NearField(const Tree& t, const Groups& groups,
            const std::vector<std::vector<std::uint32_t>>& leaves, const Owners& owners,
            const std::vector<Vec4>& posMass, const std::vector<std::uint8_t>& active, float eps2,
            bool potential, std::vector<float>& counter)
      : m_tree(t),
        m_groups(groups),
        m_leaves(leaves),
        m_owners(owners),
        m_posMass(posMass),
        m_active(active),
        m_eps2(eps2),
        m_potential(potential),
        m_counter(counter) {}

  /// Group g's near field: its own share added to accPot, the other groups' to the counter.
  void sum(std::uint32_t g, Scratch& s, std::vector<Vec4>& accPot) const {
    const Range own{m_groups.first[g], m_groups.first[g] + m_groups.count[g]};
    s.block.load(own.begin, m_groups.count[g], m_posMass);
    cutPieces(own, m_owners.leaf, s.mine);
    within(g, s);
    for (std::uint32_t leaf : m_leaves[g]) {
      const Range r{m_tree.first[leaf], m_tree.first[leaf] + m_tree.count[leaf]};
      cutPieces(r, m_owners.group, s.theirs);
      for (const Piece& b : s.theirs) {
        if (b.owner != g) fromOther(g, b, s);
      }
    }
    s.block.store(m_active, accPot, m_potential);
  }

 private:
  bool onList(std::uint32_t group, std::uint32_t leaf) const {
    const std::vector<std::uint32_t>& l = m_leaves[group];
    return std::binary_search(l.begin(), l.end(), leaf);
  }

  /// The pairs within g: a piece of g takes another (or itself) when the other's leaf is on
  /// g's list; when both leaves are, the pair is mutual.
  void within(std::uint32_t g, Scratch& s) const {
    PairBlock& block = s.block;
    bool all = true;
    for (const Piece& a : s.mine) all = all && onList(g, a.owner);
    if (all) {  // the common case: one triangle
      const std::uint64_t n = block.size();
      block.addWithin({0, static_cast<std::uint32_t>(n)}, m_eps2);
      s.both += n * (n - 1) / 2;
      return;
    }
    for (const Piece& b : s.mine) {
      if (!onList(g, b.owner)) continue;  // no piece of g takes b
      const Range bRows = block.rows(b.range);
      for (const Piece& a : s.mine) {
        const Range aRows = block.rows(a.range);
        if (!onList(g, a.owner)) {
          block.addOneWay(aRows, m_posMass, b.range, m_eps2);
          s.evaluated += length(aRows) * length(bRows);
        } else if (a.range.begin == b.range.begin) {
          block.addWithin(aRows, m_eps2);
          s.both += length(aRows) * (length(aRows) - 1) / 2;
        } else if (a.range.begin < b.range.begin) {
          block.addMutual(aRows, bRows, m_eps2);
          s.both += length(aRows) * length(bRows);
        }
      }
    }
  }

  /// Source piece b of another group (or of none) on g's pieces: mutual where b's group needs
  /// the piece (evaluated here when g is the lower group), one way where it does not.
  void fromOther(std::uint32_t g, const Piece& b, Scratch& s) const {
    const std::uint32_t h = b.owner;
    RowRun oneWay, mutual;
    const auto flushOneWay = [&] {
      if (!oneWay.open) return;
      s.block.addOneWay(oneWay.rows, m_posMass, b.range, m_eps2);
      s.evaluated += length(oneWay.rows) * length(b.range);
      oneWay.open = false;
    };
    const auto flushMutual = [&] {
      if (!mutual.open) return;
      s.block.addMutual(mutual.rows, m_posMass, m_active, b.range, m_eps2, m_counter);
      s.both += length(mutual.rows) * length(b.range);
      mutual.open = false;
    };
    for (const Piece& a : s.mine) {
      const Range rows = s.block.rows(a.range);
      if (h == kNoGroup || !onList(h, a.owner)) {
        if (!oneWay.extend(rows)) flushOneWay(), oneWay.start(rows);
      } else if (h > g) {
        if (!mutual.extend(rows)) flushMutual(), mutual.start(rows);
      }  // else h's task evaluates the pair
    }
    flushOneWay();
    flushMutual();
  }

  const Tree& m_tree;
  const Groups& m_groups;
  const std::vector<std::vector<std::uint32_t>>& m_leaves;
  const Owners& m_owners;
  const std::vector<Vec4>& m_posMass;
  const std::vector<std::uint8_t>& m_active;
  float m_eps2;
  bool m_potential;  // WalkSettings::potential
  std::vector<float>& m_counter;
};

}  // namespace

InteractionCounts walkGroupsMutual(const Tree& t, const Groups& groups,
                                   const std::vector<Vec4>& posMass,
                                   const std::vector<std::uint8_t>& active, const WalkSettings& s,
                                   std::vector<Vec4>& accPot, std::vector<std::uint32_t>* work,
                                   MutualCounts* pairCounts) {
  const float eps2 = s.softening * s.softening;
  const auto groupCount = static_cast<std::int64_t>(groups.size());
  if (t.cellCount() == 0) return {};
  std::vector<std::vector<std::uint32_t>> leaves(groups.size());  // each group's, ascending
  std::uint64_t cellCount = 0, particleCount = 0, targets = 0, expandedCount = 0;
  // 1. The walk: multipoles written, leaves kept.
#pragma omp parallel reduction(+ : cellCount, particleCount, targets, expandedCount)
  {
    TargetBlock block;
#pragma omp for schedule(dynamic, 4)
    for (std::int64_t gi = 0; gi < groupCount; ++gi) {
      const auto g = static_cast<std::size_t>(gi);
      InteractionList list = buildInteractionList(t, groups.box[g], groups.accMin[g], s.mac);
      block.load(groups, g, posMass, active, s.potential, s.expansion);
      const std::size_t expanded = block.addCells(t, list.cells, s.quadrupole, eps2);
      block.store(accPot, WalkMode::Write);
      std::uint64_t leafParticles = 0;
      for (std::uint32_t leaf : list.leaves) leafParticles += t.count[leaf];
      std::sort(list.leaves.begin(), list.leaves.end());
      leaves[g] = std::move(list.leaves);
      if (work != nullptr) block.addWork(*work, list.cells.size() + leafParticles);
      cellCount += list.cells.size() * block.size();
      particleCount += leafParticles * block.size();
      expandedCount += expanded * block.size();
      targets += block.size();
    }
  }
  // 2. The near field, piece by piece.
  const Owners owners(t, groups, posMass.size());
  std::vector<float> counter(4 * posMass.size(), 0.0f);
  const NearField near{t, groups, leaves, owners, posMass, active, eps2, s.potential, counter};
  std::uint64_t evaluated = 0, both = 0;
#pragma omp parallel reduction(+ : evaluated, both)
  {
    NearField::Scratch scratch;
#pragma omp for schedule(dynamic, 4)
    for (std::int64_t g = 0; g < groupCount; ++g) {
      near.sum(static_cast<std::uint32_t>(g), scratch, accPot);
    }
    evaluated += scratch.evaluated;
    both += scratch.both;
  }
  // 3. The counter-forces.
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(posMass.size()); ++i) {
    if (!active[i]) continue;
    const float* c = counter.data() + 4 * i;
    Vec4& out = accPot[i];
    out = {out.x + c[0], out.y + c[1], out.z + c[2], s.potential ? out.w + c[3] : out.w};
  }
  if (pairCounts != nullptr) *pairCounts = {evaluated + both, both, particleCount};
  return {cellCount, particleCount, targets, 0, expandedCount};
}

}  // namespace bhviz::sim::cpu
