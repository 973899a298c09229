// The logical loops every GEMM sample declares: a = K blocks, b = M blocks, c = N blocks (in block
// units), one of them stepping by a batch-reduce chunk, with PARLOOPER's default block sizes for
// repeated letters unless the user gives them.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <weft/parlooper/threaded_loop.hpp>
#include <weft/tpp/brgemm.hpp>

namespace weft::samples {

// Blocks per batch-reduce chunk when `blocks` blocks are split into `chunks` chunks (the last
// chunk may be shorter).
std::int64_t chunk_step(std::int64_t blocks, std::int64_t chunks);

// PARLOOPER's default block sizes for a loop of `trips` iterations of `step`: {p0 * p1 * step,
// p0 * step} with p0, p1 the first two prime factors of trips (1 when missing).
std::vector<long> default_loop_blocks(long trips, long step);

// ThreadedLoop<3> over (a, b, c) = (K, M, N) blocks [0, trips[i]) with steps[i]; blocks[i] are the
// block sizes of loop i's outer occurrences (empty: the default above). Throws weft::Error.
parlooper::ThreadedLoop<3> make_gemm_loop(const std::string& loop_string,
                                          const std::array<std::int64_t, 3>& trips,
                                          const std::array<std::int64_t, 3>& steps,
                                          const std::array<std::vector<long>, 3>& blocks);

// Throws weft::Error when the reduction loop `loop` (0 = a, 1 = b, 2 = c) of `nest` is parallel
// while it has more than one iteration: threads would then add into the same output block at the
// same time, and the first-touch (beta = 0) chunk could run after another one.
void require_sequential_reduction(const parlooper::LoopNest& nest, int loop, std::int64_t iterations);

// The prefetch hint for a sample's beta = 1 BRGEMM kernels: next_c when the innermost level of
// loop_string's nest is not the reduction loop `reduction_loop` (0 = a, 1 = b, 2 = c), so that
// consecutive calls write consecutive output blocks; none otherwise, and for a string that does not
// parse (make_gemm_loop reports it). Measured on the forward sample, 2048^3 on one thread (Zen 4):
// 93-96 GFLOPS without, 96-103 with.
tpp::BrgemmPrefetch output_prefetch(const std::string& loop_string, int reduction_loop);

// Throws weft::Error "<name> must be positive, got <value>" unless value > 0.
void require_positive(const char* name, std::int64_t value);

// "<loop_string>_<M>_<N>_<K>_<bm>_<bn>_<bk>_bf<chunks>_threads<T>": the MEASURE tag.
std::string measure_tag(const std::string& loop_string, const std::array<std::int64_t, 6>& sizes,
                        std::int64_t chunks, int threads);

}  // namespace weft::samples
