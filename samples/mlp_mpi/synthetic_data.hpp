// The training data and the initial weights, from a seed alone: every element is a hash of (seed,
// stream, index), so that each rank makes exactly its own columns of the global input and target,
// and every rank (and the one-rank check) the same weights, whatever the number of ranks.
//
//   std::vector<float> x = synthetic_columns(seed, DataStream::input, rows, first, count);
#pragma once

#include <cstdint>
#include <vector>

namespace weft::samples {

enum class DataStream : std::uint64_t { input = 1, target = 2, weight = 3, bias = 4 };

// A value in [-1, 1) for element `index` of `stream` (layer `layer` for weights and biases).
float synthetic_value(std::uint64_t seed, DataStream stream, std::uint64_t layer, std::uint64_t index);

// Columns [first, first + count) of a `rows` x global-batch matrix, column-major (rows contiguous):
// the input in [-1, 1), the target in [0, 1) (what a ReLU output can reach).
std::vector<float> synthetic_columns(std::uint64_t seed, DataStream stream, std::int64_t rows, std::int64_t first,
                                     std::int64_t count);

// Layer `layer`'s weights, `width` x `width` row-major, uniform in +-sqrt(6 / width) (He's
// initialization: ReLU layers keep the activations' scale), and its `width` biases in +-0.1.
std::vector<float> synthetic_weights(std::uint64_t seed, int layer, std::int64_t width);
std::vector<float> synthetic_biases(std::uint64_t seed, int layer, std::int64_t width);

}  // namespace weft::samples
