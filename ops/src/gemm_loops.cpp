#include <weft/ops/gemm_loops.hpp>

#include <weft/jit/error.hpp>
#include <weft/ops/block_loops.hpp>

namespace weft::ops {

double GemmLoops::flops() const {
  return 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
}

tpp::DataTypes GemmLoops::brgemm_types() const {
  if (bf16()) return {.in = jit::DataType::bf16, .out = jit::DataType::bf16, .compute = jit::DataType::f32};
  return {.in = dtype, .out = dtype, .compute = dtype};
}

tpp::DataTypes GemmLoops::sum_types() const {
  const jit::DataType sum = f64() ? jit::DataType::f64 : jit::DataType::f32;
  return {.in = sum, .out = sum, .compute = sum};
}

std::int64_t GemmLoops::validated_step(const char* chunks_name, std::int64_t chunks, const Blocking& reduction) const {
  require_positive({{"M", M}, {"N", N}, {"K", K}, {"bm", bm}, {"bn", bn}, {"bk", bk}, {chunks_name, chunks}});
  if (dtype != jit::DataType::f32 && dtype != jit::DataType::bf16 && dtype != jit::DataType::f64) {
    throw Error("dtype: data type " + std::string(jit::to_string(dtype)) +
                ": the GEMM operators compute in f32, in bf16 (with f32 accumulation) or in f64");
  }
  return chunk_step(reduction.blocks(), chunks);
}

void GemmLoops::require_even_in_bf16(const char* name, std::int64_t value, const char* why) const {
  if (!bf16() || value % 2 == 0) return;
  throw Error(std::string(name) + " = " + std::to_string(value) + " is odd: in bf16 " + why + ", so " + name +
              " must be even");
}

std::array<parlooper::LoopSpecs, 3> GemmLoops::loop_specs(const std::array<std::int64_t, 3>& steps) const {
  return block_nest_specs<3>({k_blocking().blocks(), m_blocking().blocks(), n_blocking().blocks()}, steps,
                             {k_blocks, m_blocks, n_blocks});
}

std::string GemmLoops::measure_tag(std::int64_t chunks, int threads) const {
  return ops::measure_tag(loop_string, {M, N, K, bm, bn, bk}, chunks, threads);
}

}  // namespace weft::ops
