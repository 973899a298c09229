// The forward GEMM / MLP operator, built the way a weft user builds it: a ThreadedLoop over
// block indices (a = K blocks, b = M blocks, c = N blocks) whose body calls BRGEMM kernels.
//
//   GemmFwdConfig cfg;
//   cfg.loop_string = "aBC", cfg.M = cfg.N = cfg.K = 512;
//   GemmFwd::check(cfg);                     // optional: throws what the constructor would, generates nothing
//   GemmFwd gemm(cfg);                       // validates, generates kernels and the loop nest
//   gemm.run(activations, weights, biases);  // blocked layouts, see blocked_layout.hpp
//
// The K loop steps by k_step = ceil(Kb / kbf) blocks: each body call is one batch reduce over up
// to k_step blocks. The first chunk of an output block uses a beta = 0 kernel (its first touch),
// the last one applies the fused bias / ReLU epilogue (its last touch), so an output block is
// written by exactly the calls of one (im, in) pair, in K order.
//
// In bf16 (config.dtype) the buffers hold bfloat16 in the same blocked layouts, except that
// each weight tile is in VNNI-2 (TileOrder::vnni2: pairs of K interleaved), which BRGEMM reads as
// its A; the kernels accumulate in fp32 and round each call's output to bf16 (a chunk after the
// first re-reads it), and the bias is bf16 too. In f64 everything is double, in the f32 layouts
// (no VNNI), accumulated in f64.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include <weft/ops/brgemm_table.hpp>
#include <weft/ops/element_type.hpp>
#include <weft/ops/gemm_layout.hpp>
#include <weft/ops/gemm_loops.hpp>
#include <weft/ops/pass_code.hpp>
#include <weft/ops/verification.hpp>
#include <weft/parlooper/threaded_loop.hpp>

namespace weft::ops {

struct GemmFwdConfig : GemmLoops {
  std::int64_t kbf = 1;  // the K loop is split into kbf batch-reduce chunks
  int n_layers = 1;      // > 1: an MLP, needs M == K and bm == bk
  bool fuse_bias = false;
  bool fuse_relu = false;
  // The activations (x, y and an MLP's hidden ones) in their plain layouts, PyTorch's row-major
  // (N, K) and (N, M), read and written in place (ActivationTiles); needs K % bk == 0, as the
  // batch reduce runs over whole tiles of x and a plain x has no zero padding.
  bool plain_activations = false;
};

class GemmFwd : public GemmPass<GemmFwdConfig> {
 public:
  // Throws weft::Error (LoopStringError for the loop_string) with what is wrong.
  explicit GemmFwd(GemmFwdConfig config) : GemmFwd(std::move(config), PassCode::build) {}

  // Throws the weft::Error the constructor throws for `config`, if any, and generates no code: the
  // same checks, with the kernels planned instead of emitted (pass_code.hpp).
  static void check(const GemmFwdConfig& config) { [[maybe_unused]] const GemmFwd checked(config, PassCode::check); }
  // Whether `config` with plain_activations set is valid: its bk divides K.
  static bool takes_plain_activations(const GemmFwdConfig& config) { return config.bk > 0 && config.K % config.bk == 0; }

  // One pass through all layers. activations[0] is the input B ([Nb][Kb][bn][bk], or plain);
  // activations[l + 1] receives layer l's output ([Nb][Mb][bn][bm], or plain); weights[l] is A of layer l
  // ([Mb][Kb][bk][bm]); biases[l] has Mb * bm elements (used when fuse_bias). The float overload
  // runs an f32 pass, the bfloat16 one a bf16 pass (weights in VNNI-2 tiles), the double one an
  // f64 pass; the others throw weft::Error.
  void run(std::span<float* const> activations, std::span<const float* const> weights,
           std::span<const float* const> biases) const;
  void run(std::span<bfloat16* const> activations, std::span<const bfloat16* const> weights,
           std::span<const bfloat16* const> biases) const;
  void run(std::span<double* const> activations, std::span<const double* const> weights,
           std::span<const double* const> biases) const;

  std::int64_t k_step() const { return k_step_; }
  // Batch-reduce calls that add into each output block: ceil(Kb / k_step).
  std::int64_t k_chunks() const { return (k_blocking().blocks() + k_step_ - 1) / k_step_; }
  // A (M x K, row-block-major, VNNI-2 tiles in bf16), B (K x N) and C (M x N) of one layer, plain
  // and blocked.
  GemmPassLayout layout() const;
  // How each output element of a layer is summed (the bound of a bf16 check): K products and the
  // bias over k_chunks() calls, each rounding its output to bf16.
  Bf16Sum bf16_sum() const;
  double flops() const { return config_.flops() * config_.n_layers; }  // of one run()
  // "<loop_string>_<M>_<N>_<K>_<bm>_<bn>_<bk>_bf<kbf>_threads<T>", the MEASURE tag ("_bf16" appended
  // in bf16).
  std::string measure_tag(int threads) const {
    return config_.measure_tag(config_.kbf, threads) + config_.precision_tag();
  }
  std::string render_loop() const { return loop_->render(); }

 private:
  GemmFwd(GemmFwdConfig config, PassCode code);

  template <class T>
  void run_typed(std::span<T* const> activations, std::span<const T* const> weights,
                 std::span<const T* const> biases) const;
  template <class T>
  void run_layer(const T* input, const T* weight, const T* bias, T* output) const;
  ActivationTiles input_tiles() const { return {k_blocking(), n_blocking(), config_.plain_activations}; }
  ActivationTiles output_tiles() const { return {m_blocking(), n_blocking(), config_.plain_activations}; }

  std::int64_t k_step_ = 1;
  BrgemmTable kernels_;
  std::optional<parlooper::ThreadedLoop<3>> loop_;  // none in check()
};

}  // namespace weft::ops
