// weft-mlp-mpi --check: is the data-parallel training the training of the whole batch?
//
// 1. Every rank's final weights against rank 0's (broadcast): the ranks applied the same summed
//    gradients, so they must hold the same weights.
// 2. On rank 0, the same MLP trained alone on the whole global batch (the same seed, steps and
//    learning rate: the one-rank run) against rank 0's distributed result.
//
// Each is the largest, over the layers, of max |a - b| / max |b| over a layer's weights and biases.
// The two runs differ only in how the gradient sums over the batch are grouped (per rank, then
// across ranks), which changes their rounding: in f32 a few float ulps per step, which
// kWeightTolerance leaves room for and nothing more (an error in the split, a lost or doubled
// column, a gradient not summed, moves the weights by a share of their whole movement, 5e-2 in
// tests/samples/mlp_training_test.cpp). In bf16 each rank's dW is rounded to bf16 before the sum,
// and a master weight that moves by a rounding may round to another bf16 weight for the passes:
// the runs part by about 2^-8 of how far the training moved the weights (3e-4 to 3e-3 measured
// over 6 to 20 steps), which kBf16WeightTolerance, 2.5 bf16 roundings, allows.
//
//   const bool passed = check_training(mpi, trainer, whole_batch, options, stdout);   // collective
#pragma once

#include <cstdio>
#include <span>

#include "mlp_mpi_args.hpp"
#include "mlp_trainer.hpp"
#include "mpi_session.hpp"

namespace weft::samples {

inline constexpr double kWeightTolerance = 1e-5;
inline constexpr double kBf16WeightTolerance = 1e-2;

// max |a - b| / max |b| (0 when both are 0; a NaN in either gives NaN, which fails any check).
double max_relative_difference(std::span<const float> a, std::span<const float> b);

// Runs both checks (every rank calls it), prints their lines on rank 0 and returns, on every
// rank, whether both passed. `whole` is the one-rank run's shape (all the global batch's columns).
bool check_training(const MpiSession& mpi, MlpTrainer& trained, const MlpShape& whole, const MlpMpiOptions& options,
                    int threads, std::FILE* out);

}  // namespace weft::samples
