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

// Copies cell `c` of `t` to the end of `out` (moments and level; links set by the caller).
void appendCell(Tree& out, const Tree& t, std::uint32_t c) {
  out.first.push_back(0);
  out.count.push_back(0);
  out.child.push_back(0);
  out.childCount.push_back(0);
  out.level.push_back(t.level[c]);
  out.comMass.push_back(t.comMass[c]);
  out.quad.push_back(t.quad[c]);
  out.box.push_back(t.box[c]);
  out.bmax.push_back(t.bmax[c]);
  out.opening.push_back(t.opening[c]);
}

}  // namespace

LetTree essentialTree(const Tree& t, const std::vector<Vec4>& posMass, const MacSetup& mac,
                      const TargetRegion& region) {
  LetTree let;
  if (!region.any() || t.cellCount() == 0) return let;
  Tree& out = let.tree;
  out.frame = t.frame;
  // Breadth-first: source[k] is the cell of `t` that LET cell k copies; an opened cell's
  // children are appended together, so they stay contiguous and each level stays in one run.
  std::vector<std::uint32_t> source{0};
  appendCell(out, t, 0);
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
          appendCell(out, t, ch);
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

constexpr std::uint32_t kLetMagic = 0x4c455431;  // "LET1"

struct LetHeader {
  std::uint32_t magic;
  std::uint32_t levels;  ///< entries of levelBegin
  std::uint64_t cells;
  std::uint64_t particles;
  KeyFrame frame;
};

/// Copies v's bytes to `at`, returns the position after them.
template <typename T>
std::byte* put(std::byte* at, const std::vector<T>& v) {
  if (!v.empty()) std::memcpy(at, v.data(), v.size() * sizeof(T));
  return at + v.size() * sizeof(T);
}

template <typename T>
std::size_t bytesOf(const std::vector<T>& v) {
  return v.size() * sizeof(T);
}

class Reader {
 public:
  Reader(const std::byte* data, std::size_t size) : m_data(data), m_size(size) {}
  template <typename T>
  void get(std::vector<T>& v, std::size_t n) {
    if (n > (m_size - m_at) / sizeof(T)) throw std::invalid_argument("LET bytes end early");
    v.resize(n);
    if (n > 0) std::memcpy(v.data(), m_data + m_at, n * sizeof(T));
    m_at += n * sizeof(T);
  }
  template <typename T>
  T get() {
    std::vector<T> one;
    get(one, 1);
    return one[0];
  }
  bool done() const { return m_at == m_size; }

 private:
  const std::byte* m_data;
  std::size_t m_size;
  std::size_t m_at = 0;
};

}  // namespace

std::size_t appendBytes(const LetTree& let, std::vector<std::byte>& out) {
  const Tree& t = let.tree;
  const LetHeader h{kLetMagic, static_cast<std::uint32_t>(t.levelBegin.size()), t.cellCount(),
                    let.posMass.size(), t.frame};
  const std::size_t size = sizeof h + bytesOf(t.levelBegin) + bytesOf(t.first) + bytesOf(t.count) +
                           bytesOf(t.child) + bytesOf(t.childCount) + bytesOf(t.level) +
                           bytesOf(t.comMass) + bytesOf(t.quad) + bytesOf(t.box) + bytesOf(t.bmax) +
                           bytesOf(t.opening) + bytesOf(let.posMass);
  // One resize for the whole LET: growing the buffer array by array copied it over and over
  // (40 ms for a 28 MB LET at 16 M particles, measured).
  const std::size_t start = out.size();
  out.resize(start + size);
  std::byte* at = out.data() + start;
  std::memcpy(at, &h, sizeof h);
  at += sizeof h;
  at = put(at, t.levelBegin);
  at = put(at, t.first);
  at = put(at, t.count);
  at = put(at, t.child);
  at = put(at, t.childCount);
  at = put(at, t.level);
  at = put(at, t.comMass);
  at = put(at, t.quad);
  at = put(at, t.box);
  at = put(at, t.bmax);
  at = put(at, t.opening);
  put(at, let.posMass);
  return size;
}

std::vector<std::byte> toBytes(const LetTree& let) {
  std::vector<std::byte> out;
  appendBytes(let, out);
  return out;
}

LetTree letFromBytes(const std::byte* data, std::size_t size) {
  Reader in(data, size);
  const auto h = in.get<LetHeader>();
  if (h.magic != kLetMagic) throw std::invalid_argument("not a LET");
  LetTree let;
  Tree& t = let.tree;
  t.frame = h.frame;
  in.get(t.levelBegin, h.levels);
  in.get(t.first, h.cells);
  in.get(t.count, h.cells);
  in.get(t.child, h.cells);
  in.get(t.childCount, h.cells);
  in.get(t.level, h.cells);
  in.get(t.comMass, h.cells);
  in.get(t.quad, h.cells);
  in.get(t.box, h.cells);
  in.get(t.bmax, h.cells);
  in.get(t.opening, h.cells);
  in.get(let.posMass, h.particles);
  if (!in.done()) throw std::invalid_argument("LET bytes run past its last array");
  // Links the walk follows: children after their parent and inside the cells, particle ranges
  // inside the particles.
  for (std::uint64_t k = 0; k < h.cells; ++k) {
    const bool linksOk = t.childCount[k] == 0 || (t.childCount[k] <= 8 && t.child[k] > k &&
                                                  t.child[k] + t.childCount[k] <= h.cells);
    const bool rangeOk = t.first[k] <= h.particles && t.count[k] <= h.particles - t.first[k];
    if (!linksOk || !rangeOk) {
      throw std::invalid_argument("LET cell " + std::to_string(k) + " links outside the LET");
    }
  }
  return let;
}

}  // namespace bhviz::sim
