// The walk's counters on their way to the host (walk.h): read at once for tests and diagnostics
// (downloadCounters), or queued behind the walks into pinned memory and read where the backend
// waits anyway (CounterReadback).
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "sim/cuda/cuda_check.cuh"
#include "sim/cuda/walk.h"

namespace bhviz::sim::cuda {

namespace {

/// One walk's counts; throws if the walk reported a stack overflow.
InteractionCounts countsOf(const WalkCounters& h) {
  if (h.overflow != 0) {
    throw std::runtime_error("CUDA walk: a warp's cell stack overflowed (capacity " +
                             std::to_string(kWalkStackCapacity) +
                             " cells); the forces are incomplete");
  }
  return {h.cell, h.particle, h.targets, h.groups, h.expanded};
}

}  // namespace

InteractionCounts downloadCounters(const WalkCounters* d_counters, std::uint32_t* groups) {
  WalkCounters h{};
  copyToHost(&h, d_counters, sizeof(h));
  if (groups != nullptr) *groups = h.groups;
  return countsOf(h);
}

bool CounterReadback::queue(const WalkCounters* d_counters, bool add, Stream stream) {
  if (m_used == kSlots) return false;
  if (m_slots.size() == 0) m_slots.resize(kSlots * sizeof(WalkCounters));  // never grows after
  auto* slot = reinterpret_cast<WalkCounters*>(m_slots.data()) + m_used;
  BHVIZ_CUDA_CHECK(
      cudaMemcpyAsync(slot, d_counters, sizeof(WalkCounters), cudaMemcpyDeviceToHost, stream));
  m_add[m_used++] = add;
  return true;
}

void CounterReadback::collect(InteractionCounts& counts, std::uint32_t* groups) {
  const std::size_t used = m_used;
  m_used = 0;  // freed even when a walk below reports an overflow
  const auto* slots = reinterpret_cast<const WalkCounters*>(m_slots.data());
  for (std::size_t k = 0; k < used; ++k) {
    InteractionCounts c = countsOf(slots[k]);
    if (m_add[k]) c.targets = c.groups = 0;  // a target of several trees is one
    counts += c;
    if (groups != nullptr) *groups = slots[k].groups;
  }
}

}  // namespace bhviz::sim::cuda
