#include "weft/tuner/tuner.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <functional>
#include <optional>
#include <unordered_set>

#include <weft/parlooper/loop_string.hpp>

#include "weft/jit/error.hpp"

namespace weft::tuner {
namespace {

using parlooper::LoopNest;
using parlooper::ParKind;

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int resolve_threads(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

// Each loop's block chains cut to the levels the nest uses (occurrences - 1 per loop), each cut chain once, in the
// order of its first appearance: the product of these is the product of the whole chains without
// the choices that differ only in ignored entries, in the same order of first appearance. A
// convolution's chains multiply to millions of choices per nest, of which a few hundred differ;
// building and hashing a key for each took most of a tuning run (29 s of a 1 s budget).
std::vector<std::vector<std::vector<long>>> used_chains(const LoopNest& nest,
                                                        const std::vector<std::vector<std::vector<long>>>& chains) {
  std::vector<std::size_t> levels(chains.size(), 0);
  for (const auto& level : nest.levels)
    if (level.occurrence == 0 && static_cast<std::size_t>(level.loop) < levels.size())
      levels[static_cast<std::size_t>(level.loop)] = static_cast<std::size_t>(level.num_occurrences - 1);
  std::vector<std::vector<std::vector<long>>> cut(chains.size());
  for (std::size_t x = 0; x < chains.size(); ++x) {
    for (const auto& chain : chains[x]) {
      std::vector<long> used(chain.begin(), chain.begin() + static_cast<std::ptrdiff_t>(std::min(chain.size(), levels[x])));
      if (std::find(cut[x].begin(), cut[x].end(), used) == cut[x].end()) cut[x].push_back(std::move(used));
    }
  }
  return cut;
}

// The nest without the sequential, unblocked levels of loops that run once: where such a level
// stands changes nothing, so strings that differ only there are one candidate (a convolution's
// seven loops often have three or four of them, which would multiply its space by up to 5040).
std::string effective_nest(const LoopNest& nest, std::span<const LogicalLoop> loops) {
  if (!nest.inline_specs.empty()) return nest.canonical;
  std::string key;
  for (const auto& level : nest.levels) {
    const auto x = static_cast<std::size_t>(level.loop);
    if (level.par == ParKind::none && level.num_occurrences == 1 && !level.barrier_after && x < loops.size() &&
        loops[x].trips() <= 1)
      continue;
    key += static_cast<char>('a' + level.loop);
    key += std::to_string(level.occurrence) + ':' + std::to_string(static_cast<int>(level.par)) + ':' +
           std::to_string(level.ways) + (level.barrier_after ? "|" : "") + ',';
  }
  return key;
}

std::string dedup_key(const LoopNest& nest, std::span<const LogicalLoop> loops,
                      const std::vector<std::vector<long>>& blocks, const Knobs& knobs) {
  std::string key = effective_nest(nest, loops) + '|';
  for (const auto& b : blocks) {
    for (long v : b) key += std::to_string(v) + ',';
    key += ';';
  }
  for (const auto& [n, v] : knobs) key += n + '=' + std::to_string(v) + ';';
  return key;
}

// Cartesian product of per-loop chain lists.
void for_each_block_choice(const std::vector<std::vector<std::vector<long>>>& chains,
                           const std::function<void(const std::vector<std::vector<long>>&)>& fn) {
  std::vector<std::vector<long>> current(chains.size());
  auto rec = [&](auto&& self, std::size_t x) -> void {
    if (x == chains.size()) {
      fn(current);
      return;
    }
    for (const auto& c : chains[x]) {
      current[x] = c;
      self(self, x + 1);
    }
  };
  rec(rec, 0);
}

std::size_t automatic_top_k(const Workload& workload, const TunerOptions& options, int threads) {
  const double run = workload.flops() / (0.5 * options.machine.peak_flops_per_thread * threads);
  const MeasureOptions& q = options.quick;
  const double per_candidate =
      std::max(q.min_seconds, q.min_repetitions * run) + (q.warmup + 2) * run + 2e-3;
  const double k = 0.7 * options.budget_seconds / per_candidate;
  return static_cast<std::size_t>(std::clamp(k, 16.0, 512.0));
}

}  // namespace

std::optional<std::string> legality_problem(const LoopNest& nest, std::span<const LogicalLoop> loops,
                                            const std::vector<std::vector<long>>& blocks,
                                            int threads, bool allow_parallel_reduction) {
  if (static_cast<std::size_t>(nest.num_loops) != loops.size())
    return "the nest has " + std::to_string(nest.num_loops) + " loops, the workload " +
           std::to_string(loops.size());
  for (const auto& level : nest.levels) {
    if (level.par == ParKind::none) continue;
    const LogicalLoop& l = loops[static_cast<std::size_t>(level.loop)];
    if (l.reduction && l.trips() > 1 && !allow_parallel_reduction)
      return std::string("loop '") + static_cast<char>('a' + level.loop) +
             "' is a reduction: running it in parallel would let threads add into the same output";
  }
  if (threads > 1 && !nest.is_parallel())
    return "no parallel level: every one of the " + std::to_string(threads) +
           " threads would run every iteration";
  if (nest.has_grid() && nest.grid_threads() != threads)
    return "the thread grid uses " + std::to_string(nest.grid_threads()) + " threads, not " +
           std::to_string(threads);
  std::vector<parlooper::LoopSpecs> specs;
  for (std::size_t x = 0; x < loops.size(); ++x) {
    parlooper::LoopSpecs s{loops[x].begin, loops[x].end, loops[x].step};
    if (x < blocks.size()) s.block_size = blocks[x];
    specs.push_back(s);
  }
  try {
    parlooper::make_nest_bounds(nest, specs);
  } catch (const parlooper::LoopStringError& e) {
    return e.problem();
  }
  return std::nullopt;
}

SearchSpace build_search_space(const Workload& workload, const TunerOptions& options) {
  const int threads = resolve_threads(options.threads);
  SearchSpace space;
  std::unordered_set<std::string> seen;
  LoopStringOptions string_options = options.loop_strings;
  string_options.threads = threads;
  string_options.allow_parallel_reduction = workload.supports_parallel_reduction();
  BlockOptions block_options = options.blocks;
  block_options.allow_remainder = block_options.allow_remainder && workload.accepts_remainder_blocks();

  for (const Knobs& knobs : workload.knob_choices()) {
    const std::vector<LogicalLoop> loops = workload.loops(knobs);
    const CostInputs inputs = workload.cost_inputs(knobs);
    const auto specs = options.specs.empty() ? workload.specs(knobs) : options.specs;
    std::unordered_set<std::string> seen_nests;  // effective nests of these knobs' loops
    for (const LoopSpecification& spec : specs) {
      if (static_cast<std::size_t>(spec.num_loops()) != loops.size())
        throw Error("loop spec '" + spec.to_string() + "' has " + std::to_string(spec.num_loops()) +
                    " loops, the workload " + workload.key(threads).kind + " has " +
                    std::to_string(loops.size()));
      std::vector<std::vector<std::vector<long>>> chains;
      LoopStringOptions spec_strings = string_options;
      for (int x = 0; x < spec.num_loops(); ++x) {
        const LogicalLoop& loop = loops[static_cast<std::size_t>(x)];
        chains.push_back(enumerate_block_chains(loop, spec.loop(x).extra_levels, block_options));
        if (loop.trips() <= 1 && spec.loop(x).extra_levels == 0) spec_strings.fixed_letters += spec.loop(x).letter;
      }
      for (const std::string& s : enumerate_loop_strings(spec, spec_strings)) {
        std::size_t choices = 1;
        for (const auto& c : chains) choices *= c.size();
        space.stats.enumerated += choices;
        LoopNest nest;
        try {
          nest = parlooper::parse_loop_string(s, spec.num_loops());
        } catch (const parlooper::LoopStringError&) {
          continue;
        }
        // Strings with one effective nest give the same candidates (dedup_key): the first stands for
        // all of them, whose block choices need not be walked again.
        if (!seen_nests.insert(effective_nest(nest, loops)).second) continue;
        for_each_block_choice(used_chains(nest, chains), [&](const std::vector<std::vector<long>>& used) {
          if (!seen.insert(dedup_key(nest, loops, used, knobs)).second) return;
          ++space.stats.distinct;
          if (legality_problem(nest, loops, used, threads, string_options.allow_parallel_reduction))
            return;
          ++space.stats.legal;
          if (parallel_imbalance(nest, loops, used, threads) > 1 + options.max_imbalance) return;
          ++space.stats.balanced;
          Candidate c;
          c.config = {knobs, s, used};
          c.estimate = estimate_cost(nest, loops, c.config.blocks, inputs, options.machine, threads);
          space.candidates.push_back(std::move(c));
        });
      }
    }
  }
  std::stable_sort(space.candidates.begin(), space.candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.estimate.seconds < b.estimate.seconds; });
  space.stats.kept = space.candidates.size();
  return space;
}

TuningRecord TuningResult::record() const {
  TuningRecord r;
  r.key = key;
  r.machine = MachineFingerprint::current();
  r.weft_version = std::string(weft_version());
  r.config = best.config;
  r.gflops = best.gflops();
  r.default_gflops = baseline.gflops();
  r.unix_time = static_cast<std::int64_t>(std::time(nullptr));
  char text[200];
  std::snprintf(text, sizeof text, "%zu enumerated, %zu kept, %zu measured, %.1f s%s%s", stats.enumerated,
                stats.kept, measured.size(), seconds, stopped_early ? ", stopped early" : "",
                cold_caches ? ", cold caches" : "");
  r.tuner = text;
  return r;
}

TuningResult tune(const Workload& workload, const TunerOptions& options, const ProgressCallback& progress) {
  const double start = now();
  const int threads = resolve_threads(options.threads);
  const int previous_threads = omp_get_max_threads();
  omp_set_num_threads(threads);
  struct RestoreThreads {
    int n;
    ~RestoreThreads() { omp_set_num_threads(n); }
  } restore{previous_threads};

  TuningResult result;
  result.key = workload.key(threads);
  result.cold_caches = options.cold_caches;
  std::optional<CacheEvictor> evict;
  if (options.cold_caches) evict.emplace(threads, options.machine.cache_bytes[1], options.machine.cache_bytes[2]);
  SearchSpace space = build_search_space(workload, options);
  result.stats = space.stats;
  result.search_seconds = now() - start;
  if (space.candidates.empty())
    throw NoCandidateError("tuner: no legal candidate for " + result.key.to_string() + " (" +
                           std::to_string(space.stats.enumerated) + " enumerated, " +
                           std::to_string(space.stats.legal) + " legal, " +
                           std::to_string(space.stats.balanced) + " balanced)");
  const std::size_t keep = options.exhaustive ? space.candidates.size()
                           : options.top_k   ? std::min(options.top_k, space.candidates.size())
                                             : std::min(automatic_top_k(workload, options, threads),
                                                        space.candidates.size());
  result.stats.kept = keep;  // measured at most; drawn from all candidates, knob setting by setting
  const std::size_t patience =
      options.patience ? options.patience : std::max<std::size_t>(24, keep / 3);
  const double measure_start = now();
  const double flops = workload.flops();
  auto gflops_of = [&](double seconds) { return seconds > 0 ? flops / seconds * 1e-9 : 0.0; };

  // Prepares, checks once and measures one configuration.
  auto evaluate = [&](CandidateResult& r, const MeasureOptions& how, double reference_seconds,
                      bool check) -> double {
    try {
      auto runner = workload.prepare(r.config);
      if (check) {
        const CheckResult c = runner->check();
        if (!c.passed) {
          r.failed = true;
          r.message = "wrong result: " + c.message;
          return 0;
        }
      }
      // Before each run, outside its timing: the outputs restored, then the caches evicted.
      std::function<void()> reset;
      const bool reset_outputs = runner->needs_reset();
      if (reset_outputs || evict) {
        reset = [&] {
          if (reset_outputs) runner->reset();
          if (evict) (*evict)();
        };
      }
      const Measurement m = measure([&] { runner->run(); }, reset, how, reference_seconds);
      r.aborted = m.aborted;
      return m.median_seconds;
    } catch (const Error& e) {
      r.failed = true;
      r.message = e.what();
      return 0;
    }
  };
  std::size_t total = keep + 1 + std::min(options.finalists, keep) + 1;
  auto report = [&](const CandidateResult& last, const char* phase, std::size_t done, double best) {
    if (!progress) return;
    Progress p;
    p.done = done;
    p.total = total;
    p.last = &last;
    p.best_gflops = best;
    p.elapsed_seconds = now() - measure_start;
    p.budget_seconds = options.exhaustive ? 0 : options.budget_seconds;
    p.phase = phase;
    progress(p);
  };

  // The default configuration first: the baseline, and the reference for early aborts.
  CandidateResult baseline;
  baseline.config = workload.default_config(threads);
  const double baseline_seconds = evaluate(baseline, options.quick, 0, true);
  if (baseline.failed)
    throw Error("tuner: the default configuration of " + result.key.to_string() + " fails: " + baseline.message);
  baseline.quick_gflops = gflops_of(baseline_seconds);
  result.measured.push_back(baseline);
  double best_seconds = baseline_seconds;
  report(result.measured.back(), "quick", 1, baseline.quick_gflops);

  // Quick phase. The model cannot see how fast the primitive runs for each knob setting (tile
  // sizes, batch-reduce length), so first scout every knob setting with its best-ranked candidate,
  // then spend the rest on the settings that scouted best, each in the model's order.
  std::vector<Knobs> group_knobs;  // in order of their best estimate
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < space.candidates.size(); ++i) {
    const Knobs& k = space.candidates[i].config.knobs;
    auto it = std::find(group_knobs.begin(), group_knobs.end(), k);
    if (it == group_knobs.end()) {
      group_knobs.push_back(k);
      groups.emplace_back();
      it = group_knobs.end() - 1;
    }
    groups[static_cast<std::size_t>(it - group_knobs.begin())].push_back(i);
  }
  std::vector<std::size_t> schedule;  // candidate indices in measurement order
  std::vector<std::size_t> next(groups.size(), 0);
  for (std::size_t g = 0; g < groups.size(); ++g) schedule.push_back(groups[g][next[g]++]);
  const std::size_t scouts = schedule.size();

  std::size_t since_gain = 0;
  const double quick_budget = options.budget_seconds * 0.75;
  std::vector<double> group_best(groups.size(), 0);
  for (std::size_t n = 0; n < keep; ++n) {
    if (n == scouts) {
      // Rank the knob settings by their scout, then interleave the better half's remaining
      // candidates (all of them when exhaustive).
      std::vector<std::size_t> ranked(groups.size());
      for (std::size_t g = 0; g < ranked.size(); ++g) ranked[g] = g;
      std::stable_sort(ranked.begin(), ranked.end(),
                       [&](std::size_t a, std::size_t b) { return group_best[a] > group_best[b]; });
      const std::size_t chosen = options.exhaustive ? ranked.size() : std::max<std::size_t>(2, (ranked.size() + 1) / 2);
      ranked.resize(std::min(chosen, ranked.size()));
      since_gain = 0;  // patience counts from here
      for (bool added = true; added;) {
        added = false;
        for (std::size_t g : ranked)
          if (next[g] < groups[g].size()) schedule.push_back(groups[g][next[g]++]), added = true;
      }
    }
    if (n >= schedule.size()) break;
    if (!options.exhaustive && now() - measure_start > quick_budget) {
      result.budget_exhausted = true;
      break;
    }
    if (!options.exhaustive && n >= scouts && since_gain >= patience) {
      result.stopped_early = true;
      break;
    }
    const std::size_t i = schedule[n];
    CandidateResult r;
    r.config = space.candidates[i].config;
    r.model_seconds = space.candidates[i].estimate.seconds;
    r.search_index = result.measured.size();
    // The exhaustive reference search measures everything fully (no early abort).
    const double seconds = evaluate(r, options.quick, options.exhaustive ? 0 : best_seconds, true);
    r.quick_gflops = gflops_of(seconds);
    for (std::size_t g = 0; g < groups.size(); ++g)
      if (group_knobs[g] == r.config.knobs) group_best[g] = std::max(group_best[g], r.failed ? 0.0 : r.quick_gflops);
    if (!r.failed && !r.aborted && seconds < best_seconds * 0.99) {
      best_seconds = seconds;
      since_gain = 0;
    } else {
      if (!r.failed && !r.aborted && seconds < best_seconds) best_seconds = seconds;
      ++since_gain;
    }
    result.measured.push_back(std::move(r));
    report(result.measured.back(), "quick", result.measured.size(), gflops_of(best_seconds));
  }

  // Thorough phase: the best few quick results and the default, measured the same way.
  std::vector<std::size_t> order;
  for (std::size_t i = 1; i < result.measured.size(); ++i)
    if (!result.measured[i].failed && !result.measured[i].aborted) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return result.measured[a].quick_gflops > result.measured[b].quick_gflops;
  });
  order.resize(std::min(order.size(), options.finalists));
  order.insert(order.begin(), 0);
  std::size_t done = result.measured.size();
  for (std::size_t n = 0; n < order.size(); ++n) {
    // The default and the quick phase's winner always; further finalists while the budget lasts.
    if (n >= 2 && !options.exhaustive && now() - measure_start > options.budget_seconds) {
      result.budget_exhausted = true;
      order.resize(n);
      break;
    }
    CandidateResult& r = result.measured[order[n]];
    r.thorough_gflops = gflops_of(evaluate(r, options.thorough, 0, false));
    report(r, "thorough", ++done, 0);
  }
  result.baseline = result.measured[0];
  result.best = result.baseline;
  for (std::size_t i : order)
    if (result.measured[i].thorough_gflops > result.best.thorough_gflops) result.best = result.measured[i];
  result.seconds = now() - start;
  return result;
}

}  // namespace weft::tuner
