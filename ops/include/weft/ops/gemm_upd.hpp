// Backward by weights of the forward GEMM: dW = dY x X^T, on ThreadedLoop + BRGEMM, with loops
// a = K blocks, b = M blocks, c = N blocks (the reduction, stepping by batch-reduce chunks).
//
//   GemmUpdConfig cfg;
//   cfg.loop_string = "abC", cfg.M = cfg.N = cfg.K = 512, cfg.n_partial_filters = 2;
//   GemmUpd upd(cfg);
//   upd.run(grad_out, input, grad_weight);
//
// Layouts: dY [Nb][Mb][bn][bm] or plain (plain_grad_output), X [Nb][Kb][bn][bk] or plain
// (plain_input), dW [Mb][Kb][bk][bm]. BRGEMM needs X^T tiles
// (transposed_tiles.hpp): transposed up front into a shared [Nb][Kb][bk][bn] copy or
// (private_trans) by each thread on first use.
//
// Partial filters: when the reduction loop c is parallel, threads working on different N blocks
// of the same dW block would race. With n_partial_filters = P > 0, the thread whose coordinate
// along c is p (get_tid_in_parallel_dim('c', ind): the thread id for a work-shared c, its grid
// coordinate for a split c) accumulates into private copy p of dW; a reduction TPP then sums the
// P copies into dW. P must be at least c's parallel degree (checked).
//
// In bf16 (config.dtype) dY, X and dW hold bfloat16, dW in the weights' layout: VNNI-2 tiles
// (pairs of K), as in PARLOOPER. BRGEMM reduces over N here, so besides the X^T tiles each dY tile
// is repacked in VNNI-2 along N (TileTransform::vnni2_pack; shared or private like X^T), and each
// dW tile is repacked in VNNI-2 along K once complete, all inside the timed run. The partial
// filters stay f32: the kernels accumulate into them in f32, and the reduction rounds each tile
// to bf16 once. bn and bk must be even. A bf16 pass may write dW in f32 instead (the run overload
// with a float dW): the same VNNI-2 positions, the sums unrounded (fp32 master weights).
//
// In f64 every buffer holds double in the f32 layouts (no VNNI), and the partial filters are f64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <weft/ops/brgemm_table.hpp>
#include <weft/ops/element_type.hpp>
#include <weft/ops/gemm_layout.hpp>
#include <weft/ops/gemm_loops.hpp>
#include <weft/ops/transposed_tiles.hpp>
#include <weft/ops/verification.hpp>
#include <weft/parlooper/threaded_loop.hpp>
#include <weft/tpp/unary.hpp>

namespace weft::ops {

struct GemmUpdConfig : GemmLoops {
  std::int64_t nbf = 1;        // the N (reduction) loop is split into nbf batch-reduce chunks
  bool private_trans = false;  // transpose X per thread on first use instead of up front
  std::int64_t n_partial_filters = 0;
  // X read in its plain layout, PyTorch's row-major (N, K), in place (ActivationTiles): its tiles
  // are transposed for BRGEMM anyway, now straight from the plain tensor. Needs K % bk == 0 and
  // N % bn == 0: the transposes move whole tiles, and the reduction over N needs the zero padding
  // a plain X does not have.
  bool plain_input = false;
  // dY read in its plain layout (N, M) in place: BRGEMM's A in f32 and f64, the source of its VNNI-2
  // repack in bf16. Needs M % bm == 0 and N % bn == 0, as plain_input does.
  bool plain_grad_output = false;
};

class GemmUpd : public GemmPass<GemmUpdConfig> {
 public:
  // Throws weft::Error.
  explicit GemmUpd(GemmUpdConfig config) : GemmUpd(std::move(config), PassCode::build) {}

  // Throws the weft::Error the constructor throws for `config`, if any, and generates no code
  // (pass_code.hpp). Used to try tuned configurations (best_gemm_config).
  static void check(const GemmUpdConfig& config) { [[maybe_unused]] const GemmUpd checked(config, PassCode::check); }
  // Whether `config` with plain_input set is valid: bk divides K and bn divides N.
  static bool takes_plain_input(const GemmUpdConfig& config) {
    return config.bk > 0 && config.bn > 0 && config.K % config.bk == 0 && config.N % config.bn == 0;
  }
  // Whether `config` with plain_grad_output set is valid: bm divides M and bn divides N.
  static bool takes_plain_grad_output(const GemmUpdConfig& config) {
    return config.bm > 0 && config.bn > 0 && config.M % config.bm == 0 && config.N % config.bn == 0;
  }

  // The float overload runs an f32 pass, the bfloat16 one a bf16 pass, the double one an f64 pass;
  // the others throw weft::Error.
  void run(const float* grad_out, const float* input, float* grad_weight) const;
  void run(const bfloat16* grad_out, const bfloat16* input, bfloat16* grad_weight) const;
  void run(const double* grad_out, const double* input, double* grad_weight) const;
  // A bf16 pass that writes dW in f32, unrounded, in the VNNI-2 tile order of its bf16 dW (each
  // element where the bf16 one would be): the gradient of fp32 master weights kept in the bf16
  // weights' layout, without a bf16 dW to widen. Throws weft::Error unless the pass is bf16.
  void run(const bfloat16* grad_out, const bfloat16* input, float* grad_weight) const;
  // The same bf16 pass with dW in f32 in the f32 pass's layout of these tiles instead (column-major
  // tiles, [Mb][Kb][bk][bm], the sums unrounded): the gradient of an fp32 weight kept in that
  // layout, whose bf16 passes read a copy with each tile's columns paired (weft.torch's fp32 layers
  // under torch.autocast; vnni2_pairs.hpp). Throws weft::Error unless the pass is bf16.
  void run_f32_column_major(const bfloat16* grad_out, const bfloat16* input, float* grad_weight) const;

  // dY (M x N), X (K x N, transposed) and dW (M x K), plain and blocked.
  GemmPassLayout layout() const;
  // Whether the run uses partial filters: P > 0 and the reduction loop c is parallel.
  bool uses_partial_filters() const;
  double flops() const { return config_.flops(); }
  // Batch-reduce calls that add into each dW block (or partial copy): ceil(Nb / n_step).
  std::int64_t reduction_chunks() const { return (n_blocking().blocks() + n_step_ - 1) / n_step_; }
  // How each dW element is summed (the bound of a bf16 check).
  Bf16Sum bf16_sum() const;
  // PARLOOPER's tag: "<loop_string>_<M>_<N>_<K>_<bm>_<bn>_<bk>_bf<nbf>_threads<T>_private_act_trans<0|1>_npartialFilters<P>"
  // ("_bf16" appended in bf16).
  std::string measure_tag(int threads) const;
  // Bytes run() allocates itself (X^T tiles, shared or per thread; partial filters), for a team
  // of `threads`.
  std::uint64_t run_memory_bytes(int threads) const;

 private:
  GemmUpd(GemmUpdConfig config, PassCode code);
  // Out: T, or float for a bf16 pass writing f32 dW.
  // column_major: a widened pass's dW in column-major tiles (run_f32_column_major).
  template <class T, class Out>
  void run_typed(const T* grad_out, const T* input, Out* grad_weight, bool column_major = false) const;
  ActivationTiles grad_output_tiles() const { return {m_blocking(), n_blocking(), config_.plain_grad_output}; }
  // BRGEMM's A is dY read in place in f32 and f64 (plain: its rows apart), its VNNI-2 copies in bf16.
  std::int64_t grad_output_ld() const { return config_.bf16() ? config_.bm : grad_output_tiles().ld(); }
  template <class Sum>
  void zero_partial_filters() const;
  template <class T>
  void reduce_partial_filters(T* grad_weight) const;  // f32 and f64: the copies' own type
  // bf16: each tile's copies summed in f32, then into dW's VNNI-2 tile (bf16, or f32 unrounded).
  template <class Out>
  void reduce_partial_filters_vnni2(Out* grad_weight, bool column_major) const;
  // The partial filters as their elements (GemmLoops::sum_types: float, or double in f64).
  template <class Sum>
  Sum* partial_filters() const {
    return reinterpret_cast<Sum*>(partial_filters_.data());
  }

  std::int64_t n_step_;
  std::int64_t filter_size_;       // elements of blocked dW, padding included
  std::int64_t reduce_chunk_;      // elements per reduction task
  TransposedTiles input_t_;        // X tiles (bk x bn) -> X^T tiles, [Nb][Kb]
  std::optional<TransposedTiles> grad_out_v_;  // bf16: dY tiles (bm x bn) -> VNNI-2 along N, [Nb][Mb]
  // The kernels and loops below: none in check().
  std::optional<tpp::Unary> zero_chunk_, reduce_chunk_full_, reduce_chunk_tail_;
  BrgemmTable kernels_;            // beta = 0 on the first chunk
  BrgemmTable accumulate_;         // partial filters: always beta = 1 onto zeroed copies
  std::optional<BrgemmTable> kernels_f32_;  // bf16 in, f32 out, beta = 0 on the first chunk: dW in f32
  std::optional<parlooper::ThreadedLoop<2>> partial_loop_;    // (P, chunks), "AB": zeroing the copies
  std::optional<parlooper::ThreadedLoop<1>> reduce_loop_;     // (chunks), "A"
  // bf16 with partial filters: the copies of one dW tile summed into f32, then rounded into dW's
  // VNNI-2 tile, tile by tile.
  std::optional<tpp::Unary> reduce_tile_;
  std::optional<parlooper::ThreadedLoop<1>> tile_loop_;  // (Mb * Kb tiles), "A"
  // bf16: a finished dW tile (bm x bk, column-major; f32 sums or the BRGEMM's bf16) -> VNNI-2 along K.
  std::optional<tpp::Unary> pack_sums_, pack_tile_;
  bool reduction_parallel_ = false;  // the loop string runs the reduction loop c in parallel
  std::optional<parlooper::ThreadedLoop<3>> loop_;
  // Bytes holding n_partial_filters copies of dW in sum_types() (std::vector's allocation is
  // aligned for double).
  mutable std::vector<std::byte> partial_filters_;
};

}  // namespace weft::ops
