// The logical loops of a blocked pass: one loop per blocked dimension, in block units (for the
// GEMM passes a = K blocks, b = M blocks, c = N blocks), a reduction loop stepping by a
// batch-reduce chunk, PARLOOPER's default block sizes for repeated letters unless the user gives
// them, and the checks and names that go with them.
//
//   auto loop = make_block_loop<3>("aBC", {Kb, Mb, Nb}, {k_step, 1, 1}, {k_blocks, m_blocks, n_blocks});
//   require_sequential_reduction(loop.dynamic().nest(), 0, chunks);
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <weft/parlooper/threaded_loop.hpp>
#include <weft/tpp/brgemm.hpp>

namespace weft::ops {

// Blocks per batch-reduce chunk when `blocks` blocks are split into `chunks` chunks (the last
// chunk may be shorter).
std::int64_t chunk_step(std::int64_t blocks, std::int64_t chunks);

// PARLOOPER's default block sizes for a loop of `trips` iterations of `step`: {p0 * p1 * step,
// p0 * step} with p0, p1 the first two prime factors of trips (1 when missing).
std::vector<long> default_loop_blocks(long trips, long step);

// The LoopSpecs of a loop over [0, trips) with `step`; `blocks` are the block sizes of its outer
// occurrences in the loop_string (empty: the default above).
parlooper::LoopSpecs block_loop_specs(std::int64_t trips, std::int64_t step, const std::vector<long>& blocks);

// The LoopSpecs of loops i = 0..N-1: block_loop_specs(trips[i], steps[i], blocks[i]).
template <int N>
std::array<parlooper::LoopSpecs, N> block_nest_specs(const std::array<std::int64_t, N>& trips,
                                                     const std::array<std::int64_t, N>& steps,
                                                     const std::array<std::vector<long>, N>& blocks) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::array<parlooper::LoopSpecs, N>{block_loop_specs(trips[I], steps[I], blocks[I])...};
  }(std::make_index_sequence<N>{});
}

// ThreadedLoop<N> over block_nest_specs(trips, steps, blocks). Throws weft::Error (LoopStringError
// for the string).
template <int N>
parlooper::ThreadedLoop<N> make_block_loop(const std::string& loop_string,
                                           const std::array<std::int64_t, N>& trips,
                                           const std::array<std::int64_t, N>& steps,
                                           const std::array<std::vector<long>, N>& blocks) {
  return parlooper::ThreadedLoop<N>(block_nest_specs<N>(trips, steps, blocks), loop_string);
}

// Throws weft::Error when the reduction loop `loop` (0 = a, 1 = b, ...) of `nest` is parallel
// while it has more than one iteration: threads would then add into the same output block at the
// same time, and the first-touch (beta = 0) chunk could run after another one. `remedy` ends the
// message with what else makes it legal (", or partial filters"), or is empty.
void require_sequential_reduction(const parlooper::LoopNest& nest, int loop, std::int64_t iterations,
                                  const std::string& remedy = "");

// The prefetch hint for a sample's beta = 1 BRGEMM kernels: next_c when the innermost level of
// loop_string's nest over `loops` loops is not the reduction loop `reduction_loop`, so that
// consecutive calls write consecutive output blocks; none otherwise, and for a string that does not
// parse (make_block_loop reports it). Measured on the forward GEMM sample, 2048^3 on one thread
// (Zen 4): 93-96 GFLOPS without, 96-103 with.
tpp::BrgemmPrefetch output_prefetch(const std::string& loop_string, int loops, int reduction_loop);

// Throws weft::Error "<name> must be positive, got <value>" for the first entry that is not > 0.
void require_positive(std::initializer_list<std::pair<const char*, std::int64_t>> values);

// "<loop_string>_<size>_<size>..._bf<chunks>_threads<T>": the tag of PARLOOPER's MEASURE lines.
std::string measure_tag(const std::string& loop_string, std::initializer_list<std::int64_t> sizes,
                        std::int64_t chunks, int threads);

}  // namespace weft::ops
