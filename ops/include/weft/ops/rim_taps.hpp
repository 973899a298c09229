// PARLOOPER's avoid_rim_fmas, along one axis (rows or columns) of a convolution's GEMMs: the taps of
// a filter row or column that read the image, per output position, grouped into ranges. The taps
// outside a position's range read the rims' zeros; its GEMM leaves them out of its batch.
//
//   // forward, columns: output column q's window starts at padded input column q * stride_w
//   const RimTaps cols = rim_taps(ofw, S, skip, [&](std::int64_t q) {
//     return TapRange{std::max<std::int64_t>(0, pad_w - q * stride_w), std::min(S, pad_w + W - q * stride_w)};
//   });
//   cols.ranges[cols.of_position[q]]   // the taps column q reduces over; ranges[0] is every tap
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace weft::ops {

using TapRange = std::pair<std::int64_t, std::int64_t>;  // taps [first, second)

struct RimTaps {
  std::vector<TapRange> ranges;            // [0]: every tap
  std::vector<std::int32_t> of_position;   // index into ranges, per position
  bool cuts() const { return ranges.size() > 1; }
  // The share of the axis's multiply-adds the cut ranges leave out.
  double saved_share() const {
    const double taps = static_cast<double>(ranges[0].second - ranges[0].first);
    double kept = 0;
    for (const std::int32_t r : of_position) kept += static_cast<double>(ranges[r].second - ranges[r].first);
    return of_position.empty() ? 0.0 : 1.0 - kept / (taps * static_cast<double>(of_position.size()));
  }
};

// Every position keeps every tap of [0, taps).
inline RimTaps every_tap(std::int64_t positions, std::int64_t taps) {
  return {{{0, taps}}, std::vector<std::int32_t>(static_cast<std::size_t>(positions), 0)};
}

// range_of(i): the taps of position i that read the image. Without `skip`, or when some position
// would keep none (its GEMM would sum nothing and need a call that only zeroes), every position
// keeps every tap of [0, taps).
template <class RangeOf>
RimTaps rim_taps(std::int64_t positions, std::int64_t taps, bool skip, RangeOf range_of) {
  RimTaps all = every_tap(positions, taps);
  if (!skip) return all;
  RimTaps cut = all;
  for (std::int64_t i = 0; i < positions; ++i) {
    const TapRange range = range_of(i);
    if (range.first >= range.second) return all;
    auto same = std::find(cut.ranges.begin(), cut.ranges.end(), range);
    if (same == cut.ranges.end()) same = cut.ranges.insert(cut.ranges.end(), range);
    cut.of_position[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(same - cut.ranges.begin());
  }
  return cut;
}

// Edge columns are GEMMs down the image over rows whose filter rows are the same; a run of such
// rows is split into chunks of at most max_rows rows, as even as possible, so that the GEMMs stay
// about one register tile wide and the rows that compute them (each chunk's last) spread over the
// threads that split the rows. Returns per row the rows of the chunk ending there, 0 elsewhere.
// same_as_next(y): row y + 1 has row y's filter rows.
template <class SameAsNext>
std::vector<std::int32_t> edge_chunks(std::int64_t rows, std::int64_t max_rows, SameAsNext same_as_next) {
  std::vector<std::int32_t> chunk_of_row(static_cast<std::size_t>(rows), 0);
  for (std::int64_t start = 0; start < rows;) {
    std::int64_t end = start + 1;
    while (end < rows && same_as_next(end - 1)) ++end;
    const std::int64_t run = end - start, chunks = (run + max_rows - 1) / max_rows;
    for (std::int64_t c = 0, first = start; c < chunks; ++c) {
      const std::int64_t length = run / chunks + (c < run % chunks ? 1 : 0);
      chunk_of_row[static_cast<std::size_t>(first + length - 1)] = static_cast<std::int32_t>(length);
      first += length;
    }
    start = end;
  }
  return chunk_of_row;
}

// Edge columns cost GEMMs of their own, which read B and write C a row apart: they pay when they
// leave out at least this share of the columns' multiply-adds (measured on Zen 4, 2 threads: 9.5%
// on 7 x 7 and 2.4% on 28 x 28 images with 3 x 3 filters gained, 1.2% on 56 x 56 showed no gain
// beyond the noise and 1% on the 7 x 7 stride-2 stem lost).
inline constexpr double kEdgeColumnsMinSavedShare = 0.02;
inline constexpr std::int64_t kEdgeColumnsMaxRows = 8;

}  // namespace weft::ops
