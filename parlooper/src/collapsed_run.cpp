#include "collapsed_run.hpp"

#include <algorithm>
#include <climits>

namespace weft::parlooper {
namespace {

constexpr std::int64_t kSaturated = INT64_MAX;

std::int64_t saturating_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? kSaturated : r;
}

std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? kSaturated : r;
}

}  // namespace

CollapsedRun::CollapsedRun(const LoopNest& nest) : run_begin_(nest.run_begin) {
  std::vector<int> latest(kMaxLoops, -1);  // level in the nest of each loop's latest occurrence
  for (int l = 0; l < nest.run_begin; ++l)
    latest[static_cast<std::size_t>(nest.levels[static_cast<std::size_t>(l)].loop)] = l;
  std::vector<int> latest_in_run(kMaxLoops, -1);
  for (int k = 0; k < nest.run_length; ++k) {
    const int loop = nest.levels[static_cast<std::size_t>(nest.run_begin + k)].loop;
    const auto x = static_cast<std::size_t>(loop);
    loop_.push_back(loop);
    prev_.push_back(latest_in_run[x]);
    next_.push_back(-1);
    outer_parent_.push_back(latest_in_run[x] < 0 ? latest[x] : -1);
    if (latest_in_run[x] >= 0) next_[static_cast<std::size_t>(latest_in_run[x])] = k;
    latest_in_run[x] = k;
  }
  others_next_.resize(loop_.size());
  for (int k = 0; k < length(); ++k) {
    std::vector<bool> seen(kMaxLoops, false);
    seen[static_cast<std::size_t>(loop_[static_cast<std::size_t>(k)])] = true;
    for (int j = k + 1; j < length(); ++j) {
      const auto y = static_cast<std::size_t>(loop_[static_cast<std::size_t>(j)]);
      if (!seen[y]) others_next_[static_cast<std::size_t>(k)].push_back(j);
      seen[y] = true;
    }
  }
}

std::int64_t CollapsedRun::leaves(const NestBounds& bounds, const RunLevelState* state, int k,
                                  std::int64_t length) const noexcept {
  // A range of `length` at level k holds length / step full blocks, each worth `full` of the next
  // level, and one shorter block that recurses: one step down the chain per remainder.
  std::int64_t total = 0;
  while (true) {
    const std::int64_t s = step(bounds, k);
    const int next = next_[static_cast<std::size_t>(k)];
    if (next < 0) return saturating_add(total, length / s + (length % s != 0 ? 1 : 0));
    const std::int64_t blocks = length / s;
    if (blocks > 0)
      total = saturating_add(total, saturating_mul(blocks, state[static_cast<std::size_t>(next)].full));
    length %= s;
    if (length == 0) return total;
    k = next;
  }
}

void CollapsedRun::fill_full(const NestBounds& bounds, RunLevelState* state) const noexcept {
  // Innermost first: leaves(k, ...) reads `full` of the levels after k only.
  for (int k = length() - 1; k >= 0; --k) {
    const int p = prev_[static_cast<std::size_t>(k)];
    state[static_cast<std::size_t>(k)].full = p < 0 ? 0 : leaves(bounds, state, k, step(bounds, p));
  }
}

std::int64_t CollapsedRun::count(const NestBounds& bounds, RunLevelState* state) const noexcept {
  fill_full(bounds, state);
  std::int64_t total = 1;
  for (int k = 0; k < length(); ++k) {
    if (!is_head(k)) continue;
    const RunLevelState& s = state[static_cast<std::size_t>(k)];
    if (s.entry_hi <= s.entry_lo) return 0;
    total = saturating_mul(total, leaves(bounds, state, k, s.entry_hi - s.entry_lo));
  }
  return total;
}

void CollapsedRun::seek(const NestBounds& bounds, RunLevelState* state, std::int64_t index) const noexcept {
  // The length of the range that the next level j of some loop will get, given levels < j fixed.
  const auto pending_length = [&](int j) -> std::int64_t {
    const RunLevelState& s = state[static_cast<std::size_t>(j)];
    const int p = prev_[static_cast<std::size_t>(j)];
    if (p < 0) return s.entry_hi - s.entry_lo;
    const RunLevelState& ps = state[static_cast<std::size_t>(p)];
    return std::min(ps.value + step(bounds, p), ps.bound) - ps.value;
  };
  for (int k = 0; k < length(); ++k) {
    RunLevelState& s = state[static_cast<std::size_t>(k)];
    const int p = prev_[static_cast<std::size_t>(k)];
    std::int64_t lo = s.entry_lo, hi = s.entry_hi;
    if (p >= 0) {
      const RunLevelState& ps = state[static_cast<std::size_t>(p)];
      lo = ps.value;
      hi = std::min(ps.value + step(bounds, p), ps.bound);
    }
    // Tuples under one value of this level, from the other loops still to come: their next level
    // each, with the range it will get. Every factor is a real, non-empty part of the space, so
    // the products stay within count().
    std::int64_t others = 1;
    for (const int j : others_next_[static_cast<std::size_t>(k)])
      others *= leaves(bounds, state, j, pending_length(j));
    const std::int64_t st = step(bounds, k);
    const int next = next_[static_cast<std::size_t>(k)];
    std::int64_t child = 0;
    if (next < 0) {
      child = index / others;
      index -= child * others;
    } else {
      // Full blocks first (all alike), then the remainder block.
      const std::int64_t blocks = (hi - lo) / st;
      const std::int64_t block_size = blocks > 0 ? state[static_cast<std::size_t>(next)].full * others : 0;
      if (blocks > 0 && index / block_size < blocks) {
        child = index / block_size;
        index -= child * block_size;
      } else {
        child = blocks;
        index -= blocks * block_size;
      }
    }
    s.value = lo + child * st;
    s.bound = hi;
  }
}

std::int64_t CollapsedRun::max_count(const NestBounds& bounds) const {
  // leaves() grows with the length, and the loops' factors are independent: the largest count is
  // the product of each head's largest range.
  std::vector<RunLevelState> state(static_cast<std::size_t>(length()));
  fill_full(bounds, state.data());
  std::int64_t total = 1;
  for (int k = 0; k < length(); ++k) {
    if (!is_head(k)) continue;
    const int x = loop_[static_cast<std::size_t>(k)];
    std::int64_t longest = std::max<std::int64_t>(0, bounds.loop_end[x] - bounds.loop_start[x]);
    const int outer = outer_parent_[static_cast<std::size_t>(k)];
    if (outer >= 0) longest = std::min(longest, bounds.level_step[outer]);
    if (longest == 0) return 0;
    total = saturating_mul(total, leaves(bounds, state.data(), k, longest));
  }
  return total > INT64_MAX / 2 ? -1 : total;
}

std::int64_t collapsed_run_count(const CollapsedRun* run, const NestBounds* bounds,
                                 RunLevelState* state) noexcept {
  return run->count(*bounds, state);
}

void collapsed_run_seek(const CollapsedRun* run, const NestBounds* bounds, RunLevelState* state,
                        std::int64_t index) noexcept {
  run->seek(*bounds, state, index);
}

}  // namespace weft::parlooper
