// NestBounds from LoopSpecs: the sizes of one ThreadedLoop, checked against its nest.
#include <cstdint>
#include <string>
#include <vector>

#include "collapsed_run.hpp"
#include "weft/jit/checked_arithmetic.hpp"
#include "weft/parlooper/loop_string.hpp"

namespace weft::parlooper {
namespace {

// Offsets of the level letters in a canonical string (grids skipped, clauses ignored), so that
// errors can point at the letter whose LoopSpecs is at fault.
std::vector<std::size_t> level_positions(const std::string& canonical) {
  std::vector<std::size_t> positions;
  bool in_grid = false;
  for (std::size_t i = 0; i < canonical.size() && canonical[i] != '@'; ++i) {
    const char c = canonical[i];
    if (c == '{') in_grid = true;
    else if (c == '}') in_grid = false;
    else if (!in_grid && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) positions.push_back(i);
  }
  return positions;
}

class BoundsBuilder {
 public:
  BoundsBuilder(const LoopNest& nest, std::span<const LoopSpecs> specs)
      : nest_(nest), specs_(specs) {}

  NestBounds build() {
    if (static_cast<int>(specs_.size()) != nest_.num_loops)
      throw weft::Error("make_nest_bounds: " + std::to_string(specs_.size()) + " LoopSpecs for a nest of " +
                        std::to_string(nest_.num_loops) + " loops");
    if (nest_.levels.size() > static_cast<std::size_t>(kMaxLevels))
      throw weft::Error("make_nest_bounds: more than kMaxLevels levels");
    NestBounds bounds;
    for (int loop = 0; loop < nest_.num_loops; ++loop) check_loop(loop, bounds);
    for (std::size_t l = 0; l < nest_.levels.size(); ++l) {
      const LoopLevel& level = nest_.levels[l];
      const LoopSpecs& spec = specs_[static_cast<std::size_t>(level.loop)];
      bounds.level_step[l] = level.occurrence + 1 < level.num_occurrences
                                 ? check_block(l, level, spec)
                                 : spec.step;
    }
    check_run_iterations(bounds);
    return bounds;
  }

 private:
  [[noreturn]] void fail(const std::string& problem, std::size_t level) const {
    const std::vector<std::size_t> positions = level_positions(nest_.canonical);
    const std::size_t pos = level < positions.size() ? positions[level] : nest_.canonical.size();
    throw LoopStringError(problem, nest_.canonical, pos);
  }

  std::string name(int loop) const {
    return "LoopSpecs[" + std::to_string(loop) + "] (loop '" + static_cast<char>('a' + loop) + "')";
  }

  std::size_t first_level_of(int loop) const {
    for (std::size_t l = 0; l < nest_.levels.size(); ++l)
      if (nest_.levels[l].loop == loop) return l;
    return nest_.levels.size();
  }

  std::size_t occurrence_level(int loop, int occurrence) const {
    for (std::size_t l = 0; l < nest_.levels.size(); ++l)
      if (nest_.levels[l].loop == loop && nest_.levels[l].occurrence == occurrence) return l;
    return nest_.levels.size();
  }

  void check_loop(int loop, NestBounds& bounds) const {
    const LoopSpecs& spec = specs_[static_cast<std::size_t>(loop)];
    const std::size_t first = first_level_of(loop);
    const auto int_bound = [&](long value, const char* what) {
      try {
        checked_int(value, [&] {
          return name(loop) + ": the " + what + " of [" + std::to_string(spec.start) + ", " + std::to_string(spec.end) +
                 ") step " + std::to_string(spec.step) + " (the body receives int indices)";
        });
      } catch (const weft::Error& e) {
        fail(e.what(), first);
      }
    };
    int_bound(spec.start, "start");
    int_bound(spec.end, "end");
    if (spec.step <= 0) fail(name(loop) + ": step " + std::to_string(spec.step) + " must be positive", first);
    int_bound(spec.step, "step");
    const int occurrences = first < nest_.levels.size() ? nest_.levels[first].num_occurrences : 1;
    const auto blocks = static_cast<int>(spec.block_size.size());
    if (blocks < occurrences - 1)
      fail(std::string("loop '") + static_cast<char>('a' + loop) + "' appears " +
               std::to_string(occurrences) + " times, so " + name(loop) + " needs " +
               std::to_string(occurrences - 1) + " block size" + (occurrences == 2 ? "" : "s") +
               " (outermost first), but it has " + std::to_string(blocks),
           occurrence_level(loop, blocks + 1));
    bounds.loop_start[loop] = spec.start;
    bounds.loop_end[loop] = spec.end;
  }

  long check_block(std::size_t l, const LoopLevel& level, const LoopSpecs& spec) const {
    const long block = spec.block_size[static_cast<std::size_t>(level.occurrence)];
    const std::string what = name(level.loop) + ": block size " + std::to_string(block) + " (block_size[" +
                             std::to_string(level.occurrence) + "])";
    if (block <= 0) fail(what + " must be positive", l);
    try {
      checked_int(block, what);
    } catch (const weft::Error& e) {
      fail(e.what(), l);
    }
    if (block % spec.step != 0)
      fail(what + " is not a multiple of the step " + std::to_string(spec.step), l);
    return block;
  }

  // Every engine counts the run's tuples in 64 bits; the largest count over all entries must fit
  // (with room to add a chunk to it). Block sizes do not matter, only the tuples that exist.
  void check_run_iterations(const NestBounds& bounds) const {
    if (!nest_.has_run()) return;
    if (CollapsedRun(nest_).max_count(bounds) < 0)
      fail("the work-shared run has more than 2^62 collapsed iterations", static_cast<std::size_t>(nest_.run_begin));
  }

  const LoopNest& nest_;
  std::span<const LoopSpecs> specs_;
};

}  // namespace

namespace {

// Inline specs (the loop_string's "a[start,end,step,(blocks)]", parsed into nest.inline_specs)
// replace fields of the LoopSpecs before any check, so that they are checked like LoopSpecs.
std::vector<LoopSpecs> with_inline_specs(const LoopNest& nest, std::span<const LoopSpecs> specs) {
  std::vector<LoopSpecs> merged(specs.begin(), specs.end());
  for (const InlineSpec& spec : nest.inline_specs) {
    if (spec.loop < 0 || static_cast<std::size_t>(spec.loop) >= merged.size()) continue;  // a count mismatch: reported by build()
    LoopSpecs& s = merged[static_cast<std::size_t>(spec.loop)];
    if (spec.has_start) s.start = spec.start;
    if (spec.has_end) s.end = spec.end;
    if (spec.has_step) s.step = spec.step;
    if (!spec.block_size.empty()) s.block_size = spec.block_size;
  }
  return merged;
}

}  // namespace

NestBounds make_nest_bounds(const LoopNest& nest, std::span<const LoopSpecs> specs) {
  if (!nest.inline_specs.empty()) return BoundsBuilder(nest, with_inline_specs(nest, specs)).build();
  return BoundsBuilder(nest, specs).build();
}

}  // namespace weft::parlooper
