// The reference engine: a direct interpreter of engine.hpp's semantics, written for clarity. It
// is the oracle the JIT engine is tested against and the fallback off x86-64.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "collapsed_run.hpp"
#include "weft/parlooper/engine.hpp"

namespace weft::parlooper {
namespace {

std::int64_t trip_count(std::int64_t lo, std::int64_t hi, std::int64_t step) {
  return hi > lo ? (hi - lo + step - 1) / step : 0;
}

class ReferenceEngine final : public Engine {
 public:
  explicit ReferenceEngine(const LoopNest& nest) : nest_(nest), parent_(nest.levels.size(), -1) {
    std::vector<int> latest(kMaxLoops, -1);
    for (std::size_t l = 0; l < nest.levels.size(); ++l) {
      auto& last = latest[static_cast<std::size_t>(nest.levels[l].loop)];
      parent_[l] = last;
      last = static_cast<int>(l);
    }
    if (nest_.has_run()) run_.emplace(nest_);
  }

  void run(const ThreadRun& run) const override {
    Walk walk(*this, run);
    walk.level(0);
  }

  const char* name() const override { return "reference"; }

 private:
  // The state of one thread's walk through the nest.
  class Walk {
   public:
    Walk(const ReferenceEngine& engine, const ThreadRun& run)
        : nest_(engine.nest_),
          parent_(engine.parent_),
          collapsed_(engine.run_ ? &*engine.run_ : nullptr),
          run_(run),
          value_(nest_.levels.size()),
          bound_(nest_.levels.size()) {}

    void level(int l) {
      if (l == static_cast<int>(nest_.levels.size())) {
        run_.body(run_.body_ctx, run_.frame->ind);
        return;
      }
      const LoopLevel& lv = nest_.levels[static_cast<std::size_t>(l)];
      if (l == nest_.run_begin && nest_.has_run()) {
        work_shared_run();
      } else {
        const auto [lo, hi] = range(l);
        const std::int64_t step = run_.bounds->level_step[l];
        if (lv.par == ParKind::none) {
          for (std::int64_t v = lo; v < hi; v += step) enter(l, v, hi);
        } else {
          // A grid split: the coordinate's contiguous share of the trip count.
          const std::int64_t trips = trip_count(lo, hi, step);
          const std::int64_t ways = lv.ways;
          const std::int64_t j = coordinate(lv.par);
          const std::int64_t first = j * (trips / ways) + std::min(j, trips % ways);
          const std::int64_t count = trips / ways + (j < trips % ways ? 1 : 0);
          for (std::int64_t k = first; k < first + count; ++k) enter(l, lo + k * step, hi);
        }
      }
      if (lv.barrier_after) team_barrier_wait(run_.barrier);
    }

    // Runs collapsed iterations [begin, end) of the work-shared run: from the tuple at `begin`,
    // the run's levels as a sequential nest, until end - begin tuples are done.
    void run_chunk(std::int64_t begin, std::int64_t end) {
      if (begin >= end) return;
      collapsed_->seek(*run_.bounds, state_.data(), begin);
      remaining_ = end - begin;
      run_level(0, true);
    }

   private:
    struct Range {
      std::int64_t lo, hi;
    };

    // The range of level l at entry, from the current values of the enclosing levels.
    Range range(int l) const {
      const LoopLevel& lv = nest_.levels[static_cast<std::size_t>(l)];
      const int p = parent_[static_cast<std::size_t>(l)];
      if (p < 0) return {run_.bounds->loop_start[lv.loop], run_.bounds->loop_end[lv.loop]};
      const auto pi = static_cast<std::size_t>(p);
      return {value_[pi], std::min(value_[pi] + run_.bounds->level_step[p], bound_[pi])};
    }

    void set(int l, std::int64_t v, std::int64_t hi) {
      const auto li = static_cast<std::size_t>(l);
      value_[li] = v;
      bound_[li] = hi;
      run_.frame->ind[nest_.levels[li].loop] = static_cast<int>(v);
    }

    void enter(int l, std::int64_t v, std::int64_t hi) {
      set(l, v, hi);
      level(l + 1);
    }

    int coordinate(ParKind par) const {
      return par == ParKind::rows ? run_.frame->row : par == ParKind::cols ? run_.frame->col : run_.frame->layer;
    }

    void work_shared_run() {
      state_.assign(static_cast<std::size_t>(collapsed_->length()), RunLevelState{});
      for (int k = 0; k < collapsed_->length(); ++k) {
        if (!collapsed_->is_head(k)) continue;
        const Range r = range(nest_.run_begin + k);
        state_[static_cast<std::size_t>(k)].entry_lo = r.lo;
        state_[static_cast<std::size_t>(k)].entry_hi = r.hi;
      }
      const std::int64_t iterations = collapsed_->count(*run_.bounds, state_.data());
      const Schedule& schedule = nest_.schedule;
      const std::int64_t tid = run_.frame->tid;
      const std::int64_t team = run_.frame->team_size;
      if (schedule.kind == ScheduleKind::static_ && schedule.chunk == 0) {
        const std::int64_t first = tid * (iterations / team) + std::min(tid, iterations % team);
        run_chunk(first, first + iterations / team + (tid < iterations % team ? 1 : 0));
      } else if (schedule.kind == ScheduleKind::static_) {
        const std::int64_t chunk = schedule.chunk;
        for (std::int64_t b = tid * chunk; b < iterations; b += team * chunk)
          run_chunk(b, std::min(b + chunk, iterations));
      } else {
        run_chunks_dynamic(
            schedule, iterations,
            [](void* state, std::int64_t b, std::int64_t e) { static_cast<Walk*>(state)->run_chunk(b, e); },
            this);
      }
    }

    // Level k of the run. `resume`: on the path to the sought tuple, where a level starts at the
    // value seek() found instead of at the start of its range.
    void run_level(int k, bool resume) {
      const int l = nest_.run_begin + k;
      const RunLevelState& sought = state_[static_cast<std::size_t>(k)];
      const Range r = resume ? Range{sought.value, sought.bound} : range(l);
      const std::int64_t step = run_.bounds->level_step[l];
      for (std::int64_t v = r.lo; v < r.hi && remaining_ > 0; v += step) {
        set(l, v, r.hi);
        if (k + 1 == nest_.run_length) {
          --remaining_;
          level(l + 1);
        } else {
          run_level(k + 1, resume && v == r.lo);
        }
      }
    }

    const LoopNest& nest_;
    const std::vector<int>& parent_;
    const CollapsedRun* collapsed_;
    const ThreadRun& run_;
    std::vector<std::int64_t> value_;     // per level: current value
    std::vector<std::int64_t> bound_;     // per level: the bound inner occurrences clamp to
    std::vector<RunLevelState> state_;    // per run level
    std::int64_t remaining_ = 0;          // tuples of the current chunk still to run
  };

  LoopNest nest_;
  std::vector<int> parent_;  // per level: the level of the previous occurrence of its loop, or -1
  std::optional<CollapsedRun> run_;
};

}  // namespace

std::unique_ptr<Engine> make_reference_engine(const LoopNest& nest) {
  return std::make_unique<ReferenceEngine>(nest);
}

}  // namespace weft::parlooper
