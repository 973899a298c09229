// Fuzz target: the loop_string parser, nest construction (LoopSpecs checks) and execution on both
// engines, against docs/loop_string.md.
//
// Input (text, every byte string decodes to a case):
//   threads=3              team size 1..4 (other values wrap)
//   call=team              optional: every thread of an enclosing parallel region makes the call
//                          (each runs the whole nest on a nested team of its own)
//   throw=17               optional: the 18th body call (in arrival order) throws
//   spec=0,7,1,5,2         one per loop: start, end, step, block sizes...
//   loop=AAccbb@schedule(static)      the loop_string: everything after "loop=" to the end
//
// Properties:
// - parsing either succeeds or throws LoopStringError (caret inside the string); an accepted nest is
//   what the text says (letters, case, one run, grids, barrier placement, schedule) and its
//   canonical string parses to the same nest;
// - construction succeeds exactly when the LoopSpecs follow the documented rules (for nests small
//   enough to run), else throws LoopStringError;
// - running (both engines) visits every point of the unblocked iteration space exactly once (once
//   per caller for calls from a team); grid levels go to the threads the grid rule names; static
//   schedules give each thread its documented chunk of the true collapsed iteration count (the
//   balance rule); every thread sees its calls in nest order; engines agree call by call where the
//   schedule fixes the order; init and term run once per participating thread around its calls; a
//   nest without parallel levels runs on the calling thread and its helpers say so; a grid larger
//   than the team and an exception from the body come back as documented.
//
// Switches (environment, defaults on, the fixed engine semantics): WEFT_FUZZ_BALANCE (the static
// split), WEFT_FUZZ_HUGE_BLOCKS (steps and block sizes up to INT_MAX), WEFT_FUZZ_SEQUENTIAL_ONCE
// (a string without upper-case letters runs once, on the calling thread).
#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "fuzz_support.hpp"
#include "weft/parlooper/render.hpp"
#include "weft/parlooper/threaded_loop.hpp"

namespace {

using namespace weft::parlooper;
using weft::fuzz::check;
using weft::fuzz::fail;

constexpr std::int64_t kMaxPoints = 100000;  // beyond it a valid nest is built but not run
constexpr std::int64_t kMaxWalk = 2000000;   // level iterations of the oracle's walk
// Barriers a run crosses, at most: each costs a wake-up of every thread, up to 0.2 ms with more
// threads than cores (3 on 2: 580,291 barriers of a nest with no point took minutes), and a nest
// may cross one per outer iteration even where its parallel loops are empty.
constexpr std::int64_t kMaxBarriers = 20000;
constexpr int kMaxThreads = 4;
constexpr std::int64_t kSmall = 4096;        // steps and block sizes above it count as huge
constexpr std::size_t kMaxSpecs = kMaxLoops + 1;

struct Config {
  bool balance = weft::fuzz::env_flag("WEFT_FUZZ_BALANCE", true);
  bool huge_blocks = weft::fuzz::env_flag("WEFT_FUZZ_HUGE_BLOCKS", true);
  bool sequential_once = weft::fuzz::env_flag("WEFT_FUZZ_SEQUENTIAL_ONCE", true);
};
const Config& config() {
  static const Config c;
  return c;
}

struct Case {
  int threads = 1;
  bool team_call = false;
  std::int64_t throw_at = -1;
  std::vector<LoopSpecs> specs;
  std::string text;
};

Case decode(std::string_view input) {
  const weft::fuzz::Fields fields(input, "loop");
  Case c;
  const std::int64_t t = weft::fuzz::first_int(fields.get("threads"), 1);
  c.threads = 1 + static_cast<int>((static_cast<std::uint64_t>(t) - 1) % kMaxThreads);
  c.team_call = fields.get("call") == "team";
  if (fields.has("throw")) c.throw_at = weft::fuzz::first_int(fields.get("throw"), -1);
  for (const std::string_view line : fields.get_all("spec")) {
    if (c.specs.size() == kMaxSpecs) break;
    const std::vector<std::int64_t> v = weft::fuzz::int_list(line);
    LoopSpecs spec(v.size() > 0 ? v[0] : 0, v.size() > 1 ? v[1] : 0, v.size() > 2 ? v[2] : 1);
    for (std::size_t i = 3; i < v.size() && i < 3 + 600; ++i) spec.block_size.push_back(v[i]);
    c.specs.push_back(spec);
  }
  if (c.specs.empty()) c.specs.emplace_back(0L, 1L, 1L);
  c.text = std::string(fields.get("loop"));
  return c;
}

std::string describe(const Case& c) {
  std::string s = "loop_string \"" + weft::fuzz::to_printable(c.text) + "\", " + std::to_string(c.threads) +
                  " threads" + (c.team_call ? " (call from a team)" : "");
  if (c.throw_at >= 0) s += ", body throws at call " + std::to_string(c.throw_at);
  s += ", specs";
  for (const LoopSpecs& spec : c.specs) {
    s += " {" + std::to_string(spec.start) + "," + std::to_string(spec.end) + "," + std::to_string(spec.step);
    if (!spec.block_size.empty()) {
      s += ",{";
      for (std::size_t i = 0; i < spec.block_size.size() && i < 8; ++i)
        s += (i ? "," : "") + std::to_string(spec.block_size[i]);
      if (spec.block_size.size() > 8) s += ",...";
      s += "}";
    }
    s += "}";
  }
  return s;
}

bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_grid(ParKind p) { return p == ParKind::rows || p == ParKind::cols || p == ParKind::layers; }

std::int64_t trips(std::int64_t lo, std::int64_t hi, std::int64_t step) {
  return hi > lo ? (hi - lo + step - 1) / step : 0;
}

// Which of n contiguous blocks of `total` (the first total % n one longer) holds index k.
std::int64_t block_of(std::int64_t k, std::int64_t total, std::int64_t n) {
  const std::int64_t base = total / n, rem = total % n;
  if (k < rem * (base + 1)) return k / (base + 1);
  return rem + (k - rem * (base + 1)) / base;
}

// ---------------------------------------------------------------------------------------------
// Parser properties

void check_parse_error(const LoopStringError& e, const Case& c) {
  check(e.position() <= e.loop_string().size(), [&] {
    return "LoopStringError position " + std::to_string(e.position()) + " beyond its string of " +
           std::to_string(e.loop_string().size()) + " bytes: " + describe(c);
  });
  check(!e.problem().empty() && std::strchr(e.what(), '^') != nullptr,
        [&] { return "LoopStringError without a problem or a caret: " + std::string(e.what()); });
}

// The accepted nest against the text it came from and the rules of the grammar.
void check_nest(const LoopNest& nest, const Case& c, int num_loops) {
  const auto where = [&] { return describe(c); };
  const std::string& text = c.text;
  check(nest.num_loops == num_loops, [&] { return "nest.num_loops differs: " + where(); });
  check(!nest.levels.empty() && nest.levels.size() <= static_cast<std::size_t>(kMaxLevels),
        [&] { return "accepted a nest of " + std::to_string(nest.levels.size()) + " levels: " + where(); });
  // The letters of the text (grids and clauses skipped) are the levels, in order and case.
  std::vector<std::pair<int, bool>> letters;
  int bars = 0;
  // Grids "{R:2}" and inline specs "[0,8,1,(4)]" follow a letter; neither holds letters or bars.
  char closing = 0;
  for (const char ch : text) {
    if (closing != 0) {
      if (ch == closing) closing = 0;
      continue;
    }
    if (ch == '@') break;
    if (ch == '{') closing = '}';
    else if (ch == '[') closing = ']';
    else if (is_lower(ch) || is_upper(ch)) letters.emplace_back(is_upper(ch) ? ch - 'A' : ch - 'a', is_upper(ch));
    else if (ch == '|') ++bars;
    else fail("accepted a character outside the grammar (" + weft::fuzz::to_printable(std::string(1, ch)) + "): " + where());
  }
  check(letters.size() == nest.levels.size(), [&] { return "levels differ from the letters of the text: " + where(); });
  std::vector<int> count(static_cast<std::size_t>(num_loops), 0);
  int barriers = 0;
  for (std::size_t l = 0; l < nest.levels.size(); ++l) {
    const LoopLevel& level = nest.levels[l];
    check(level.loop == letters[l].first && (level.par != ParKind::none) == letters[l].second,
          [&] { return "level " + std::to_string(l) + " is not the text's letter: " + where(); });
    check(level.loop >= 0 && level.loop < num_loops, [&] { return "level loop out of range: " + where(); });
    check(level.occurrence == count[static_cast<std::size_t>(level.loop)]++,
          [&] { return "occurrences misnumbered: " + where(); });
    barriers += level.barrier_after;
  }
  check(barriers == bars, [&] { return "barriers differ from the text's '|': " + where(); });
  for (const LoopLevel& level : nest.levels)
    check(level.num_occurrences == count[static_cast<std::size_t>(level.loop)],
          [&] { return "num_occurrences wrong: " + where(); });
  for (int x = 0; x < num_loops; ++x)
    check(count[static_cast<std::size_t>(x)] > 0, [&] { return "accepted a nest where a loop does not appear: " + where(); });

  // At most one work-shared run: exactly the collapse levels, adjacent.
  int collapse = 0, first_collapse = -1, last_collapse = -1;
  for (std::size_t l = 0; l < nest.levels.size(); ++l)
    if (nest.levels[l].par == ParKind::collapse) {
      ++collapse;
      if (first_collapse < 0) first_collapse = static_cast<int>(l);
      last_collapse = static_cast<int>(l);
    }
  if (collapse == 0) {
    check(!nest.has_run(), [&] { return "a run without collapse levels: " + where(); });
  } else {
    check(last_collapse - first_collapse + 1 == collapse && nest.run_begin == first_collapse &&
              nest.run_length == collapse,
          [&] { return "the work-shared run is not one adjacent run of upper-case letters: " + where(); });
  }
  // Grids: each dimension once, the grid sizes are the ways, never mixed with a run.
  long long rows = 1, cols = 1, layers = 1;
  int dims[3] = {0, 0, 0};
  for (const LoopLevel& level : nest.levels) {
    if (!is_grid(level.par)) {
      check(level.ways == 1, [&] { return "ways on a level without a grid: " + where(); });
      continue;
    }
    check(level.ways >= 1, [&] { return "a grid of no ways: " + where(); });
    const int d = level.par == ParKind::rows ? 0 : level.par == ParKind::cols ? 1 : 2;
    ++dims[d];
    (d == 0 ? rows : d == 1 ? cols : layers) = level.ways;
  }
  check(dims[0] <= 1 && dims[1] <= 1 && dims[2] <= 1, [&] { return "a grid dimension used twice: " + where(); });
  check(nest.grid_rows == rows && nest.grid_cols == cols && nest.grid_layers == layers,
        [&] { return "grid sizes differ from the levels' ways: " + where(); });
  check(rows * cols * layers <= INT_MAX, [&] { return "a grid of more than INT_MAX threads: " + where(); });
  check(!(nest.has_grid() && nest.has_run()), [&] { return "a grid mixed with a work-shared run: " + where(); });
  // A barrier has no parallel level around it.
  for (std::size_t l = 0; l < nest.levels.size(); ++l) {
    if (!nest.levels[l].barrier_after) continue;
    for (std::size_t k = 0; k < l; ++k)
      check(nest.levels[k].par == ParKind::none,
            [&] { return "accepted a barrier inside a parallel level: " + where(); });
  }
  check(nest.has_run() || nest.schedule == Schedule{},
        [&] { return "a schedule without a work-shared run: " + where(); });
  check(nest.schedule.chunk >= 0, [&] { return "a negative chunk: " + where(); });

  // The canonical spelling is the same nest.
  LoopNest again;
  try {
    again = parse_loop_string(nest.canonical, num_loops);
  } catch (const weft::Error& e) {
    fail("the canonical string \"" + nest.canonical + "\" does not parse: " + e.what() + "\n" + where());
  }
  check(again.canonical == nest.canonical && again.levels == nest.levels && again.schedule == nest.schedule &&
            again.inline_specs == nest.inline_specs &&
            again.run_begin == nest.run_begin && again.run_length == nest.run_length &&
            again.grid_rows == nest.grid_rows && again.grid_cols == nest.grid_cols &&
            again.grid_layers == nest.grid_layers,
        [&] { return "the canonical string \"" + nest.canonical + "\" parses to another nest: " + where(); });
  check(!render(nest).empty(), [&] { return "render() is empty: " + where(); });
}

// The LoopSpecs a nest runs with: the given ones, with the fields of the string's inline specs
// ("a[start,end,step,(blocks)]") replacing theirs.
std::vector<LoopSpecs> effective_specs(const LoopNest& nest, const std::vector<LoopSpecs>& given) {
  std::vector<LoopSpecs> specs = given;
  for (const InlineSpec& inline_spec : nest.inline_specs) {
    check(inline_spec.loop >= 0 && static_cast<std::size_t>(inline_spec.loop) < specs.size(),
          [&] { return "an inline spec for a loop beyond the nest: " + nest.canonical; });
    LoopSpecs& s = specs[static_cast<std::size_t>(inline_spec.loop)];
    if (inline_spec.has_start) s.start = inline_spec.start;
    if (inline_spec.has_end) s.end = inline_spec.end;
    if (inline_spec.has_step) s.step = inline_spec.step;
    if (!inline_spec.block_size.empty()) s.block_size = inline_spec.block_size;
  }
  return specs;
}

// ---------------------------------------------------------------------------------------------
// LoopSpecs rules (docs/loop_string.md, "Declaring loops" and "Errors")

bool fits_int(std::int64_t v) { return v >= INT_MIN && v <= INT_MAX; }

bool specs_follow_rules(const LoopNest& nest, const std::vector<LoopSpecs>& specs) {
  for (int x = 0; x < nest.num_loops; ++x) {
    const LoopSpecs& s = specs[static_cast<std::size_t>(x)];
    if (!fits_int(s.start) || !fits_int(s.end) || s.step <= 0 || s.step > INT_MAX) return false;
    int occurrences = 0;
    for (const LoopLevel& level : nest.levels) occurrences += level.loop == x;
    if (static_cast<int>(s.block_size.size()) < occurrences - 1) return false;
    for (int j = 0; j < occurrences - 1; ++j) {
      const long b = s.block_size[static_cast<std::size_t>(j)];
      if (b <= 0 || b > INT_MAX || b % s.step != 0) return false;
    }
  }
  return true;
}

// A valid step or used block size above kSmall: where the engines' padded counting went wrong.
bool uses_huge_sizes(const LoopNest& nest, const std::vector<LoopSpecs>& specs) {
  const auto huge = [](long v) { return v > kSmall && v <= INT_MAX; };
  for (int x = 0; x < nest.num_loops; ++x) {
    const LoopSpecs& s = specs[static_cast<std::size_t>(x)];
    if (huge(s.step)) return true;
    int occurrences = 0;
    for (const LoopLevel& level : nest.levels) occurrences += level.loop == x;
    for (int j = 0; j < occurrences - 1 && j < static_cast<int>(s.block_size.size()); ++j)
      if (huge(s.block_size[static_cast<std::size_t>(j)])) return true;
  }
  return false;
}

// The run's collapsed count as the engines counted it before the rewrite: an inner occurrence of
// a loop whose parent is in the run spans the parent's full block. Only for --no-huge-blocks,
// which keeps away from what is known to be slow or rejected on those engines.
std::int64_t padded_run_slots(const LoopNest& nest, const std::vector<LoopSpecs>& specs) {
  if (!nest.has_run()) return 0;
  std::int64_t slots = 1;
  for (int l = nest.run_begin; l < nest.run_begin + nest.run_length; ++l) {
    const LoopLevel& level = nest.levels[static_cast<std::size_t>(l)];
    const LoopSpecs& s = specs[static_cast<std::size_t>(level.loop)];
    const long step = level.occurrence + 1 < level.num_occurrences ? s.block_size[static_cast<std::size_t>(level.occurrence)] : s.step;
    std::int64_t span = s.end - s.start;
    for (int k = nest.run_begin; k < l; ++k) {
      const LoopLevel& outer = nest.levels[static_cast<std::size_t>(k)];
      if (outer.loop == level.loop && outer.occurrence + 1 == level.occurrence)
        span = s.block_size[static_cast<std::size_t>(outer.occurrence)];
    }
    slots = weft::fuzz::sat_mul(slots, span > 0 ? (span + step - 1) / step : 0);
  }
  return slots;
}

// ---------------------------------------------------------------------------------------------
// The oracle: the nest walked sequentially, straight from docs/loop_string.md, Rule 1, with the
// owner of each point by Rule 2.

constexpr std::int64_t kAnyOwner = -1;

struct Expected {
  std::int64_t points = 0;
  std::vector<std::int64_t> stride;   // per loop: point index stride
  std::vector<std::int64_t> trips;    // per loop
  std::vector<std::int64_t> order;    // per point: position in the sequential walk
  std::vector<std::int64_t> owner;    // per point: the thread that must run it, or kAnyOwner
  std::vector<std::int64_t> entry;    // per point: which entry of the work-shared run (or -1)
  std::vector<std::int64_t> collapsed;  // per point: collapsed iteration within its entry
  std::vector<std::int64_t> entry_iterations;  // per entry: the true collapsed iteration count
};

class Walk {
 public:
  Walk(const LoopNest& nest, const std::vector<LoopSpecs>& specs, int threads, Expected& out)
      : nest_(nest), specs_(specs), threads_(threads), out_(out), n_(nest.levels.size()),
        parent_(n_, -1), step_(n_), value_(n_), lo_(n_), hi_(n_),
        innermost_(static_cast<std::size_t>(nest.num_loops), -1) {
    std::vector<int> latest(static_cast<std::size_t>(nest.num_loops), -1);
    for (std::size_t l = 0; l < n_; ++l) {
      const LoopLevel& level = nest.levels[l];
      const auto x = static_cast<std::size_t>(level.loop);
      parent_[l] = latest[x];
      latest[x] = static_cast<int>(l);
      innermost_[x] = static_cast<int>(l);
      const LoopSpecs& s = specs[x];
      step_[l] = level.occurrence + 1 < level.num_occurrences ? s.block_size[static_cast<std::size_t>(level.occurrence)] : s.step;
    }
    run_end_ = nest.has_run() ? static_cast<std::size_t>(nest.run_begin + nest.run_length) : n_ + 1;
  }

  // False when the walk would take more than kMaxWalk level iterations, or a run would cross more
  // than kMaxBarriers barriers.
  bool run() {
    out_.order.assign(static_cast<std::size_t>(out_.points), -1);
    out_.owner.assign(static_cast<std::size_t>(out_.points), kAnyOwner);
    out_.entry.assign(static_cast<std::size_t>(out_.points), -1);
    out_.collapsed.assign(static_cast<std::size_t>(out_.points), -1);
    if (!walk(0)) return false;
    for (std::size_t p = 0; p < out_.owner.size(); ++p) {
      if (out_.entry[p] < 0 || !nest_.has_run()) continue;
      const std::int64_t k = out_.collapsed[p];
      const std::int64_t total = out_.entry_iterations[static_cast<std::size_t>(out_.entry[p])];
      const Schedule& s = nest_.schedule;
      if (s.kind != ScheduleKind::static_) continue;
      out_.owner[p] = s.chunk > 0 ? (k / s.chunk) % threads_ : block_of(k, total, threads_);
    }
    return true;
  }

 private:
  bool walk(std::size_t l) {
    if (nest_.has_run() && l == static_cast<std::size_t>(nest_.run_begin)) {
      entry_ = static_cast<std::int64_t>(out_.entry_iterations.size());
      out_.entry_iterations.push_back(0);
    }
    if (l == run_end_) k_ = out_.entry_iterations.back()++;
    if (l == n_) return visit();
    const LoopLevel& level = nest_.levels[l];
    const int p = parent_[l];
    const auto pi = static_cast<std::size_t>(p);
    const LoopSpecs& s = specs_[static_cast<std::size_t>(level.loop)];
    const std::int64_t lo = p < 0 ? s.start : value_[pi];
    const std::int64_t hi = p < 0 ? s.end : std::min(value_[pi] + step_[pi], hi_[pi]);
    for (std::int64_t v = lo; v < hi; v += step_[l]) {
      if (++iterations_ > kMaxWalk) return false;
      value_[l] = v;
      lo_[l] = lo;
      hi_[l] = hi;
      if (!walk(l + 1)) return false;
    }
    // The level's barrier follows its whole loop, also when that loop had nothing to do.
    return !level.barrier_after || ++barriers_ <= kMaxBarriers;
  }

  bool visit() {
    std::int64_t index = 0;
    for (int x = 0; x < nest_.num_loops; ++x) {
      const auto xi = static_cast<std::size_t>(x);
      const std::int64_t v = value_[static_cast<std::size_t>(innermost_[xi])];
      index += (v - specs_[xi].start) / specs_[xi].step * out_.stride[xi];
    }
    const auto pi = static_cast<std::size_t>(index);
    if (out_.order[pi] != -1) fail("oracle: a point visited twice by the oracle's own walk");
    out_.order[pi] = order_++;
    if (nest_.has_run()) {
      out_.entry[pi] = entry_;
      out_.collapsed[pi] = k_;
    }
    if (nest_.has_grid()) {
      std::int64_t coordinate[3] = {0, 0, 0};
      for (std::size_t l = 0; l < n_; ++l) {
        const LoopLevel& level = nest_.levels[l];
        if (!is_grid(level.par)) continue;
        const int d = level.par == ParKind::rows ? 0 : level.par == ParKind::cols ? 1 : 2;
        coordinate[d] = block_of((value_[l] - lo_[l]) / step_[l], trips(lo_[l], hi_[l], step_[l]), level.ways);
      }
      out_.owner[pi] = (coordinate[2] * nest_.grid_rows + coordinate[0]) * nest_.grid_cols + coordinate[1];
    }
    return true;
  }

  const LoopNest& nest_;
  const std::vector<LoopSpecs>& specs_;
  std::int64_t threads_;
  Expected& out_;
  std::size_t n_;
  std::vector<int> parent_;
  std::vector<std::int64_t> step_, value_, lo_, hi_;
  std::vector<int> innermost_;
  std::size_t run_end_;
  std::int64_t iterations_ = 0, barriers_ = 0, order_ = 0, entry_ = -1, k_ = -1;
};

// ---------------------------------------------------------------------------------------------
// Running a nest and recording what it does

struct BodyThrow {};

struct Recorder {
  const DynamicThreadedLoop* loop = nullptr;
  const std::vector<LoopSpecs>* specs = nullptr;
  int num_loops = 0;
  std::int64_t capacity = 0;
  std::int64_t throw_at = -1;
  bool check_helpers = false;
  bool check_hooks = true;
  bool per_caller = false;  // a call from every thread of a team
  bool sequential = false;  // a nest without parallel levels (helpers report no parallelism)
  std::thread::id caller;
  std::atomic<std::int64_t> next{0};
  std::vector<int> ind;            // capacity x num_loops
  std::vector<int> tid;            // per call: get_tid(ind)
  std::vector<int> omp_tid;        // per call: omp_get_thread_num()
  std::vector<char> on_caller;     // per call: ran on the thread that called run()
  std::vector<int> caller_tid;     // per call: the calling thread's number in the enclosing team
  std::vector<int> team_size;      // per call: the size of the team running the nest
  std::array<std::atomic<int>, kMaxThreads> inits{}, terms{};
  std::atomic<int> hook_errors{0};
  std::mutex mutex;
  std::string helper_error;

  void note_helper_error(std::string message) {
    std::lock_guard lock(mutex);
    if (helper_error.empty()) helper_error = std::move(message);
  }
};

// Hooks count per thread of the team running the nest, or per caller for calls from a team
// (whose nested teams have one thread unless nesting is enabled).
int hook_slot(const Recorder& r) {
  return r.per_caller ? (omp_get_level() > 0 ? omp_get_ancestor_thread_num(1) : 0) : omp_get_thread_num();
}
void check_helpers(Recorder& r, const int* ind) {
  const DynamicThreadedLoop& loop = *r.loop;
  for (int x = 0; x < r.num_loops; ++x) {
    const char letter = static_cast<char>('a' + x);
    const LoopBlock block = loop.get_loop_block(letter, ind);
    const int extent = loop.get_loop_extent(letter, ind);
    const long step = (*r.specs)[static_cast<std::size_t>(x)].step;
    if (block.step != step || ind[x] < block.begin || ind[x] >= block.end || (ind[x] - block.begin) % step != 0 ||
        extent != std::min<long>(step, block.end - ind[x]) || extent < 1)
      r.note_helper_error("get_loop_block('" + std::string(1, letter) + "') = [" + std::to_string(block.begin) +
                          ", " + std::to_string(block.end) + ") step " + std::to_string(block.step) + ", extent " +
                          std::to_string(extent) + " at ind " + std::to_string(ind[x]));
    const int degree = loop.get_loop_parallel_degree(letter, ind);
    const int dim = loop.get_tid_in_parallel_dim(letter, ind);
    if (r.sequential && (loop.get_loop_par_type(letter, ind) != THREADED_LOOP_NO_PARALLEL || degree != 1 || dim != -1))
      r.note_helper_error("a nest without parallel levels reports loop '" + std::string(1, letter) +
                          "' as parallel (type " + std::to_string(loop.get_loop_par_type(letter, ind)) + ", degree " +
                          std::to_string(degree) + ", dim " + std::to_string(dim) + ")");
    if (degree < 1 || dim < -1 || dim >= std::max(degree, 1))
      r.note_helper_error("get_loop_parallel_degree / get_tid_in_parallel_dim('" + std::string(1, letter) +
                          "') = " + std::to_string(degree) + " / " + std::to_string(dim));
  }
}

void record_body(void* ctx, int* ind) {
  try {
    auto& r = *static_cast<Recorder*>(ctx);
    const std::int64_t i = r.next.fetch_add(1, std::memory_order_relaxed);
    const int omp_thread = omp_get_thread_num();
    const int slot = hook_slot(r);
    if (r.check_hooks && slot >= 0 && slot < kMaxThreads &&
        (r.inits[static_cast<std::size_t>(slot)].load() != 1 || r.terms[static_cast<std::size_t>(slot)].load() != 0))
      r.hook_errors.fetch_add(1);
    if (i < r.capacity) {
      const auto k = static_cast<std::size_t>(i);
      std::memcpy(&r.ind[k * static_cast<std::size_t>(r.num_loops)], ind, sizeof(int) * static_cast<std::size_t>(r.num_loops));
      r.tid[k] = DynamicThreadedLoop::get_tid(ind);
      r.omp_tid[k] = omp_thread;
      r.on_caller[k] = std::this_thread::get_id() == r.caller;
      r.caller_tid[k] = omp_get_level() > 0 ? omp_get_ancestor_thread_num(1) : 0;
      r.team_size[k] = frame_of(ind)->team_size;
    }
    if (r.check_helpers) check_helpers(r, ind);
    if (i == r.throw_at) throw BodyThrow{};
  } catch (...) {
    // The engines run generated code, which exceptions cannot cross: hand it to the runtime.
    weft::parlooper::detail::capture_body_exception();
  }
}

void init_hook(void* ctx) {
  auto& r = *static_cast<Recorder*>(ctx);
  const int t = hook_slot(r);
  if (t >= 0 && t < kMaxThreads) r.inits[static_cast<std::size_t>(t)].fetch_add(1);
}
void term_hook(void* ctx) {
  auto& r = *static_cast<Recorder*>(ctx);
  const int t = hook_slot(r);
  if (t >= 0 && t < kMaxThreads) r.terms[static_cast<std::size_t>(t)].fetch_add(1);
}

enum class Outcome { ok, body_throw, weft_error, other_error, mixed };

const char* name(Outcome o) {
  switch (o) {
    case Outcome::ok: return "no exception";
    case Outcome::body_throw: return "the body's exception";
    case Outcome::weft_error: return "weft::Error";
    case Outcome::other_error: return "an exception of another type";
    case Outcome::mixed: return "different outcomes on different threads of the team";
  }
  return "?";
}

Outcome call(const DynamicThreadedLoop& loop, Recorder& r, std::string& message) {
  try {
    loop.run(&record_body, &r, ThreadHook{&init_hook, &r}, ThreadHook{&term_hook, &r});
  } catch (const BodyThrow&) {
    return Outcome::body_throw;
  } catch (const weft::Error& e) {
    message = e.what();
    return Outcome::weft_error;
  } catch (const std::exception& e) {
    message = e.what();
    return Outcome::other_error;
  } catch (...) {
    return Outcome::other_error;
  }
  return Outcome::ok;
}

// Runs the nest on `threads` threads; returns false when OpenMP did not give that many (not
// weft's doing: nothing to check then).
bool run_nest(const DynamicThreadedLoop& loop, const Case& c, Recorder& r, Outcome& outcome, std::string& message) {
  r.caller = std::this_thread::get_id();
  omp_set_num_threads(c.threads);
  if (!c.team_call) {
    outcome = call(loop, r, message);
    return true;
  }
  std::array<Outcome, kMaxThreads> outcomes{};
  std::array<std::string, kMaxThreads> messages;
  bool full_team = true;
#pragma omp parallel num_threads(c.threads)
  {
    if (omp_get_num_threads() != c.threads) {
#pragma omp atomic write
      full_team = false;
    }
#pragma omp barrier
    if (full_team) {
      const int t = omp_get_thread_num();
      outcomes[static_cast<std::size_t>(t)] = call(loop, r, messages[static_cast<std::size_t>(t)]);
    }
  }
  if (!full_team) return false;
  outcome = outcomes[0];
  message = messages[0];
  for (int t = 1; t < c.threads; ++t)
    if (outcomes[static_cast<std::size_t>(t)] != outcome) outcome = Outcome::mixed;
  return true;
}

// Per-thread sequences of point indices, for comparing the engines.
using Sequences = std::array<std::vector<std::int64_t>, kMaxThreads>;

Sequences check_run(const DynamicThreadedLoop& loop, const Case& c, const Expected& expected, const char* engine) {
  const LoopNest& nest = loop.nest();
  const auto where = [&] { return std::string(engine) + " engine, " + describe(c) + ", nest \"" + nest.canonical + "\""; };
  const int n = static_cast<int>(c.specs.size());
  const bool sequential = !nest.has_run() && !nest.has_grid();
  const int team = c.threads;
  // Called from every thread of a team ("Threads and teams"), each caller runs the whole nest on
  // a nested team of its own: one thread, unless the environment enables nesting.
  const bool team_call = c.team_call;
  const bool nested_single = omp_get_max_active_levels() <= 1;
  // Visits per point: once per caller; a string without upper-case letters once in all (the
  // fixed semantics), else once per thread of the team.
  const std::int64_t multiplicity = team_call || (sequential && !config().sequential_once) ? team : 1;

  Recorder r;
  r.loop = &loop;
  r.specs = &c.specs;
  r.num_loops = n;
  r.capacity = expected.points * team + 1;
  r.throw_at = c.throw_at;
  r.check_helpers = nest.levels.size() <= 32;
  r.sequential = sequential && config().sequential_once;
  r.per_caller = team_call;
  r.check_hooks = !team_call || nested_single;
  r.ind.resize(static_cast<std::size_t>(r.capacity * n));
  r.tid.resize(static_cast<std::size_t>(r.capacity));
  r.omp_tid.resize(static_cast<std::size_t>(r.capacity));
  r.on_caller.resize(static_cast<std::size_t>(r.capacity));
  r.caller_tid.resize(static_cast<std::size_t>(r.capacity));
  r.team_size.resize(static_cast<std::size_t>(r.capacity));

  Outcome outcome = Outcome::ok;
  std::string message;
  if (!run_nest(loop, c, r, outcome, message)) return {};
  const std::int64_t calls = r.next.load();

  // A grid larger than the team running it: weft::Error at call time.
  const int running_team = team_call ? 1 : team;
  if (nest.has_grid() && nest.grid_threads() > running_team && (!team_call || nested_single)) {
    check(outcome == Outcome::weft_error, [&] {
      return std::string("a grid of ") + std::to_string(nest.grid_threads()) + " threads on a team of " +
             std::to_string(running_team) + " must throw weft::Error at call time; got " + name(outcome) + ": " + where();
    });
    return {};
  }
  if (team_call && nest.has_grid() && outcome == Outcome::weft_error) return {};  // nested teams of unknown size
  check(r.helper_error.empty(), [&] { return "helper inconsistent with the body call: " + r.helper_error + ": " + where(); });
  check(r.hook_errors.load() == 0, [&] { return "a body call outside its thread's init .. term: " + where(); });

  // Coverage: every point of the unblocked space, each `multiplicity` times (once per caller).
  check(calls < r.capacity, [&] {
    return std::to_string(calls) + " body calls for " + std::to_string(expected.points) + " points: " + where();
  });
  const std::int64_t recorded = std::min(calls, r.capacity);
  const std::int64_t slots = team_call ? team : 1;
  std::vector<std::int64_t> point(static_cast<std::size_t>(recorded));
  std::vector<std::int64_t> count(static_cast<std::size_t>(expected.points * slots), 0);
  for (std::int64_t i = 0; i < recorded; ++i) {
    std::int64_t index = 0;
    for (int x = 0; x < n; ++x) {
      const LoopSpecs& s = c.specs[static_cast<std::size_t>(x)];
      const std::int64_t v = r.ind[static_cast<std::size_t>(i * n + x)];
      const std::int64_t k = (v - s.start) / s.step;
      check(v >= s.start && v < s.end && (v - s.start) % s.step == 0, [&] {
        return "the body saw ind[" + std::to_string(x) + "] = " + std::to_string(v) + ", not a value of [" +
               std::to_string(s.start) + ", " + std::to_string(s.end) + ") step " + std::to_string(s.step) + ": " + where();
      });
      index += k * expected.stride[static_cast<std::size_t>(x)];
    }
    point[static_cast<std::size_t>(i)] = index;
    const int caller = team_call ? r.caller_tid[static_cast<std::size_t>(i)] : 0;
    check(caller >= 0 && caller < slots, [&] { return "a body call from outside the calling team: " + where(); });
    ++count[static_cast<std::size_t>(caller * expected.points + index)];
  }
  const auto describe_point = [&](std::int64_t index) {
    std::string s = "(";
    for (int x = 0; x < n; ++x) {
      const auto xi = static_cast<std::size_t>(x);
      const std::int64_t k = index / expected.stride[xi] % expected.trips[xi];
      s += (x ? ", " : "") + std::to_string(c.specs[xi].start + k * c.specs[xi].step);
    }
    return s + ")";
  };
  const std::int64_t per_slot = team_call ? 1 : multiplicity;
  for (std::int64_t slot = 0; slot < slots; ++slot)
    for (std::int64_t p = 0; p < expected.points; ++p) {
      const std::int64_t got = count[static_cast<std::size_t>(slot * expected.points + p)];
      check(got == per_slot, [&] {
        return "point " + describe_point(p) + " visited " + std::to_string(got) + " times" +
               (team_call ? " by calling thread " + std::to_string(slot) : std::string()) + ", expected " +
               std::to_string(per_slot) + " (" + std::to_string(calls) + " body calls for " +
               std::to_string(expected.points) + " points): " + where();
      });
    }
  const bool throws = c.throw_at >= 0 && c.throw_at < expected.points * multiplicity;
  // From a team, only the caller whose nest threw sees the exception.
  const bool one_caller_threw = team_call && throws && (outcome == Outcome::mixed || outcome == Outcome::body_throw);
  check(one_caller_threw || outcome == (throws ? Outcome::body_throw : Outcome::ok), [&] {
    return std::string("the call ended with ") + name(outcome) + (message.empty() ? "" : " (" + message + ")") +
           ", expected " + (throws ? "the body's exception" : "no exception") + ": " + where();
  });

  // Threads: who ran what, in which order. From a team, per caller.
  Sequences sequences;
  std::array<std::int64_t, kMaxThreads> per_thread{};
  for (std::int64_t i = 0; i < recorded; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const int t = r.tid[k];
    const int expected_tid = sequential && team_call ? r.caller_tid[k] : r.omp_tid[k];
    check(t >= 0 && t < team && t == expected_tid, [&] {
      return "get_tid(ind) = " + std::to_string(t) + " on OpenMP thread " + std::to_string(r.omp_tid[k]) +
             (team_call ? " of caller " + std::to_string(r.caller_tid[k]) : std::string()) + ": " + where();
    });
    const int slot = team_call ? r.caller_tid[k] : t;
    ++per_thread[static_cast<std::size_t>(slot)];
    sequences[static_cast<std::size_t>(slot)].push_back(point[k]);
  }
  const auto counts = [&] {
    std::string s;
    for (int t = 0; t < team; ++t) s += (t ? "/" : "") + std::to_string(per_thread[static_cast<std::size_t>(t)]);
    return s;
  };
  if (sequential && config().sequential_once && !team_call) {
    for (std::int64_t i = 0; i < recorded; ++i)
      check(r.on_caller[static_cast<std::size_t>(i)] != 0, [&] {
        return "a nest without parallel levels ran body calls off the calling thread (per-thread calls " + counts() +
               "): " + where();
      });
  }
  if (team_call && !nested_single) return {};
  const bool fixed_order = !nest.has_run() || nest.schedule.kind == ScheduleKind::static_;
  const bool check_owner =
      !team_call && (nest.has_grid() || (nest.has_run() && config().balance && nest.schedule.kind == ScheduleKind::static_));
  for (std::int64_t i = 0; i < recorded && check_owner; ++i) {
    const auto p = static_cast<std::size_t>(point[static_cast<std::size_t>(i)]);
    const std::int64_t owner = expected.owner[p];
    const int t = r.tid[static_cast<std::size_t>(i)];
    check(owner == kAnyOwner || owner == t, [&] {
      std::string s = "point " + describe_point(static_cast<std::int64_t>(p)) + " ran on thread " + std::to_string(t) +
                      ", but thread " + std::to_string(owner) + " owns it";
      if (nest.has_run()) {
        const std::int64_t e = expected.entry[p];
        s += " (static schedule: collapsed iteration " + std::to_string(expected.collapsed[p]) + " of " +
             std::to_string(expected.entry_iterations[static_cast<std::size_t>(e)]) + " in entry " + std::to_string(e) +
             " of the run)";
      } else {
        s += " (thread grid split)";
      }
      return s + "; body calls per thread " + counts() + ": " + where();
    });
  }
  // A caller's nested team of one runs everything in nest order, whatever the schedule.
  if (fixed_order || team_call) {
    for (int t = 0; t < team; ++t) {
      const auto& seq = sequences[static_cast<std::size_t>(t)];
      for (std::size_t k = 1; k < seq.size(); ++k)
        check(expected.order[static_cast<std::size_t>(seq[k - 1])] < expected.order[static_cast<std::size_t>(seq[k])], [&] {
          return std::string(team_call ? "calling thread " : "thread ") + std::to_string(t) + " ran point " +
                 describe_point(seq[k]) + " after " + describe_point(seq[k - 1]) + ", against the nest's order: " + where();
        });
    }
  }
  // init and term: once per participating thread (per caller, from a team).
  {
    const int participants = team_call                                ? team
                             : nest.has_grid()                        ? nest.grid_threads()
                             : sequential && config().sequential_once ? 1
                                                                      : team;
    int inits = 0;
    for (int t = 0; t < kMaxThreads; ++t) {
      const int i = r.inits[static_cast<std::size_t>(t)].load(), e = r.terms[static_cast<std::size_t>(t)].load();
      check(i <= 1 && i == e, [&] {
        return "thread " + std::to_string(t) + " ran init " + std::to_string(i) + " and term " + std::to_string(e) +
               " times: " + where();
      });
      inits += i;
    }
    check(inits == participants, [&] {
      return "init ran on " + std::to_string(inits) + " threads, expected " + std::to_string(participants) + ": " + where();
    });
  }
  if (!fixed_order && !team_call) return {};
  return sequences;
}

// ---------------------------------------------------------------------------------------------

void run_valid_nest(const LoopNest& parsed, const Case& c, const Case& e);

void run_case(const Case& c) {
  const int num_loops = static_cast<int>(c.specs.size());
  std::optional<LoopNest> nest;
  try {
    nest = parse_loop_string(c.text, num_loops);
  } catch (const LoopStringError& e) {
    check_parse_error(e, c);
  } catch (const weft::Error& e) {
    fail("parse_loop_string threw a weft::Error that is not a LoopStringError: " + std::string(e.what()) + "\n" + describe(c));
  } catch (const std::exception& e) {
    fail("parse_loop_string threw a non-weft exception: " + std::string(e.what()) + "\n" + describe(c));
  }

  if (!nest) {
    // The ThreadedLoop constructor rejects it as well.
    try {
      DynamicThreadedLoop loop(c.specs, c.text, EngineKind::reference);
      fail("DynamicThreadedLoop accepted a string parse_loop_string rejects: " + describe(c));
    } catch (const LoopStringError&) {
    } catch (const std::exception& e) {
      fail("DynamicThreadedLoop threw something other than LoopStringError for an invalid string: " +
           std::string(e.what()) + "\n" + describe(c));
    }
    return;
  }
  check_nest(*nest, c, num_loops);

  Case effective = c;
  effective.specs = effective_specs(*nest, c.specs);
  run_valid_nest(*nest, c, effective);
}

// Construction and execution of a nest the parser accepted; `c` as given, `e` with the effective
// LoopSpecs.
void run_valid_nest(const LoopNest& parsed, const Case& c, const Case& e) {
  const LoopNest* nest = &parsed;
  const int num_loops = static_cast<int>(c.specs.size());
  const bool valid_specs = specs_follow_rules(*nest, e.specs);
  if (valid_specs && !config().huge_blocks &&
      (uses_huge_sizes(*nest, e.specs) || padded_run_slots(*nest, e.specs) > 1000000))
    return;

  Expected expected;
  bool small = valid_specs;
  if (valid_specs) {
    expected.stride.assign(static_cast<std::size_t>(num_loops), 0);
    expected.trips.assign(static_cast<std::size_t>(num_loops), 0);
    std::int64_t points = 1;
    for (int x = num_loops - 1; x >= 0; --x) {
      const LoopSpecs& s = e.specs[static_cast<std::size_t>(x)];
      expected.trips[static_cast<std::size_t>(x)] = trips(s.start, s.end, s.step);
      expected.stride[static_cast<std::size_t>(x)] = points;
      points = weft::fuzz::sat_mul(points, expected.trips[static_cast<std::size_t>(x)]);
    }
    expected.points = points;
    small = points <= kMaxPoints;
  }

  std::optional<DynamicThreadedLoop> loops[2];
  const EngineKind kinds[2] = {EngineKind::jit, EngineKind::reference};
  for (int k = 0; k < 2; ++k) {
    const char* engine = k == 0 ? "jit" : "reference";
    try {
      loops[k].emplace(c.specs, c.text, kinds[k]);
    } catch (const LoopStringError& err) {
      check(err.position() <= err.loop_string().size(), [&] { return "LoopStringError position beyond its string: " + describe(c); });
      check(!(valid_specs && small), [&] {
        return std::string(engine) + " engine: LoopSpecs that follow the documented rules were rejected: " + err.what() +
               "\n" + describe(c);
      });
    } catch (const std::exception& err) {
      fail(std::string(engine) + " engine: construction threw something other than LoopStringError: " + err.what() + "\n" +
           describe(c));
    }
    if (loops[k]) {
      check(valid_specs, [&] {
        return std::string(engine) + " engine: accepted LoopSpecs that break the documented rules: " + describe(c);
      });
      check(!loops[k]->render().empty(), [&] { return "render() is empty: " + describe(c); });
    }
  }
  if (!loops[0] || !loops[1] || !small) return;

  if (!Walk(*nest, e.specs, c.threads, expected).run()) return;  // too much work to run
  const Sequences jit = check_run(*loops[0], e, expected, "jit");
  const Sequences reference = check_run(*loops[1], e, expected, "reference");
  for (int t = 0; t < kMaxThreads; ++t)
    check(jit[static_cast<std::size_t>(t)] == reference[static_cast<std::size_t>(t)], [&] {
      return "the engines ran different calls on thread " + std::to_string(t) + " (" +
             std::to_string(jit[static_cast<std::size_t>(t)].size()) + " jit, " +
             std::to_string(reference[static_cast<std::size_t>(t)].size()) + " reference): " + describe(c);
    });
}

// ---------------------------------------------------------------------------------------------
// The structured generator

using weft::fuzz::Rng;

std::string schedule_clause(Rng& rng) {
  const auto space = [&] { return rng.chance(1, 6) ? std::string(1 + rng.below(2), ' ') : std::string(); };
  const std::string chunk = std::to_string(rng.chance(1, 8) ? rng.range(4, 100) : rng.range(1, 3));
  switch (rng.below(8)) {
    case 0: return "@schedule(static)";
    case 1: case 2: return "@schedule(" + space() + "static" + space() + "," + space() + chunk + space() + ")";
    case 3: return "@schedule(dynamic)";
    case 4: return "@schedule(dynamic," + chunk + ")";
    case 5: return "@ schedule( guided )";
    case 6: {
      static const char* const more[] = {"guided,", "monotonic:dynamic,", "nonmonotonic:static,", "simd:guided,",
                                         "monotonic, simd: static,"};
      if (rng.chance(1, 4)) return rng.chance(1, 2) ? "@schedule(runtime)" : "@schedule( auto )";
      return std::string("@schedule(") + rng.pick(more) + chunk + ")";
    }
    default: {
      // Mistakes the parser must reject with a caret.
      static const char* const bad[] = {"@", "@schedule", "@schedule()", "@schedule(static,0)", "@schedule(auto,2)",
                                        "@schedule(dynamic,1)@", "@collapse(2)", "@schedule(static),schedule(dynamic)",
                                        "@schedule(static,-1)", "@schedule(static,2147483648)", "@nowait",
                                        "@schedule(dynamic,", "@schedule(static 2)"};
      return rng.pick(bad);
    }
  }
}

std::string junk(std::string s, Rng& rng) {
  static const char alphabet[] = "abcdezABCDEZ{}:|@ ,()0123456789RCL\t-_";
  static const char* const tokens[] = {"{R:2}", "{C:", "{L:0}", "{R:2147483648}", "|", "||", "@", "{", "}", "\xff", "\x00"};
  const int edits = 1 + static_cast<int>(rng.below(3));
  for (int e = 0; e < edits; ++e) {
    const std::size_t at = static_cast<std::size_t>(rng.below(s.size() + 1));
    switch (rng.below(4)) {
      case 0: s.insert(at, 1, alphabet[rng.below(sizeof alphabet - 1)]); break;
      case 1: if (!s.empty() && at < s.size()) s.erase(at, 1); break;
      case 2: {
        const std::string token = rng.pick(tokens);
        s.insert(at, token.empty() ? std::string(1, '\0') : token);
        break;
      }
      default: s.insert(at, 1, static_cast<char>(rng.below(256))); break;
    }
  }
  return s;
}

std::string generate(Rng& rng) {
  const bool huge = config().huge_blocks;
  int n = 1 + static_cast<int>(rng.below(4));
  if (rng.chance(1, 40)) n = 5 + static_cast<int>(rng.below(4));
  if (rng.chance(1, 200)) n = kMaxLoops + 1;
  const int threads = 1 + static_cast<int>(rng.below(kMaxThreads));

  std::vector<int> occurrences(static_cast<std::size_t>(n));
  std::vector<int> levels;
  for (int x = 0; x < n; ++x) {
    int occ = 1 + static_cast<int>(rng.below(3));
    if (n <= 2 && rng.chance(1, 30)) occ = 4 + static_cast<int>(rng.below(5));
    occurrences[static_cast<std::size_t>(x)] = occ;
    for (int j = 0; j < occ; ++j) levels.push_back(x);
  }
  for (std::size_t i = levels.size(); i > 1; --i) std::swap(levels[i - 1], levels[static_cast<std::size_t>(rng.below(i))]);
  const int L = static_cast<int>(levels.size());

  std::vector<bool> upper(levels.size(), false);
  std::vector<std::string> grid(levels.size());
  const auto mode = rng.below(20);  // 0-2 sequential, 3-10 run, 11-16 grid, 17-19 random case
  if (mode >= 3 && mode <= 10) {
    int begin = static_cast<int>(rng.below(static_cast<std::uint64_t>(L)));
    int length = 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(std::min(3, L - begin))));
    // Runs holding two occurrences of one loop are where padded counting went wrong.
    if (rng.chance(1, 3) && L >= 2) {
      const int x = levels[static_cast<std::size_t>(begin)];
      for (int l = begin + 1; l < L; ++l)
        if (levels[static_cast<std::size_t>(l)] == x) {
          std::swap(levels[static_cast<std::size_t>(begin + 1)], levels[static_cast<std::size_t>(l)]);
          length = std::max(length, 2);
          break;
        }
      length = std::min(length, L - begin);
    }
    for (int l = begin; l < begin + length; ++l) upper[static_cast<std::size_t>(l)] = true;
  } else if (mode >= 11 && mode <= 16) {
    std::vector<int> order(levels.size());
    for (int l = 0; l < L; ++l) order[static_cast<std::size_t>(l)] = l;
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[static_cast<std::size_t>(rng.below(i))]);
    std::string dims = "RCL";
    for (std::size_t i = 3; i > 1; --i) std::swap(dims[i - 1], dims[static_cast<std::size_t>(rng.below(i))]);
    const int splits = 1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(std::min(3, L))));
    int grid_threads = 1;
    for (int s = 0; s < splits; ++s) {
      int ways = 1 + static_cast<int>(rng.below(3));
      if (grid_threads * ways > kMaxThreads && !rng.chance(1, 8)) ways = 1;
      grid_threads *= ways;
      const auto l = static_cast<std::size_t>(order[static_cast<std::size_t>(s)]);
      upper[l] = true;
      std::string w = std::to_string(ways);
      if (rng.chance(1, 50)) w = rng.chance(1, 2) ? "0" : "2147483647";
      grid[l] = std::string("{") + dims[static_cast<std::size_t>(s)] + ":" + w + "}";
    }
  } else if (mode >= 17) {
    for (int l = 0; l < L; ++l) upper[static_cast<std::size_t>(l)] = rng.chance(1, 3);
  }
  std::string text;
  bool enclosed = false;
  std::vector<bool> specified(static_cast<std::size_t>(n), false);
  for (int l = 0; l < L; ++l) {
    const auto li = static_cast<std::size_t>(l);
    text += static_cast<char>((upper[li] ? 'A' : 'a') + levels[li]);
    text += grid[li];
    // PARLOOPER's inline bounds, "a[start,end,step,(blocks)]", with fields left empty at times.
    if (!specified[static_cast<std::size_t>(levels[li])] && rng.chance(1, 15)) {
      specified[static_cast<std::size_t>(levels[li])] = true;
      const std::int64_t step = rng.range(1, 2);
      const std::int64_t start = rng.range(-2, 2);
      std::string spec = "[" + (rng.chance(3, 4) ? std::to_string(start) : "") + "," +
                         (rng.chance(3, 4) ? std::to_string(start + rng.range(0, 6)) : "") + "," +
                         (rng.chance(1, 2) ? std::to_string(step) : "");
      if (rng.chance(1, 2)) {
        spec += ",(";
        const int blocks = occurrences[static_cast<std::size_t>(levels[li])] - 1 + static_cast<int>(rng.below(2));
        for (int j = 0; j < blocks; ++j) spec += (j ? "," : "") + std::to_string(step * rng.range(1, 3));
        spec += ")";
      }
      text += spec + "]";
    }
    if ((!enclosed || rng.chance(1, 10)) && rng.chance(1, 5)) text += '|';
    enclosed = enclosed || upper[li];
  }
  if (mode >= 3 && mode <= 10 && rng.chance(3, 5)) text += schedule_clause(rng);
  else if (rng.chance(1, 30)) text += schedule_clause(rng);
  if (rng.chance(1, 12)) text = junk(text, rng);
  if (rng.chance(1, 200)) text.clear();

  std::string out = "threads=" + std::to_string(threads) + "\n";
  if (rng.chance(1, 5)) out += "call=team\n";
  std::int64_t points = 1;

  const int max_len = n <= 2 ? 12 : n == 3 ? 7 : n == 4 ? 4 : 2;
  for (int x = 0; x < n; ++x) {
    const int occ = occurrences[static_cast<std::size_t>(x)];
    std::int64_t step = rng.range(1, 3);
    std::int64_t length = rng.chance(1, 20) ? 0 : rng.range(1, max_len);
    if (huge && rng.chance(1, 12)) {
      static const std::int64_t big[] = {INT_MAX, 1 << 30, (1LL << 30) + 1, 65536, 100003};
      step = rng.pick(big);
    }
    std::int64_t start = rng.range(-3, 3);
    const std::int64_t span = length * step;  // covers `length` points
    if (step > kSmall || rng.chance(1, 20)) {
      // Near the ends of int, where 32-bit arithmetic overflows.
      start = rng.chance(1, 2) ? INT_MIN + rng.range(0, 2) : INT_MAX - std::min<std::int64_t>(span, INT_MAX) + rng.range(-2, 0);
      if (start < INT_MIN) start = INT_MIN;
    }
    std::int64_t end = std::min<std::int64_t>(start + span - rng.range(0, step - 1), INT_MAX);
    if (end < start) end = start;
    points *= std::max<std::int64_t>(1, trips(start, end, step));
    if (rng.chance(1, 60)) {  // bounds and steps the rules reject
      static const std::int64_t bad[] = {0, -1, -7, 2147483648LL, -2147483649LL, 9223372036854775807LL};
      (rng.chance(1, 2) ? step : rng.chance(1, 2) ? start : end) = rng.pick(bad);
    }
    std::string spec = "spec=" + std::to_string(start) + "," + std::to_string(end) + "," + std::to_string(step);
    int blocks = occ - 1 + (rng.chance(1, 4) ? 1 : 0);
    if (rng.chance(1, 40) && blocks > 0) --blocks;
    for (int j = 0; j < blocks; ++j) {
      std::int64_t b = step > 0 && step <= INT_MAX ? step * rng.range(1, 4) : 4;
      if (huge && rng.chance(1, 6)) {
        const std::int64_t s = step > 0 && step <= INT_MAX ? step : 1;
        switch (rng.below(3)) {
          case 0: b = INT_MAX / s * s; break;
          case 1: b = s << rng.range(10, 20); break;
          default: b = s * rng.range(1000, 100000); break;
        }
        if (b > INT_MAX) b = INT_MAX / s * s;
      }
      if (rng.chance(1, 50)) {
        static const std::int64_t bad[] = {0, -2, 3, 2147483648LL, 4294967296LL};
        b = rng.pick(bad);
      }
      spec += "," + std::to_string(b);
    }
    out += spec + "\n";
  }
  if (rng.chance(1, 20)) out += "throw=" + std::to_string(rng.range(0, std::max<std::int64_t>(points, 1) - 1)) + "\n";
  out += "loop=" + text;
  return out;
}

}  // namespace

namespace weft::fuzz {
const Target& target() {
  static const Target t{"loop_string", &::generate};
  return t;
}
}  // namespace weft::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  run_case(decode(std::string_view(reinterpret_cast<const char*>(data), size)));
  return 0;
}
