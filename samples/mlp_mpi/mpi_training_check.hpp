// weft-mlp-mpi --check: is the data-parallel training the training of the whole batch?
//
// 1. Every rank's final weights against rank 0's (broadcast): the ranks applied the same summed
//    gradients, so they must hold the same weights.
// 2. On rank 0, the same MLP trained alone on the whole global batch (the same seed, steps and
//    learning rate: the one-rank run) against rank 0's distributed result.
//
// Each is the largest, over the layers, of max |a - b| / max |b| over a layer's weights and biases.
// The two runs differ only in how the gradient sums over the batch are grouped (per rank, then
// across ranks), which changes their rounding, a few float ulps per step; kWeightTolerance leaves
// room for that and nothing more (an error in the split, a lost or doubled column, moves weights
// by about lr / batch of their scale, far above it).
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

// max |a - b| / max |b| (0 when both are 0; a NaN in either gives NaN, which fails any check).
double max_relative_difference(std::span<const float> a, std::span<const float> b);

// Runs both checks (every rank calls it), prints their lines on rank 0 and returns, on every
// rank, whether both passed. `whole` is the one-rank run's shape (all the global batch's columns).
bool check_training(const MpiSession& mpi, MlpTrainer& trained, const MlpShape& whole, const MlpMpiOptions& options,
                    int threads, std::FILE* out);

}  // namespace weft::samples
