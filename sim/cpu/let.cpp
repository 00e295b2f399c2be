// Local essential trees: cut from a built tree for another rank's region (sim/let.h), and the
// bytes they travel as. Host code on the host Tree; the CUDA backend cuts from its downloaded
// tree with the same function.

#include "sim/let.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "sim/cpu/cpu_stages.h"

namespace bhviz::sim {

namespace {

/// cpu::classifyCell against the region, with the guard.
cpu::CellVerdict classifyForRegion(const Tree& t, std::uint32_t c, const TargetRegion& region,
                                   const MacSetup& mac) {
  const cpu::CellTest test = cpu::testCell(t, c, region.box, region.accMin, mac);
  const bool open =
      mustOpen(mac.code, t.opening[c] * kLetGuard, test.d2, region.accMin, test.overlap);
  if (!open) return cpu::CellVerdict::Accepted;
  return t.isLeaf(c) ? cpu::CellVerdict::Leaf : cpu::CellVerdict::Opened;
}

}  // namespace

void cpu::appendCellRecord(Tree& out, const Tree& from, std::uint32_t c, const CellLinks& links) {
  out.first.push_back(links.first);
  out.count.push_back(links.count);
  out.child.push_back(links.child);
  out.childCount.push_back(static_cast<std::uint8_t>(links.childCount));
  out.level.push_back(from.level[c]);
  out.comMass.push_back(from.comMass[c]);
  out.quad.push_back(from.quad[c]);
  out.box.push_back(from.box[c]);
  out.bmax.push_back(from.bmax[c]);
  out.opening.push_back(from.opening[c]);
}

LetTree essentialTree(const Tree& t, const std::vector<Vec4>& posMass, const MacSetup& mac,
                      const TargetRegion& region) {
  LetTree let;
  if (!region.any() || t.cellCount() == 0) return let;
  Tree& out = let.tree;
  out.frame = t.frame;
  // Breadth-first: source[k] is the cell of `t` that LET cell k copies; an opened cell's
  // children are appended together, so they stay contiguous and each level stays in one run.
  std::vector<std::uint32_t> source{0};
  cpu::appendCellRecord(out, t, 0, {});
  for (std::size_t k = 0; k < source.size(); ++k) {
    const std::uint32_t c = source[k];
    switch (classifyForRegion(t, c, region, mac)) {
      case cpu::CellVerdict::Accepted:
        break;  // a multipole for every group of the region: no particles, no children
      case cpu::CellVerdict::Leaf:
        out.first[k] = static_cast<std::uint32_t>(let.posMass.size());
        out.count[k] = t.count[c];
        let.posMass.insert(let.posMass.end(), posMass.begin() + t.first[c],
                           posMass.begin() + t.first[c] + t.count[c]);
        break;
      case cpu::CellVerdict::Opened:
        out.child[k] = static_cast<std::uint32_t>(source.size());
        out.childCount[k] = t.childCount[c];
        for (std::uint32_t ch = t.child[c]; ch < t.child[c] + t.childCount[c]; ++ch) {
          source.push_back(ch);
          cpu::appendCellRecord(out, t, ch, {});
        }
        break;
    }
  }
  // Level table: breadth-first order keeps each level's cells together.
  for (std::size_t k = 0; k < out.level.size(); ++k) {
    if (k == 0 || out.level[k] != out.level[k - 1]) {
      out.levelBegin.push_back(static_cast<std::uint32_t>(k));
    }
  }
  out.levelBegin.push_back(static_cast<std::uint32_t>(out.level.size()));
  return let;
}

namespace {

constexpr std::size_t kLetAlign = 16;

std::size_t alignUp(std::size_t n) { return (n + kLetAlign - 1) / kLetAlign * kLetAlign; }

/// Copies v's bytes to `base + at`.
template <typename T>
void put(std::byte* base, std::size_t at, const std::vector<T>& v) {
  if (!v.empty()) std::memcpy(base + at, v.data(), v.size() * sizeof(T));
}

/// Reads n elements at `base + at` into v.
template <typename T>
void get(const std::byte* base, std::size_t at, std::vector<T>& v, std::uint64_t n) {
  v.resize(static_cast<std::size_t>(n));
  if (n > 0) std::memcpy(v.data(), base + at, v.size() * sizeof(T));
}

}  // namespace

LetLayout letLayout(std::uint64_t levels, std::uint64_t cells, std::uint64_t particles) {
  LetLayout l{};
  std::size_t at = alignUp(sizeof(LetHeader));
  auto place = [&at](std::uint64_t n, std::size_t elementBytes) {
    const std::size_t here = at;
    at = alignUp(here + static_cast<std::size_t>(n) * elementBytes);
    return here;
  };
  l.levelBegin = place(levels, sizeof(std::uint32_t));
  l.first = place(cells, sizeof(std::uint32_t));
  l.count = place(cells, sizeof(std::uint32_t));
  l.child = place(cells, sizeof(std::uint32_t));
  l.childCount = place(cells, sizeof(std::uint8_t));
  l.level = place(cells, sizeof(std::uint8_t));
  l.comMass = place(cells, sizeof(Vec4));
  l.quad = place(cells, sizeof(Quadrupole));
  l.box = place(cells, sizeof(Box));
  l.bmax = place(cells, sizeof(float));
  l.opening = place(cells, sizeof(float));
  l.posMass = place(particles, sizeof(Vec4));
  l.size = at;
  return l;
}

std::size_t appendBytes(const LetTree& let, std::vector<std::byte>& out) {
  const Tree& t = let.tree;
  const LetHeader h{kLetMagic, static_cast<std::uint32_t>(t.levelBegin.size()), t.cellCount(),
                    let.posMass.size(), t.frame};
  const LetLayout l = letLayout(h.levels, h.cells, h.particles);
  // One resize for the whole LET: growing the buffer array by array copied it over and over
  // (40 ms for a 28 MB LET at 16 M particles, measured). The padding is zeros.
  const std::size_t start = out.size();
  out.resize(start + l.size);
  std::byte* at = out.data() + start;
  std::memset(at, 0, l.size);
  std::memcpy(at, &h, sizeof h);
  put(at, l.levelBegin, t.levelBegin);
  forEachLetArray(l, t, h.cells, let.posMass, h.particles,
                  [&](std::size_t offset, const auto& v, std::uint64_t) { put(at, offset, v); });
  return l.size;
}

std::vector<std::byte> toBytes(const LetTree& let) {
  std::vector<std::byte> out;
  appendBytes(let, out);
  return out;
}

LetTree letFromBytes(const std::byte* data, std::size_t size) {
  LetHeader h{};
  if (size < sizeof h) throw std::invalid_argument("LET bytes end early");
  std::memcpy(&h, data, sizeof h);
  if (h.magic != kLetMagic) throw std::invalid_argument("not a LET");
  // Counts bounded by the bytes before the layout's arithmetic can overflow.
  if (h.levels > size || h.cells > size || h.particles > size) {
    throw std::invalid_argument("LET bytes end early");
  }
  const LetLayout l = letLayout(h.levels, h.cells, h.particles);
  if (size < l.size) throw std::invalid_argument("LET bytes end early");
  if (size > l.size) throw std::invalid_argument("LET bytes run past its last array");
  LetTree let;
  Tree& t = let.tree;
  t.frame = h.frame;
  get(data, l.levelBegin, t.levelBegin, h.levels);
  forEachLetArray(l, t, h.cells, let.posMass, h.particles,
                  [&](std::size_t offset, auto& v, std::uint64_t n) { get(data, offset, v, n); });
  // Links the walk follows: children after their parent and inside the cells, particle ranges
  // inside the particles.
  for (std::uint64_t k = 0; k < h.cells; ++k) {
    // (in 64 bits: a child link near 2^32 must not wrap past the check)
    const std::uint64_t n = t.childCount[k], child = t.child[k];
    const bool linksOk = n == 0 || (n <= 8 && child > k && child + n <= h.cells);
    const bool rangeOk = t.first[k] <= h.particles && t.count[k] <= h.particles - t.first[k];
    if (!linksOk || !rangeOk) {
      throw std::invalid_argument("LET cell " + std::to_string(k) + " links outside the LET");
    }
  }
  return let;
}

}  // namespace bhviz::sim
