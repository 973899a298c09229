// What the backward pass tells about its gradients, so that the training loop does not know how (or
// whether) they are summed over ranks: each layer's gradient is handed over as soon as it is
// computed (ready), the exchange may push its communication on between layers (progress), and
// complete() returns once every handed-over buffer holds the sum over all ranks.
//
//   trainer.backward(exchange);   // calls exchange.ready(l, gradient) from the top layer down
//   exchange.complete();          // all sums in place: the optimizer may read them
//
// LocalExchange is the one-process case (the check's reference): the local sum is the sum.
#pragma once

#include <span>

namespace weft::samples {

class GradientExchange {
 public:
  virtual ~GradientExchange() = default;
  // Layer `layer`'s gradient is computed; `gradient` must not be touched until complete().
  virtual void ready(int layer, std::span<float> gradient) = 0;
  // Called between layers of the backward pass.
  virtual void progress() = 0;
  // Returns when every gradient handed over since the last complete() is summed.
  virtual void complete() = 0;
  // Seconds spent inside communication calls since the last call of this function.
  virtual double take_seconds() = 0;
};

class LocalExchange final : public GradientExchange {
 public:
  void ready(int, std::span<float>) override {}
  void progress() override {}
  void complete() override {}
  double take_seconds() override { return 0; }
};

}  // namespace weft::samples
