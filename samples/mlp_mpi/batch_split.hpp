// How the global batch is split over the ranks: rank r trains on columns [first, first + count) of
// the global input. B / P columns each, and one more on the first B % P ranks, so that no rank waits
// for more than one column of another's work and any B >= P is allowed.
//
//   const BatchShare share = batch_share(130, 4, 1);   // {.first = 33, .count = 33}
#pragma once

#include <cstdint>

namespace weft::samples {

struct BatchShare {
  std::int64_t first = 0;  // the first global column
  std::int64_t count = 0;  // columns
};

// Throws weft::Error when ranks < 1, rank is outside [0, ranks) or the batch has fewer columns
// than there are ranks (a rank without data would have nothing to contribute).
BatchShare batch_share(std::int64_t global_batch, int ranks, int rank);

}  // namespace weft::samples
