#include "training_loop.hpp"

#include <chrono>

namespace weft::samples {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

StepTimes train(MlpTrainer& trainer, GradientExchange& exchange, std::int64_t steps, float step) {
  StepTimes times;
  exchange.take_seconds();
  for (std::int64_t s = 0; s < steps; ++s) {
    const auto start = std::chrono::steady_clock::now();
    trainer.forward();
    times.loss.push_back(trainer.backward(exchange));
    exchange.complete();
    const double passes = seconds_since(start);
    const double communication = exchange.take_seconds();
    const auto update = std::chrono::steady_clock::now();
    trainer.sgd(step);
    times.optimizer.push_back(seconds_since(update));
    times.compute.push_back(passes - communication);
    times.communication.push_back(communication);
  }
  return times;
}

}  // namespace weft::samples
