// The training steps and what each one cost on this rank: forward, backward (handing the
// gradients to the exchange as they come), the exchange's completion, the SGD update.
//
//   const StepTimes times = train(trainer, exchange, options.steps, lr / global_batch);
//
// Per step: compute is the forward and backward passes' time less the time spent inside the
// exchange's calls; communication is that time (exposed: what the passes did not hide), the
// final wait included; optimizer is the update. The three add up to the step.
#pragma once

#include <cstdint>
#include <vector>

#include "gradient_exchange.hpp"
#include "mlp_trainer.hpp"

namespace weft::samples {

struct StepTimes {
  std::vector<double> compute, communication, optimizer;  // seconds, one per step
  std::vector<double> loss;                                // the trainer's loss before each update
};

StepTimes train(MlpTrainer& trainer, GradientExchange& exchange, std::int64_t steps, float step);

}  // namespace weft::samples
