#include "batch_split.hpp"

#include <string>

#include <weft/jit/error.hpp>

namespace weft::samples {

BatchShare batch_share(std::int64_t global_batch, int ranks, int rank) {
  if (ranks < 1 || rank < 0 || rank >= ranks)
    throw Error("batch_share: rank " + std::to_string(rank) + " of " + std::to_string(ranks) + " ranks");
  if (global_batch < ranks) {
    throw Error("--batch " + std::to_string(global_batch) + " is smaller than the " + std::to_string(ranks) +
                " ranks: every rank needs at least one column of the batch");
  }
  const std::int64_t base = global_batch / ranks, extra = global_batch % ranks;
  return {.first = rank * base + (rank < extra ? rank : extra), .count = base + (rank < extra ? 1 : 0)};
}

}  // namespace weft::samples
