#include <weft/ops/block_loops.hpp>

#include <algorithm>

#include <weft/jit/error.hpp>
#include <weft/parlooper/loop_string.hpp>

namespace weft::ops {
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

parlooper::LoopSpecs block_loop_specs(std::int64_t trips, std::int64_t step, const std::vector<long>& blocks) {
  const long end = static_cast<long>(trips), stride = static_cast<long>(step);
  parlooper::LoopSpecs s{0L, end, stride};
  s.block_size = blocks.empty() ? default_loop_blocks((end + stride - 1) / stride, stride) : blocks;
  return s;
}

void require_sequential_reduction(const parlooper::LoopNest& nest, int loop, std::int64_t iterations,
                                  const std::string& remedy) {
  if (iterations <= 1) return;
  for (const auto& level : nest.levels) {
    if (level.loop == loop && level.par != parlooper::ParKind::none) {
      const char letter = static_cast<char>('a' + loop);
      throw Error(std::string("loop '") + letter + "' is the reduction of this sample (" +
                  std::to_string(iterations) + " batch-reduce chunks); running it in parallel ('" +
                  static_cast<char>(letter - 'a' + 'A') +
                  "') would let threads add into the same output block at once. Keep it lower case, "
                  "or use a single chunk" + remedy + ".");
    }
  }
}

void require_positive(std::initializer_list<std::pair<const char*, std::int64_t>> values) {
  for (const auto& [name, value] : values)
    if (value <= 0) throw Error(std::string(name) + " must be positive, got " + std::to_string(value));
}

tpp::BrgemmPrefetch output_prefetch(const std::string& loop_string, int loops, int reduction_loop) {
  try {
    const parlooper::LoopNest nest = parlooper::parse_loop_string(loop_string, loops);
    if (!nest.levels.empty() && nest.levels.back().loop != reduction_loop) return tpp::BrgemmPrefetch::next_c;
  } catch (const weft::Error&) {
    // make_block_loop reports the string's error.
  }
  return tpp::BrgemmPrefetch::none;
}

std::string measure_tag(const std::string& loop_string, std::initializer_list<std::int64_t> sizes,
                        std::int64_t chunks, int threads) {
  std::string tag = loop_string;
  for (std::int64_t v : sizes) tag += "_" + std::to_string(v);
  return tag + "_bf" + std::to_string(chunks) + "_threads" + std::to_string(threads);
}

}  // namespace weft::ops
