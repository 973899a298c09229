#include "weft/tuner/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <weft/jit/cpu.hpp>
#include <weft/jit/isa_traits.hpp>

#include "weft/jit/error.hpp"

namespace weft::tuner {
namespace {

using parlooper::LoopNest;
using parlooper::ParKind;

// What one level of the nest does, from one thread's point of view.
struct LevelShape {
  int loop = 0;
  double range = 0;        // extent of this occurrence's range (index units)
  double step = 1;         // its step
  double iterations = 1;   // ceil(range / step)
  double per_thread = 1;   // iterations one thread runs each time the level is entered
};

std::vector<LevelShape> shape_levels(const LoopNest& nest, std::span<const LogicalLoop> loops,
                                     const std::vector<std::vector<long>>& blocks, int threads) {
  if (static_cast<std::size_t>(nest.num_loops) != loops.size())
    throw Error("cost model: the nest has " + std::to_string(nest.num_loops) + " loops, the workload " +
                std::to_string(loops.size()));
  std::vector<LevelShape> shapes;
  std::vector<double> parent_range(loops.size());
  for (std::size_t x = 0; x < loops.size(); ++x)
    parent_range[x] = static_cast<double>(loops[x].end - loops[x].begin);
  int ways_left = threads;
  for (const auto& level : nest.levels) {
    const auto x = static_cast<std::size_t>(level.loop);
    const auto j = static_cast<std::size_t>(level.occurrence);
    const bool innermost = level.occurrence == level.num_occurrences - 1;
    LevelShape s;
    s.loop = level.loop;
    s.range = parent_range[x];
    const std::vector<long> none;
    const std::vector<long>& b = x < blocks.size() ? blocks[x] : none;
    if (innermost) s.step = static_cast<double>(loops[x].step);
    else s.step = j < b.size() ? std::min(static_cast<double>(b[j]), s.range) : s.range;
    s.step = std::max(s.step, 1.0);
    s.iterations = std::max(1.0, std::ceil(s.range / s.step));
    s.per_thread = s.iterations;
    if (level.par == ParKind::collapse) {
      const double w = std::min<double>(ways_left, s.iterations);
      s.per_thread = std::ceil(s.iterations / w);
      ways_left = static_cast<int>(std::ceil(ways_left / w));
    } else if (level.par != ParKind::none) {
      s.per_thread = std::ceil(s.iterations / level.ways);
    }
    parent_range[x] = s.step;
    shapes.push_back(s);
  }
  return shapes;
}

// Index extents of a level's iterations (the last one shorter in a remainder block).
std::vector<double> iteration_extents(const LevelShape& s) {
  std::vector<double> e;
  for (double begin = 0; begin < s.range; begin += s.step) e.push_back(std::min(s.step, s.range - begin));
  if (e.empty()) e.push_back(0);
  return e;
}

// Slowest part over the average when `work` is split into `parts` contiguous chunks like OpenMP's
// static schedule (the first (n mod parts) chunks one iteration longer).
double split_imbalance(const std::vector<double>& work, int parts) {
  const std::size_t n = work.size();
  double total = 0, slowest = 0;
  std::size_t next = 0;
  for (int p = 0; p < parts; ++p) {
    const std::size_t len = n / static_cast<std::size_t>(parts) + (static_cast<std::size_t>(p) < n % static_cast<std::size_t>(parts) ? 1 : 0);
    double w = 0;
    for (std::size_t i = 0; i < len; ++i) w += work[next++];
    slowest = std::max(slowest, w);
    total += w;
  }
  return total > 0 ? slowest * parts / total : 1.0;
}

// By work, not iteration count: remainder blocks make some iterations shorter than others.
double imbalance_of(const LoopNest& nest, const std::vector<LevelShape>& shapes, int threads) {
  if (!nest.is_parallel()) return threads > 1 ? threads : 1.0;
  std::vector<double> run_work{1.0};  // collapsed iterations of the work-shared run
  double factor = 1;
  for (std::size_t l = 0; l < shapes.size(); ++l) {
    const ParKind par = nest.levels[l].par;
    if (par == ParKind::none) continue;
    const std::vector<double> extents = iteration_extents(shapes[l]);
    if (par == ParKind::collapse) {
      if (run_work.size() * extents.size() > (1u << 16)) continue;  // huge runs balance anyway
      std::vector<double> product;
      for (double a : run_work)
        for (double b : extents) product.push_back(a * b);
      run_work.swap(product);
    } else {
      factor *= split_imbalance(extents, nest.levels[l].ways);
    }
  }
  if (nest.has_run()) factor *= split_imbalance(run_work, threads);
  return factor;
}

}  // namespace

MachineModel MachineModel::current() {
  MachineModel m;
  const jit::CpuFeatures& cpu = jit::cpu_features();
  const jit::Isa isa = jit::selected_isa();
  // 2 vector pipes x lanes x 2 flops (1 without FMA) at ~3 GHz. The reference ISA (SSE2 vectors
  // of 4 floats, no FMA) comes to the 2 x 4 x 1 flops of a scalar-ish guess; AVX-512 counts its
  // full 16 lanes even where the datapath is narrower (jit::datapath_bytes), as it always did.
  const jit::IsaTraits& traits = jit::isa_traits(isa);
  const double flops_per_pipe = traits.lanes(sizeof(float)) * (traits.fma ? 2.0 : 1.0);
  m.peak_flops_per_thread = 2 * flops_per_pipe * 3.2e9;
  if (cpu.l1d_bytes) m.cache_bytes[0] = cpu.l1d_bytes;
  if (cpu.l2_bytes) m.cache_bytes[1] = cpu.l2_bytes;
  if (cpu.l3_bytes) m.cache_bytes[2] = cpu.l3_bytes;
  return m;
}

std::string CostEstimate::to_string() const {
  char text[256];
  std::snprintf(text, sizeof text,
                "%.3g s (compute %.3g s, L1 %.3g MB, L2 %.3g MB, L3 %.3g MB, imbalance %.3f, %.3g calls)",
                seconds, compute_seconds, traffic_bytes[0] / 1e6, traffic_bytes[1] / 1e6,
                traffic_bytes[2] / 1e6, imbalance, calls_per_thread);
  return text;
}

double parallel_imbalance(const LoopNest& nest, std::span<const LogicalLoop> loops,
                          const std::vector<std::vector<long>>& blocks, int threads) {
  return imbalance_of(nest, shape_levels(nest, loops, blocks, threads), threads);
}

CostEstimate estimate_cost(const LoopNest& nest, std::span<const LogicalLoop> loops,
                           const std::vector<std::vector<long>>& blocks, const CostInputs& inputs,
                           const MachineModel& machine, int threads) {
  const auto shapes = shape_levels(nest, loops, blocks, threads);
  const std::size_t depth = shapes.size();
  CostEstimate e;
  e.imbalance = imbalance_of(nest, shapes, threads);

  // Body steps one thread covers along loop x inside the sub-nest of levels [p, depth).
  auto steps_in_subnest = [&](std::size_t p, int x) {
    for (std::size_t q = p; q < depth; ++q) {
      if (shapes[q].loop != x) continue;
      const double extent = std::min(shapes[q].range, shapes[q].per_thread * shapes[q].step);
      return std::max(1.0, extent / static_cast<double>(loops[static_cast<std::size_t>(x)].step));
    }
    return 1.0;
  };
  auto footprint = [&](std::size_t p, const TensorUse& t) {
    double f = t.tile_bytes;
    for (int x : t.loops) f *= steps_in_subnest(p, x);
    return f;
  };
  auto indexes = [](const TensorUse& t, int x) {
    return std::find(t.loops.begin(), t.loops.end(), x) != t.loops.end();
  };

  e.calls_per_thread = 1;
  for (const auto& s : shapes) e.calls_per_thread *= s.per_thread;

  double memory_seconds = 0;
  for (int c = 0; c < 3; ++c) {
    double capacity = static_cast<double>(machine.cache_bytes[c]);
    if (c == 2) capacity /= std::max(1, threads);
    capacity *= 0.75;  // room for everything else (conflicts, stack, prefetched lines)
    std::size_t fit = depth;
    for (std::size_t p = 0; p <= depth; ++p) {
      double total = 0;
      for (const auto& t : inputs.tensors) total += footprint(p, t);
      if (total <= capacity) {
        fit = p;
        break;
      }
    }
    double traffic = 0;
    for (const auto& t : inputs.tensors) {
      double executions = 1;
      bool reused = true;  // across the enclosing loops that do not move this tile
      for (std::size_t q = fit; q-- > 0;) {
        if (reused && !indexes(t, shapes[q].loop)) continue;
        reused = false;
        executions *= shapes[q].per_thread;
      }
      traffic += footprint(fit, t) * executions * (t.written ? 2 : 1);
    }
    e.traffic_bytes[c] = traffic;
    memory_seconds += traffic / machine.fill_bandwidth[c];
  }
  e.compute_seconds = inputs.total_flops / std::max(1, threads) /
                          (machine.peak_flops_per_thread * inputs.body_efficiency) +
                      e.calls_per_thread * inputs.call_overhead_seconds;
  e.seconds = (e.compute_seconds + memory_seconds) * e.imbalance;
  return e;
}

}  // namespace weft::tuner
