// What the GEMM passes (forward, backward by data, backward by weights) have in common: the
// configuration of their loops a = K blocks, b = M blocks, c = N blocks, and the accessors every
// pass offers on it.
//
//   GemmBwdConfig c;                    // a GemmLoops and the pass's own knobs
//   c.M = c.N = c.K = 512;
//   c.loop_string = "bcaBC";
//   c.m_blocks = {4};                   // the outer occurrence of b, in blocks of bm
//   std::string tag = c.measure_tag(c.mbf, 2);   // "bcaBC_512_512_512_32_32_32_bf1_threads2"
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <weft/jit/data_type.hpp>
#include <weft/ops/blocked_layout.hpp>
#include <weft/parlooper/threaded_loop.hpp>
#include <weft/tpp/data_types.hpp>

namespace weft::ops {

// The base of every GEMM pass's configuration.
struct GemmLoops {
  std::string loop_string = "aBC";
  std::int64_t M = 0, N = 0, K = 0;
  std::int64_t bm = 32, bn = 32, bk = 32;
  // Block sizes of the loops' outer occurrences in the loop_string, in units of blocks, outermost
  // first. Empty: PARLOOPER's rule (products of the first prime factors of the trip counts).
  std::vector<long> k_blocks, m_blocks, n_blocks;
  // The operands' element type: f32, bf16 (inputs and outputs bf16, the weights' tiles in VNNI-2,
  // fp32 accumulation inside BRGEMM; docs/gemm_sample.md), or f64 (all f64, the layouts of f32:
  // no VNNI).
  jit::DataType dtype = jit::DataType::f32;

  Blocking m_blocking() const { return {M, bm}; }
  Blocking n_blocking() const { return {N, bn}; }
  Blocking k_blocking() const { return {K, bk}; }
  double flops() const;  // 2 M N K
  bool bf16() const { return dtype == jit::DataType::bf16; }
  bool f64() const { return dtype == jit::DataType::f64; }
  // The BRGEMM kernels' types: all f32, bf16 in and out with f32 accumulators, or all f64.
  tpp::DataTypes brgemm_types() const;
  // The types of sums kept outside the operands (the update's partial filters): all f32 for f32
  // and bf16 (bf16 rounds once, at the end), all f64 for f64.
  tpp::DataTypes sum_types() const;

  // Throws weft::Error unless the sizes, the tiles and `chunks` (the sample's name for the number
  // of batch-reduce chunks of its reduction, e.g. "kbf") are positive and dtype is f32, bf16 or
  // f64. Returns the step of the reduction loop over `reduction`: blocks per chunk.
  std::int64_t validated_step(const char* chunks_name, std::int64_t chunks, const Blocking& reduction) const;
  // In bf16, throws weft::Error "<name> = <value> is odd: in bf16 <why>, so <name> must be even"
  // when `value` is odd (`why`: which operand is VNNI-2 along that tile's dimension).
  void require_even_in_bf16(const char* name, std::int64_t value, const char* why) const;
  // The LoopSpecs of the loops over (K, M, N) blocks with these steps (the ThreadedLoop<3> of
  // loop_string over them is the pass's).
  std::array<parlooper::LoopSpecs, 3> loop_specs(const std::array<std::int64_t, 3>& steps) const;
  // "<loop_string>_<M>_<N>_<K>_<bm>_<bn>_<bk>_bf<chunks>_threads<T>", PARLOOPER's MEASURE tag.
  std::string measure_tag(std::int64_t chunks, int threads) const;
  // What a tag ends with after the pass's own suffixes: "" in f32, "_bf16" in bf16, "_f64" in f64
  // (PARLOOPER's tags do not name the precision, so such a line would otherwise read as an FP32 one).
  std::string precision_tag() const { return bf16() ? "_bf16" : f64() ? "_f64" : ""; }
};

// What every GEMM pass offers on its configuration.
template <class Config>
class GemmPass {
 public:
  const Config& config() const { return config_; }
  Blocking m_blocking() const { return config_.m_blocking(); }
  Blocking n_blocking() const { return config_.n_blocking(); }
  Blocking k_blocking() const { return config_.k_blocking(); }

 protected:
  explicit GemmPass(Config config) : config_(std::move(config)) {}
  Config config_;
};

}  // namespace weft::ops
