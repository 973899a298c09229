#include "gemm_loops.hpp"

#include <algorithm>

#include <weft/jit/error.hpp>
#include <weft/parlooper/loop_string.hpp>

namespace weft::samples {
namespace {

std::vector<long> prime_factors(long n) {
  std::vector<long> factors;
  for (long p = 2; p * p <= n; ++p)
    while (n % p == 0) factors.push_back(p), n /= p;
  if (n > 1) factors.push_back(n);
  return factors;
}

}  // namespace

std::int64_t chunk_step(std::int64_t blocks, std::int64_t chunks) {
  const std::int64_t n = std::max<std::int64_t>(1, std::min(chunks, blocks));
  return (blocks + n - 1) / n;
}

std::vector<long> default_loop_blocks(long trips, long step) {
  const auto f = prime_factors(trips);
  const long p0 = f.size() > 0 ? f[0] : 1;
  const long p1 = f.size() > 1 ? f[1] : 1;
  return {p0 * p1 * step, p0 * step};
}

parlooper::ThreadedLoop<3> make_gemm_loop(const std::string& loop_string,
                                          const std::array<std::int64_t, 3>& trips,
                                          const std::array<std::int64_t, 3>& steps,
                                          const std::array<std::vector<long>, 3>& blocks) {
  auto spec = [&](int i) {
    const long end = static_cast<long>(trips[i]), step = static_cast<long>(steps[i]);
    parlooper::LoopSpecs s{0L, end, step};
    s.block_size = blocks[i].empty() ? default_loop_blocks((end + step - 1) / step, step) : blocks[i];
    return s;
  };
  return parlooper::ThreadedLoop<3>({spec(0), spec(1), spec(2)}, loop_string);
}

void require_sequential_reduction(const parlooper::LoopNest& nest, int loop, std::int64_t iterations) {
  if (iterations <= 1) return;
  for (const auto& level : nest.levels) {
    if (level.loop == loop && level.par != parlooper::ParKind::none) {
      const char letter = static_cast<char>('a' + loop);
      throw Error(std::string("loop '") + letter + "' is the reduction of this GEMM (" +
                  std::to_string(iterations) + " batch-reduce chunks); running it in parallel ('" +
                  static_cast<char>(letter - 'a' + 'A') +
                  "') would let threads add into the same output block at once. Keep it lower case, "
                  "or use a single chunk" + (loop == 2 ? ", or partial filters" : "") + ".");
    }
  }
}

void require_positive(const char* name, std::int64_t value) {
  if (value <= 0) throw Error(std::string(name) + " must be positive, got " + std::to_string(value));
}

tpp::BrgemmPrefetch output_prefetch(const std::string& loop_string, int reduction_loop) {
  try {
    const parlooper::LoopNest nest = parlooper::parse_loop_string(loop_string, 3);
    if (!nest.levels.empty() && nest.levels.back().loop != reduction_loop) return tpp::BrgemmPrefetch::next_c;
  } catch (const weft::Error&) {
    // make_gemm_loop reports the string's error.
  }
  return tpp::BrgemmPrefetch::none;
}

std::string measure_tag(const std::string& loop_string, const std::array<std::int64_t, 6>& sizes,
                        std::int64_t chunks, int threads) {
  std::string tag = loop_string;
  for (std::int64_t v : sizes) tag += "_" + std::to_string(v);
  return tag + "_bf" + std::to_string(chunks) + "_threads" + std::to_string(threads);
}

}  // namespace weft::samples
