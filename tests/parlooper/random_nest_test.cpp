// Randomized nests (fixed seeds): strings, bounds, blockings with remainders, schedules, grids,
// barriers and 1-4 threads. An oracle independent of the engines predicts every thread's
// sequence of body calls: it enumerates the nest sequentially and gives each point to its owner
// by the rules of docs/loop_string.md. Both engines must match it, and each other.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <climits>
#include <array>
#include <compare>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "run_body.hpp"
#include "weft/parlooper/threaded_loop.hpp"

namespace weft::parlooper {
namespace {

// What one body call saw: ind[x] and the block helper's (begin, end, step) for each loop.
// Fixed-size, so that recording a call does not allocate.
struct Record {
  std::array<std::int64_t, 16> values{};
  std::size_t size = 0;
  void push_back(std::int64_t v) { values[size++] = v; }
  auto operator<=>(const Record&) const = default;
};
using Records = std::vector<Record>;
using PerThread = std::vector<Records>;

std::string describe(const Record& r) {
  std::string s;
  for (std::size_t i = 0; i < r.size; ++i) s += std::to_string(r.values[i]) + " ";
  return s;
}

constexpr int kCases = 1000;
constexpr int kMaxThreads = 4;

struct RandomCase {
  int loops = 1;
  std::vector<LoopSpecs> specs;
  std::string text;
  int threads = 1;
};

int uniform(std::mt19937& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

RandomCase make_case(std::mt19937& rng) {
  RandomCase c;
  c.loops = uniform(rng, 1, 4);
  std::vector<int> levels;
  std::vector<int> occurrences(static_cast<std::size_t>(c.loops));
  for (int x = 0; x < c.loops; ++x) {
    occurrences[static_cast<std::size_t>(x)] = uniform(rng, 1, 3);
    for (int j = 0; j < occurrences[static_cast<std::size_t>(x)]; ++j) levels.push_back(x);
  }
  std::shuffle(levels.begin(), levels.end(), rng);
  const int n = static_cast<int>(levels.size());

  std::vector<bool> upper(levels.size(), false);
  std::vector<std::string> grid(levels.size());
  const int mode = uniform(rng, 0, 5);  // 0: sequential, 1-3: work-shared run, 4-5: grid
  int grid_threads = 1;
  if (mode >= 1 && mode <= 3) {
    const int begin = uniform(rng, 0, n - 1);
    const int length = uniform(rng, 1, std::min(3, n - begin));
    for (int l = begin; l < begin + length; ++l) upper[static_cast<std::size_t>(l)] = true;
  } else if (mode >= 4) {
    std::vector<int> order(levels.size());
    for (int l = 0; l < n; ++l) order[static_cast<std::size_t>(l)] = l;
    std::shuffle(order.begin(), order.end(), rng);
    std::string dims = "RCL";
    std::shuffle(dims.begin(), dims.end(), rng);
    const int splits = uniform(rng, 1, std::min(3, n));
    for (int s = 0; s < splits; ++s) {
      int ways = uniform(rng, 1, 3);
      if (grid_threads * ways > kMaxThreads) ways = 1;
      grid_threads *= ways;
      const auto l = static_cast<std::size_t>(order[static_cast<std::size_t>(s)]);
      upper[l] = true;
      grid[l] = std::string("{") + dims[static_cast<std::size_t>(s)] + ":" + std::to_string(ways) + "}";
    }
  }
  bool enclosed_by_parallel = false;
  for (int l = 0; l < n; ++l) {
    const auto li = static_cast<std::size_t>(l);
    c.text += static_cast<char>((upper[li] ? 'A' : 'a') + levels[li]);
    c.text += grid[li];
    if (!enclosed_by_parallel && uniform(rng, 0, 4) == 0) c.text += '|';
    enclosed_by_parallel = enclosed_by_parallel || upper[li];
  }
  if (mode >= 1 && mode <= 3) {
    const int chunk = uniform(rng, 1, 3);
    switch (uniform(rng, 0, 5)) {
      case 2: c.text += "@schedule(static," + std::to_string(chunk) + ")"; break;
      case 3: c.text += "@schedule(dynamic)"; break;
      case 4: c.text += "@schedule(dynamic," + std::to_string(chunk) + ")"; break;
      case 5: c.text += "@schedule(guided," + std::to_string(chunk) + ")"; break;
      default: break;
    }
  }
  c.threads = mode >= 4 ? uniform(rng, grid_threads, kMaxThreads) : uniform(rng, 1, kMaxThreads);
  for (int x = 0; x < c.loops; ++x) {
    const long start = uniform(rng, -3, 3);
    const long length = uniform(rng, 0, 9) == 0 ? 0 : uniform(rng, 1, c.loops > 2 ? 7 : 12);
    const long step = uniform(rng, 1, 3);
    LoopSpecs spec{start, start + length, step};
    const int blocks = occurrences[static_cast<std::size_t>(x)] - 1 + uniform(rng, 0, 1);
    // Now and then a block far larger than the range: the engines' cost must follow the tuples
    // that exist, not the block size.
    for (int j = 0; j < blocks; ++j)
      spec.block_size.push_back(uniform(rng, 0, 7) == 0 ? step * (INT_MAX / step) : step * uniform(rng, 1, 4));
    c.specs.push_back(spec);
  }
  return c;
}

bool is_grid(ParKind p) { return p == ParKind::rows || p == ParKind::cols || p == ParKind::layers; }

std::int64_t trips(std::int64_t lo, std::int64_t hi, std::int64_t step) {
  return hi > lo ? (hi - lo + step - 1) / step : 0;
}

// Which of n contiguous blocks (the first I % n one longer) holds index k.
std::int64_t block_of(std::int64_t k, std::int64_t iterations, std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j) {
    const std::int64_t first = j * (iterations / n) + std::min(j, iterations % n);
    if (k < first + iterations / n + (j < iterations % n ? 1 : 0)) return j;
  }
  return -1;
}

struct Expectation {
  PerThread per_thread;  // the sequences, when the schedule fixes them
  Records all;           // every body call of every thread
  bool per_thread_known = true;
};

// Enumerates the nest sequentially and hands each point to the threads that own it.
class Oracle {
 public:
  Oracle(const LoopNest& nest, const NestBounds& bounds, int threads)
      : nest_(nest), bounds_(bounds), threads_(threads), parent_(nest.levels.size(), -1),
        value_(nest.levels.size()), lo_(nest.levels.size()), hi_(nest.levels.size()),
        innermost_(static_cast<std::size_t>(nest.num_loops), -1) {
    std::vector<int> latest(kMaxLoops, -1);
    for (std::size_t l = 0; l < nest.levels.size(); ++l) {
      const auto x = static_cast<std::size_t>(nest.levels[l].loop);
      parent_[l] = latest[x];
      latest[x] = static_cast<int>(l);
      innermost_[x] = static_cast<int>(l);
    }
    result_.per_thread.resize(kMaxThreads);
    result_.per_thread_known = !nest.has_run() || nest.schedule.kind == ScheduleKind::static_;
  }

  Expectation run() {
    walk(0);
    return std::move(result_);
  }

 private:
  void walk(std::size_t l) {
    if (l == nest_.levels.size()) {
      visit();
      return;
    }
    const LoopLevel& level = nest_.levels[l];
    const int p = parent_[l];
    const auto pi = static_cast<std::size_t>(p);
    const std::int64_t lo = p < 0 ? bounds_.loop_start[level.loop] : value_[pi];
    const std::int64_t hi = p < 0 ? bounds_.loop_end[level.loop]
                                  : std::min(value_[pi] + bounds_.level_step[p], hi_[pi]);
    if (!counting_ && nest_.has_run() && static_cast<int>(l) == nest_.run_begin) {
      // The run's tuples at this entry, counted by enumerating them: the collapsed index of a
      // tuple is its rank, and no padding exists.
      run_total_ = 0;
      counting_ = true;
      walk_run_levels(l, lo, hi);
      counting_ = false;
      run_rank_ = 0;
    }
    walk_run_levels(l, lo, hi);
  }

  void walk_run_levels(std::size_t l, std::int64_t lo, std::int64_t hi) {
    for (std::int64_t v = lo; v < hi; v += bounds_.level_step[l]) {
      value_[l] = v;
      lo_[l] = lo;
      hi_[l] = hi;
      if (nest_.has_run() && static_cast<int>(l) == nest_.run_begin + nest_.run_length - 1) {
        if (counting_) {
          ++run_total_;
          continue;
        }
        run_index_ = run_rank_++;
      }
      walk(l + 1);  // while counting, only levels inside the run: it stops at the run's last
    }
  }

  Record record() const {
    Record r;
    for (int x = 0; x < nest_.num_loops; ++x) r.push_back(value_[static_cast<std::size_t>(innermost_[static_cast<std::size_t>(x)])]);
    for (int x = 0; x < nest_.num_loops; ++x) {
      const auto l = static_cast<std::size_t>(innermost_[static_cast<std::size_t>(x)]);
      r.push_back(lo_[l]);
      r.push_back(hi_[l]);
      r.push_back(bounds_.level_step[l]);
    }
    return r;
  }

  bool in_run(std::size_t l) const {
    return nest_.has_run() && static_cast<int>(l) >= nest_.run_begin &&
           static_cast<int>(l) < nest_.run_begin + nest_.run_length;
  }

  void visit() {
    const Record r = record();
    result_.all.push_back(r);
    for (int t = 0; t < threads_; ++t)
      if (owns(t)) result_.per_thread[static_cast<std::size_t>(t)].push_back(r);
  }

  bool owns(int t) const {
    if (nest_.has_grid()) {
      if (t >= nest_.grid_threads()) return false;
      const int rc = nest_.grid_rows * nest_.grid_cols;
      const int coordinate[] = {(t % rc) / nest_.grid_cols, t % nest_.grid_cols, t / rc};
      for (std::size_t l = 0; l < nest_.levels.size(); ++l) {
        const LoopLevel& level = nest_.levels[l];
        if (!is_grid(level.par)) continue;
        const int dim = level.par == ParKind::rows ? 0 : level.par == ParKind::cols ? 1 : 2;
        const std::int64_t step = bounds_.level_step[l];
        if (block_of((value_[l] - lo_[l]) / step, trips(lo_[l], hi_[l], step), level.ways) != coordinate[dim])
          return false;
      }
      return true;
    }
    // A nest without a parallel level runs once, on the calling thread (thread 0 here).
    if (!nest_.has_run()) return t == 0;
    const std::int64_t team = threads_;
    if (nest_.schedule.chunk > 0) return (run_index_ / nest_.schedule.chunk) % team == t;
    return block_of(run_index_, run_total_, team) == t;
  }

  const LoopNest& nest_;
  const NestBounds& bounds_;
  int threads_;
  std::vector<int> parent_;
  std::vector<std::int64_t> value_, lo_, hi_;
  std::vector<int> innermost_;
  Expectation result_;
  bool counting_ = false;
  std::int64_t run_total_ = 0;  // tuples of the run at its current entry
  std::int64_t run_rank_ = 0;   // tuples of the current entry visited so far
  std::int64_t run_index_ = 0;  // rank of the tuple being visited
};

struct Actual {
  PerThread per_thread;
  int wrong_helpers = 0;
};

Actual run_case(const RandomCase& c, EngineKind engine) {
  const DynamicThreadedLoop loop(c.specs, c.text, engine);
  const LoopNest& nest = loop.nest();
  Actual actual;
  actual.per_thread.resize(kMaxThreads);
  std::vector<int> wrong(kMaxThreads, 0);
  omp_set_num_threads(c.threads);
  testing::run_body(loop, [&](int* ind) {
    const int tid = DynamicThreadedLoop::get_tid(ind);
    Record r;
    for (int x = 0; x < c.loops; ++x) r.push_back(ind[x]);
    for (int x = 0; x < c.loops; ++x) {
      const LoopBlock block = loop.get_loop_block(static_cast<char>('a' + x), ind);
      r.push_back(block.begin);
      r.push_back(block.end);
      r.push_back(block.step);
    }
    int& bad = wrong[static_cast<std::size_t>(tid)];
    bad += tid != omp_get_thread_num();
    bad += !nest.has_run() && !nest.has_grid() && omp_in_parallel();  // no region for such a nest
    for (int x = 0; x < c.loops; ++x) {
      const char letter = static_cast<char>('a' + x);
      // The loop's outermost parallel occurrence decides what the helpers report.
      ParKind par = ParKind::none;
      int ways = 1;
      for (const LoopLevel& level : nest.levels)
        if (level.loop == x && level.par != ParKind::none) {
          par = level.par;
          ways = level.ways;
          break;
        }
      const ThreadFrame& frame = *frame_of(ind);
      const int expected_dim = par == ParKind::collapse ? tid
                               : par == ParKind::rows   ? frame.row
                               : par == ParKind::cols   ? frame.col
                               : par == ParKind::layers ? frame.layer
                                                        : -1;
      bad += loop.get_tid_in_parallel_dim(letter, ind) != expected_dim;
      bad += loop.get_loop_parallel_degree(letter, ind) != (par == ParKind::collapse ? c.threads : ways);
      bad += static_cast<int>(loop.get_loop_par_type(letter, ind)) != static_cast<int>(par);
      const LoopBlock block = loop.get_loop_block(letter, ind);
      const int extent = loop.get_loop_extent(letter, ind);
      bad += extent != std::min<std::int64_t>(block.step, block.end - ind[x]) || extent < 1;
    }
    actual.per_thread[static_cast<std::size_t>(tid)].push_back(r);
  });
  for (int w : wrong) actual.wrong_helpers += w;
  return actual;
}

Records sorted_union(const PerThread& per_thread) {
  Records all;
  for (const auto& records : per_thread) all.insert(all.end(), records.begin(), records.end());
  std::sort(all.begin(), all.end());
  return all;
}

std::string context(const RandomCase& c, int index) {
  std::string s = "case " + std::to_string(index) + ": \"" + c.text + "\" on " + std::to_string(c.threads) +
                  " threads, specs";
  for (const LoopSpecs& spec : c.specs) {
    s += " {" + std::to_string(spec.start) + "," + std::to_string(spec.end) + "," + std::to_string(spec.step);
    // Appended piece by piece: `"," + std::to_string(b)` trips GCC 12's false -Wstringop-overflow
    // (GCC bug 105329) once GoogleTest's precompiled header changes its inlining.
    for (long b : spec.block_size) s.append(",").append(std::to_string(b));
    s += "}";
  }
  return s;
}

void expect_matches_oracle(const RandomCase& c, int index, const Actual& actual) {
  const DynamicThreadedLoop loop(c.specs, c.text, EngineKind::reference);
  Expectation expected = Oracle(loop.nest(), loop.bounds(), c.threads).run();
  EXPECT_EQ(actual.wrong_helpers, 0) << context(c, index);
  {
    // Every point of the iteration space exactly once.
    Records all = expected.all;
    std::sort(all.begin(), all.end());
    EXPECT_EQ(sorted_union(actual.per_thread), all) << context(c, index);
  }
  if (expected.per_thread_known) {
    for (int t = 0; t < kMaxThreads; ++t) {
      const auto ti = static_cast<std::size_t>(t);
      ASSERT_EQ(actual.per_thread[ti].size(), expected.per_thread[ti].size())
          << context(c, index) << ", thread " << t;
      for (std::size_t k = 0; k < actual.per_thread[ti].size(); ++k)
        ASSERT_EQ(actual.per_thread[ti][k], expected.per_thread[ti][k])
            << context(c, index) << ", thread " << t << ", call " << k << ": got "
            << describe(actual.per_thread[ti][k]) << "expected " << describe(expected.per_thread[ti][k]);
    }
  }
}

TEST(RandomNests, ReferenceEngineMatchesTheOracle) {
  std::mt19937 rng(20240611);
  for (int i = 0; i < kCases; ++i) {
    const RandomCase c = make_case(rng);
    expect_matches_oracle(c, i, run_case(c, EngineKind::reference));
    if (HasFatalFailure()) return;
  }
}

// Passes once the JIT engine is real: its per-thread sequences equal the reference's (and the
// oracle's), call by call.
TEST(RandomNests, JitAndReferenceProduceIdenticalPerThreadSequences) {
  std::mt19937 rng(777);
  for (int i = 0; i < kCases; ++i) {
    const RandomCase c = make_case(rng);
    const Actual jit = run_case(c, EngineKind::jit);
    expect_matches_oracle(c, i, jit);
    if (HasFatalFailure()) return;
    const Actual reference = run_case(c, EngineKind::reference);
    const DynamicThreadedLoop loop(c.specs, c.text, EngineKind::reference);
    const bool fixed = !loop.nest().has_run() || loop.nest().schedule.kind == ScheduleKind::static_;
    if (fixed) {
      ASSERT_EQ(jit.per_thread, reference.per_thread) << context(c, i);
    } else {
      ASSERT_EQ(sorted_union(jit.per_thread), sorted_union(reference.per_thread)) << context(c, i);
    }
  }
}

TEST(RandomNests, GeneratorCoversEveryMode) {
  std::mt19937 rng(20240611);
  int sequential = 0, runs = 0, grids = 0, barriers = 0, nested_in_run = 0, dynamic = 0;
  for (int i = 0; i < kCases; ++i) {
    const RandomCase c = make_case(rng);
    const LoopNest nest = parse_loop_string(c.text, c.loops);
    sequential += !nest.has_run() && !nest.has_grid();
    runs += nest.has_run();
    grids += nest.has_grid();
    dynamic += nest.schedule.kind != ScheduleKind::static_;
    for (const LoopLevel& level : nest.levels) barriers += level.barrier_after;
    for (int l = nest.run_begin + 1; nest.has_run() && l < nest.run_begin + nest.run_length; ++l)
      for (int k = nest.run_begin; k < l; ++k)
        nested_in_run += nest.levels[static_cast<std::size_t>(k)].loop == nest.levels[static_cast<std::size_t>(l)].loop;
  }
  EXPECT_GT(sequential, 100);
  EXPECT_GT(runs, 350);
  EXPECT_GT(grids, 250);
  EXPECT_GT(barriers, 100);
  EXPECT_GT(nested_in_run, 20);
  EXPECT_GT(dynamic, 100);
}

}  // namespace
}  // namespace weft::parlooper
