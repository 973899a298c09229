// What the tuner tunes: a workload describes its logical loops (per knob setting), how they use
// memory (for the cost model), its default configuration, and how to run and check one
// configuration. The GEMM operators' adapter (weft/ops/gemm_workload.hpp) and the contraction
// workload (contraction_workload.hpp) implement it; a user's own ThreadedLoop kernel can too.
//
//   class MyWorkload : public weft::tuner::Workload { ... };
//   TuningResult r = tune(MyWorkload{...}, {.threads = 2, .budget_seconds = 10});
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "weft/tuner/cost_model.hpp"
#include "weft/tuner/loop_spec.hpp"
#include "weft/tuner/search_space.hpp"
#include "weft/tuner/tuned_config.hpp"
#include "weft/tuner/workload_key.hpp"

namespace weft::tuner {

struct CheckResult {
  bool passed = false;
  std::string message;  // the error norms, or what went wrong
};

// One prepared configuration: kernels generated, buffers bound.
class Runner {
 public:
  virtual ~Runner() = default;
  virtual void run() = 0;
  // Restores the outputs before a timed repetition, for operations that accumulate into them.
  virtual void reset() {}
  virtual bool needs_reset() const { return false; }
  // Runs once on poisoned outputs and compares with the workload's reference.
  virtual CheckResult check() = 0;
};

class Workload {
 public:
  virtual ~Workload() = default;

  virtual WorkloadKey key(int threads) const = 0;
  virtual double flops() const = 0;  // of one run()
  // Every knob setting the search may use (at least one, possibly empty).
  virtual std::vector<Knobs> knob_choices() const = 0;
  // The logical loops under a knob setting; letter 'a' + i is loops[i].
  virtual std::vector<LogicalLoop> loops(const Knobs& knobs) const = 0;
  // The loop specifications to enumerate under a knob setting (the user may override them).
  virtual std::vector<LoopSpecification> specs(const Knobs& knobs) const = 0;
  // How the body touches memory, for the cost model.
  virtual CostInputs cost_inputs(const Knobs& knobs) const = 0;
  // Whether a reduction loop may run in parallel (the workload combines partial results).
  virtual bool supports_parallel_reduction() const { return false; }
  virtual bool accepts_remainder_blocks() const { return true; }
  // The configuration users get without tuning: the baseline of the speedup column.
  virtual TunedConfig default_config(int threads) const = 0;
  // Generates kernels and the loop nest; throws weft::Error when the workload rejects `config`.
  virtual std::unique_ptr<Runner> prepare(const TunedConfig& config) const = 0;
};

}  // namespace weft::tuner
