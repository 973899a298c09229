#include <weft/ops/gemm_defaults.hpp>

#include <algorithm>
#include <cstdint>
#include <utility>

#include <weft/jit/cpu.hpp>
#include <weft/jit/isa_traits.hpp>

namespace weft::ops {

namespace {

// One entry of the FP32 rule table (gemm_defaults.hpp has the measurements).
struct Fp32Entry {
  std::int64_t bm;                // four vectors of rows
  std::int64_t blocks_per_chunk;  // K blocks of 64 per batch reduce
};

Fp32Entry fp32_entry(const GemmMachine& machine) {
  if (machine.vector_bytes >= 64) return {64, 8};  // AVX-512
  return {32, 4};                                  // AVX2 (and the reference ISA)
}

}  // namespace

GemmMachine GemmMachine::current() {
  return {.vector_bytes = jit::isa_traits(jit::selected_isa()).vector_bytes};
}

GemmFwdConfig recommended_gemm_config(const GemmFwdConfig& problem, int threads, const GemmMachine& machine) {
  GemmFwdConfig c = problem;
  const bool mlp = problem.n_layers > 1;
  const Fp32Entry fp32 = fp32_entry(machine);
  // f64: the FP32 entry's four vectors of rows hold half the elements; its A chunk (bm x 512 or
  // x 256 doubles) takes the same bytes as FP32's, so the chunking stays.
  const std::int64_t rows = problem.f64() ? fp32.bm / 2 : fp32.bm;
  c.bm = mlp || problem.bf16() ? 64 : rows;
  c.bn = problem.bf16() ? 128 : 48;
  c.bk = 64;
  const std::int64_t mb = (problem.M + c.bm - 1) / c.bm;
  const std::int64_t kb = (problem.K + c.bk - 1) / c.bk;
  const std::int64_t blocks_per_chunk = problem.bf16() ? 4 : fp32.blocks_per_chunk;
  c.kbf = std::max<std::int64_t>(1, (kb + blocks_per_chunk - 1) / blocks_per_chunk);
  // Groups of up to 8 M blocks, but at least one group per thread.
  const long group = static_cast<long>(std::clamp<std::int64_t>(mb / std::max(1, threads), 1, 8));
  c.loop_string = threads > 1 ? "aBcb" : "abcb";
  c.k_blocks.clear();
  c.m_blocks = {group};
  c.n_blocks.clear();
  return c;
}

void GemmConfigOverride::apply(GemmFwdConfig& c) const {
  if (!loop_string.empty()) {
    c.loop_string = loop_string;
    c.k_blocks = k_blocks;
    c.m_blocks = m_blocks;
    c.n_blocks = n_blocks;
  }
  for (auto [given, field] : {std::pair{bm, &c.bm}, {bn, &c.bn}, {bk, &c.bk}, {kbf, &c.kbf}})
    if (given != 0) *field = given;
}

}  // namespace weft::ops
