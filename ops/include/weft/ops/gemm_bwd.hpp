// Backward by data of the forward GEMM: dX = W^T x dY, on ThreadedLoop + BRGEMM, with loops
// a = K blocks, b = M blocks (the reduction, stepping by batch-reduce chunks), c = N blocks.
//
//   GemmBwdConfig cfg;
//   cfg.loop_string = "aBC", cfg.M = cfg.N = cfg.K = 512;
//   GemmBwd bwd(cfg);
//   bwd.run(weight, grad_out, grad_in);
//
// Layouts (blocked_layout.hpp): W [Mb][Kb][bk][bm] (the forward's A), dY [Nb][Mb][bn][bm] (the
// forward's C) or plain (plain_grad_output), dX [Nb][Kb][bn][bk] (the forward's B) or plain
// (plain_grad_input). BRGEMM needs W^T tiles
// (transposed_tiles.hpp): transposed up front into one shared [Kb][Mb][bm][bk] copy, or
// (private_trans) by each thread on first use into its own.
//
// In bf16 (config.dtype) every buffer holds bfloat16 and W is the forward's: VNNI-2 tiles
// (pairs of K). BRGEMM reduces over M here, so each W^T tile is made in VNNI-2 along M
// (TileTransform::vnni2_transpose, inside the timed run as in PARLOOPER); bm and bk must be even.
// In f64 every buffer holds double in the f32 layouts, and the W^T tiles are plain f64 transposes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <weft/ops/brgemm_table.hpp>
#include <weft/ops/element_type.hpp>
#include <weft/ops/gemm_layout.hpp>
#include <weft/ops/gemm_loops.hpp>
#include <weft/ops/pass_code.hpp>
#include <weft/ops/transposed_tiles.hpp>
#include <weft/ops/verification.hpp>
#include <weft/parlooper/threaded_loop.hpp>

namespace weft::ops {

struct GemmBwdConfig : GemmLoops {
  std::int64_t mbf = 1;        // the M (reduction) loop is split into mbf batch-reduce chunks
  bool private_trans = false;  // transpose W per thread on first use instead of up front
  // dX in its plain layout, PyTorch's row-major (N, K), written in place (ActivationTiles).
  bool plain_grad_input = false;
  // dY read in its plain layout (N, M) in place; needs M % bm == 0, as the batch reduce runs over
  // whole tiles of dY and a plain dY has no zero padding.
  bool plain_grad_output = false;
};

class GemmBwd : public GemmPass<GemmBwdConfig> {
 public:
  // Throws weft::Error.
  explicit GemmBwd(GemmBwdConfig config) : GemmBwd(std::move(config), PassCode::build) {}

  // Throws the weft::Error the constructor throws for `config`, if any, and generates no code
  // (pass_code.hpp). Used to try tuned configurations (best_gemm_config).
  // Whether `config` with plain_grad_output set is valid: bm divides M.
  static bool takes_plain_grad_output(const GemmBwdConfig& config) { return config.bm > 0 && config.M % config.bm == 0; }
  static void check(const GemmBwdConfig& config) { [[maybe_unused]] const GemmBwd checked(config, PassCode::check); }

  // The float overload runs an f32 pass, the bfloat16 one a bf16 pass, the double one an f64 pass;
  // the others throw weft::Error.
  void run(const float* weight, const float* grad_out, float* grad_in) const;
  void run(const bfloat16* weight, const bfloat16* grad_out, bfloat16* grad_in) const;
  void run(const double* weight, const double* grad_out, double* grad_in) const;

  // W (M x K, transposed), dY (M x N) and dX (K x N), plain and blocked.
  GemmPassLayout layout() const;
  double flops() const { return config_.flops(); }
  // Batch-reduce calls that add into each dX block: ceil(Mb / m_step).
  std::int64_t reduction_chunks() const { return (m_blocking().blocks() + m_step_ - 1) / m_step_; }
  // How each dX element is summed (the bound of a bf16 check).
  Bf16Sum bf16_sum() const;
  // PARLOOPER's tag: "<loop_string>_<M>_<N>_<K>_<bm>_<bn>_<bk>_bf<mbf>_threads<T>_private_wt_trans<0|1>"
  // ("_bf16" appended in bf16).
  std::string measure_tag(int threads) const;
  // Bytes run() allocates itself (W^T tiles: one shared copy, or one per thread), for a team of
  // `threads`.
  std::uint64_t run_memory_bytes(int threads) const { return weight_t_.memory_bytes(threads); }

 private:
  GemmBwd(GemmBwdConfig config, PassCode code);
  template <class T>
  void run_typed(const T* weight, const T* grad_out, T* grad_in) const;
  ActivationTiles grad_input_tiles() const { return {k_blocking(), n_blocking(), config_.plain_grad_input}; }
  ActivationTiles grad_output_tiles() const { return {m_blocking(), n_blocking(), config_.plain_grad_output}; }

  std::int64_t m_step_;
  TransposedTiles weight_t_;  // W tiles (bm x bk) -> W^T tiles, [Kb][Mb]
  BrgemmTable kernels_;
  std::optional<parlooper::ThreadedLoop<3>> loop_;  // none in check()
};

}  // namespace weft::ops
