// Backward by data of the convolution (PARLOOPER's conv_model_bwd): grad_input from grad_output and
// the filter, on ThreadedLoop<7> + BRGEMM.
//
//   ConvBwdConfig cfg;
//   cfg.loop_string = "Abcdefg";
//   cfg.shape = {.N = 1, .H = 56, .W = 56, .C = 64, .K = 64, .R = 3, .S = 3, .pad_h = 1, .pad_w = 1};
//   ConvBwd::check(cfg);                          // optional: throws what the constructor would, generates nothing
//   const ConvBwd bwd(cfg);                       // validates, generates kernels, builds the loops
//   bwd.run(filter, grad_output, grad_input);     // blocked buffers, in the layouts below
//
// Loops (PARLOOPER's, so its strings work unchanged): a = images, b = C blocks (blocks of c_block),
// c = K blocks (the reduction: k_block batch-reduce chunks), d = rows (step h_in_gemm, blocks of
// h_block rows), e = columns (w_block GEMMs per row), f = R, g = S. Rows and columns are those
// the GEMMs' pixels run over: grad_input's at stride 1 (the same as grad_output's for "same"
// convolutions, PARLOOPER's case), grad_output's at larger strides.
//
// run() transposes the filter tiles (bk x bc -> bc x bk) in every run, since BRGEMM reads A as
// stored. When the loop string keeps the C blocks and K chunks (b, c) outside the pixels and taps
// (d, e, f, g), each thread transposes the tiles of the (C block, K chunk) it works on into a
// scratch of its own, when that pair changes: the tiles stay in cache for the GEMMs that use them,
// and the filter is read once per image a thread works on. Otherwise, as PARLOOPER does, a parallel
// loop transposes the whole filter up front into [Cb][R][S][Kb][bk][bc]. The flip of the "full"
// correlation is in the BRGEMM offsets, which pair tap (r, s) with the grad_output pixels it
// reads, so no flipped copy is made. A caller whose weights change less often than it runs (a
// training step runs the pass once per weight update, a benchmark many times) transposes once:
//
//   std::vector<float> wt(bwd.transposed_filter_layout().size());
//   bwd.transpose_filter(filter, wt.data());                 // when the filter changes
//   bwd.run_transposed(wt.data(), grad_output, grad_input);  // no transposes inside
//
// Three paths, by the shape:
//
//   gather        stride 1: one BRGEMM per grad_input row segment (or h_in_gemm rows), summing over
//                 the K blocks of a chunk and every tap; grad_output carries rims of R - 1 - pad_h
//                 rows and S - 1 - pad_w columns (when positive) so that taps outside it read zeros.
//                 The first chunk writes grad_input (beta 0), nothing is zeroed.
//   scatter_1x1   1x1 filter, a stride > 1: one BRGEMM per grad_output row segment writing every
//                 stride-th grad_input pixel (ldc = stride_w bc); the strip of grad_input rows and
//                 columns it owns is zeroed first, so pixels no output reads from end up zero.
//                 With h_in_gemm > 1 (w_block 1), one BRGEMM over h_in_gemm whole grad_output rows
//                 (one run of pixels, as the forward pass's pack_input) into a thread's dense fp32
//                 scratch, which the body then stores (first chunk, the strip zeroed) or adds at
//                 every stride-th pixel: short output rows (7 or 14 pixels) fill the register tiles.
//   scatter_taps  R x S filter, a stride > 1: one BRGEMM per (grad_output row segment, tap) adding
//                 into the grad_input pixels the tap reads (ldc = stride_w bc), grad_input zeroed
//                 first. Several (row, tap) pairs add into one grad_input row, so loops d, e, f, g
//                 may run in parallel only where their iterations write disjoint rows / columns.
//
// grad_input's rims are scratch: what they hold after run() is unspecified (h_in_gemm > 1 and the
// scatters write into them); the image and its padding channels are the result.
//
// In bf16 (ConvLoops::dtype) every buffer holds bf16: the filter as the forward pass takes it (tiles
// in VNNI-2 along C, filter_to_vnni2), the transposed tiles in VNNI-2 along K (the backward
// BRGEMM's A: pairs of output channels side by side), fp32 accumulation, grad_input rounded to bf16
// on every store (so once per K chunk, and in scatter_taps once per tap as well). A forward tile
// becomes a backward one in two moves: its 32-bit pairs transposed (bk x bc/2 -> bc/2 x bk, which
// is the plain bc x bk transpose in bf16), then vnni2_pack along K.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <weft/ops/conv_layout.hpp>
#include <weft/ops/element_type.hpp>
#include <weft/ops/conv_loops.hpp>
#include <weft/ops/pass_code.hpp>
#include <weft/ops/rim_taps.hpp>
#include <weft/ops/tile_transpose.hpp>
#include <weft/parlooper/threaded_loop.hpp>
#include <weft/tpp/brgemm.hpp>
#include <weft/tpp/unary.hpp>

namespace weft::ops {

// The filter as the backward BRGEMMs read it: [Cb][R][S][Kb][bk][bc], the forward filter's tiles
// transposed, so that the K blocks of one tap, which a batch-reduce runs over, are contiguous.
struct TransposedFilterLayout {
  Blocking k;  // K and bk
  Blocking c;  // C and bc
  std::int64_t r = 1, s = 1;

  std::int64_t size() const { return k.blocks() * c.blocks() * r * s * c.block * k.block; }
  // Offset of the tile of tap (ir, is) of blocks (kb, cb); element (ic, ik) of the tile is at
  // + ik * bc + ic (a column-major bc x bk matrix, lda = bc).
  std::int64_t offset(std::int64_t kb, std::int64_t cb, std::int64_t ir, std::int64_t is) const {
    return (((cb * r + ir) * s + is) * k.blocks() + kb) * c.block * k.block;
  }
};

// PARLOOPER's tuning arguments of the backward pass, with its defaults.
struct ConvBwdConfig : ConvLoops {
  std::int64_t h_block = 1;    // rows per outer block of loop d (when the string blocks it)
  std::int64_t w_block = 1;    // GEMMs per row: each takes ceil(columns / w_block) pixels
  std::int64_t c_block = 1;    // C blocks per outer block of loop b
  std::int64_t k_block = 1;    // batch-reduce chunks of the K blocks (loop c)
  std::int64_t h_in_gemm = 1;  // rows per GEMM (w_block 1; stride 1, or a 1x1 filter)
  // grad_input in plain N x C x H x W (PyTorch's NCHW) instead of blocked, as ConvFwdConfig's
  // plain_output: each call's GEMMs write its rows into a per-thread scratch, which a transpose
  // moves into the plain tensor while it is in cache. Needs the gather path (stride 1) and
  // k_block 1 (one call sums a block over every K block); edge columns are then computed along
  // their rows with every tap. plain_grad_input_pays() says whether a configuration gains by it.
  bool plain_grad_input = false;
};

enum class ConvBwdPath { gather, scatter_1x1, scatter_taps };
const char* to_string(ConvBwdPath path);  // "gather", "scatter_1x1", "scatter_taps"

class ConvBwd {
 public:
  // Throws weft::Error naming the argument.
  explicit ConvBwd(ConvBwdConfig config) : ConvBwd(std::move(config), PassCode::build) {}

  // Throws the weft::Error the constructor throws for `config`, if any, and generates no code: the
  // constructor's own steps with the kernels planned instead of emitted and the loop nests parsed
  // instead of built (pass_code.hpp). Used to try tuned configurations (best_conv_config).
  static void check(const ConvBwdConfig& config);
  // Whether plain_grad_input is worth setting on `config`: a 1x1 filter, and it may be set (gather
  // path, k_block 1). Inside weft.torch training steps (Intel Xeon family 6 model 207, fp32, 2
  // threads, batch 2) the 1x1 64 -> 256 layer's pass took 1.17-1.32 ms with it against 1.32-1.42 ms
  // blocked plus blocked_to_nchw; the 3x3 64 -> 64 layer's 1.93-2.07 against 1.64-2.03 ms.
  static bool plain_grad_input_pays(const ConvBwdConfig& config);

  // grad_input from grad_output and filter, blocked (the layouts below), elements of
  // config().dtype; callable many times, one call at a time and outside OpenMP parallel regions (it
  // opens its own).
  void run(const void* filter, const void* grad_output, void* grad_input) const;
  // The same on typed buffers (float for f32, jit::bfloat16 for bf16), which also checks that T is
  // config().dtype (the untyped form cannot see it).
  template <class T>
  void run(const T* filter, const T* grad_output, T* grad_input) const {
    require_buffers_of<T>(config_.dtype, "ConvBwd::run");
    run(static_cast<const void*>(filter), static_cast<const void*>(grad_output), static_cast<void*>(grad_input));
  }
  // run() on a filter transposed by transpose_filter(): the same result, without the transposes.
  void run_transposed(const void* transposed_filter, const void* grad_output, void* grad_input) const;
  // filter (filter_layout()) -> transposed (transposed_filter_layout()), every tile, by a parallel
  // loop; same calling rules as run().
  void transpose_filter(const void* filter, void* transposed) const;

  const ConvBwdConfig& config() const { return config_; }
  ConvBwdPath path() const { return path_; }
  // [N][Kb][ofh + 2 rim][ofw + 2 rim][bk]: rims of zeros as the gather path reads them (0 else).
  const ActivationLayout& grad_output_layout() const { return grad_output_; }
  // [N][Cb][H + 2 pad_h][W + 2 pad_w][bc]: the forward input's layout; with plain_grad_input NCHW,
  // as a layout of 1-channel blocks without rims.
  const ActivationLayout& grad_input_layout() const {
    return config_.plain_grad_input ? plain_grad_input_ : grad_input_;
  }
  // [Kb][Cb][R][S][bc][bk]: the forward's filter.
  FilterLayout filter_layout() const;
  // [Cb][R][S][Kb][bk][bc]: what run_transposed() takes.
  TransposedFilterLayout transposed_filter_layout() const;
  double flops() const { return config_.shape.flops(); }
  // Terms of the longest grad_input sum (K times the taps that reach one pixel), for tolerances.
  std::int64_t reduction_terms() const;
  // The check's relative L2 tolerance against a double-precision reference on the same inputs: the
  // fp32 sum's, and in bf16 2^-8 per rounding of grad_input (K chunks, times the taps in
  // scatter_taps), as ConvFwd::tolerance().
  double tolerance() const;
  // PARLOOPER's tag "<loop_string>_hb=<h_block>_wb=<w_block>_cb=<c_block>_kb=<k_block>_hg=<h_in_gemm>",
  // then "_threads<T>".
  std::string measure_tag(int threads) const;
  // Whether run() has each thread transpose the tiles of the chunk it works on (else all up front).
  bool transposes_per_chunk() const { return per_chunk_; }
  // Bytes run() allocates itself (the transposed tiles; with plain_grad_input also one call's rows
  // per thread, which run_transposed() allocates too), for a team of `threads`.
  std::uint64_t run_memory_bytes(int threads) const;

 private:
  // A thread's transposed tiles of one (C block, K chunk).
  struct alignas(64) ThreadTiles {
    std::int64_t cb = -1, kb = -1;
    std::vector<float> tiles;  // chunk_elements() elements of config().dtype
    std::vector<float> plain;  // bf16: TileTranspose's scratch
  };

  // The transposed tiles of C block cb and the K chunk starting at kb, tap t's first K block at
  // + t * tap_stride(shared) tiles, the next K blocks one tile apart each: in `shared` (the whole
  // filter transposed) when given, else transposed from `filter` into the thread's scratch.
  std::int64_t chunk_elements() const;
  template <class T>
  const T* chunk_tiles(const T* filter, const T* shared, int tid, std::int64_t cb, std::int64_t kb) const;
  std::int64_t tap_stride(const void* shared) const {
    return shared != nullptr ? config_.k_blocking().blocks() : k_step_;
  }
  template <class T>
  void run_path(const T* filter, const T* shared, const T* grad_output, T* grad_input) const;
  template <class T>
  void run_gather(const T* filter, const T* shared, const T* grad_output, T* grad_input) const;
  template <class T>
  void run_scatter_1x1(const T* filter, const T* shared, const T* grad_output, T* grad_input) const;
  // The scatters' batch over the K blocks of the chunk at kb, for grad_output pixel (p, q) of image
  // n and C block cb: A, B, count and strides (C is the caller's).
  template <class T>
  tpp::BrgemmArgs strided_batch(const T* filter, const T* shared, const T* grad_output, int tid, std::int64_t n,
                                std::int64_t cb, std::int64_t kb, std::int64_t p, std::int64_t q) const;
  template <class T>
  void run_packed_scatter(const T* filter, const T* shared, const T* grad_output, T* grad_input) const;
  template <class T>
  void run_scatter_taps(const T* filter, const T* shared, const T* grad_output, T* grad_input) const;
  // scatter_1x1 with h_in_gemm > 1: GEMMs over whole grad_output rows into a thread's scratch.
  bool packed_scatter() const { return path_ == ConvBwdPath::scatter_1x1 && h_step_ > 1; }
  // run_path() on the element type of config().dtype.
  void run_typed(const void* filter, const void* shared, const void* grad_output, void* grad_input) const;
  ConvBwd(ConvBwdConfig config, PassCode code);
  const tpp::Brgemm& kernel(bool rows_tail, bool cols_tail, bool first) const {
    return kernels_[static_cast<std::size_t>((rows_tail ? 4 : 0) | (cols_tail ? 2 : 0) | (first ? 1 : 0))];
  }

  ConvBwdConfig config_;
  ConvBwdPath path_;
  // grad_input_: the blocked geometry the GEMMs compute in (written by run() unless
  // plain_grad_input, whose per-thread rows take it); plain_grad_input_: NCHW.
  ActivationLayout grad_output_, grad_input_, plain_grad_input_;
  std::int64_t rows_, cols_;      // what loops d and e run over
  std::int64_t k_step_, h_step_, w_step_;
  // One forward tile (bk x bc) to its backward form (bc x bk; in bf16 from VNNI-2 along C to VNNI-2
  // along K, through a thread's `plain` tile).
  TileTranspose transpose_;
  std::optional<parlooper::ThreadedLoop<2>> all_tiles_;  // transpose_filter: (K block, C block R S tap), "AB"
  bool per_chunk_;
  mutable std::vector<ThreadTiles> thread_tiles_;
  mutable std::vector<float> transposed_;   // run() up front: the whole filter transposed (its bytes)
  // The packed scatter's fp32 GEMM outputs (h_in_gemm x ofw pixels x bc), one per thread.
  struct alignas(64) ThreadPixels {
    std::vector<float> values;
  };
  mutable std::vector<ThreadPixels> thread_pixels_;
  // plain_grad_input: a thread's rows of one call (elements of the dtype in floats' storage), and
  // the transposes of one row into the plain tensor, [C block whole or last][column block whole
  // or last] (none in check()).
  mutable std::vector<ThreadPixels> thread_rows_;
  std::array<std::optional<tpp::Unary>, 4> row_transposes_;
  std::int64_t row_elements() const;
  const tpp::Unary& row_transpose(bool last_c_block, bool last_col_block) const {
    return *row_transposes_[(last_c_block ? 2 : 0) + (last_col_block ? 1 : 0)];
  }
  // The gather's batches over a chunk of kc K blocks and a range of filter columns [t0, t1),
  // entry ((r * (t1 - t0) + s - t0) * kc + j) for K block j and tap (r, s): offsets of A's tile and
  // of B's first pixel. batches_[(tiles * 2 + chunk) * col_ranges_ + column range]: tiles 0 for
  // the whole filter transposed, 1 for a thread's chunk (per_chunk_ only, else empty); chunk 0 for
  // full chunks, 1 for the last one when it is shorter; column range 0 every filter column, the
  // others those of edge columns (h_in_gemm 1).
  struct GatherBatch {
    std::int64_t per_filter_row = 0;  // entries per filter row
    std::vector<std::int64_t> a, b;
  };
  std::vector<GatherBatch> batches_;
  std::int64_t col_ranges_ = 1;
  // The filter rows [first, first + count) that read grad_output rows other than the rims for the
  // gather GEMM starting at grad_input row y (by y): the others would add zeros.
  struct TapRows {
    std::int64_t first = 0, count = 0;
  };
  std::vector<TapRows> tap_rows_;
  // The gather's GEMMs of column block x / w_step: along the row, pieces_[first_piece_[block] ..
  // first_piece_[block + 1]) (the whole block, or its columns with every filter column); and its
  // edge columns edge_cols_[first_edge_col_[block] ..), GEMMs down the image that row y computes
  // for the edge_rows_[y] rows up to it (0: none), with the kernels of slot edge_slot_of_rows_[rows].
  struct Piece {
    std::int64_t col = 0;
    std::int32_t slot = 0, col_range = 0;
  };
  std::vector<Piece> pieces_, edge_cols_;
  std::vector<std::int32_t> first_piece_, first_edge_col_, edge_rows_, edge_slot_of_rows_;
  // Kernels of the gather's slots past the first four: `pixels` wide along a row, or down the image.
  struct GatherSlot {
    std::int64_t pixels = 0;
    bool down = false;
    bool operator==(const GatherSlot&) const = default;
  };
  std::vector<GatherSlot> gather_slots_;
  void prepare_gather_pieces(const RimTaps& cols);
  std::int32_t gather_slot(std::int64_t pixels, bool down);
  void add_gather_kernels(const GatherSlot& slot, tpp::BrgemmPrefetch prefetch);
  // Slots of two kernels (not first chunk, first chunk): slots 0-3 by (rows tail, columns tail),
  // then gather_slots_. kernels_ is made of kernel_descs_ at the end of the constructor (none in check()).
  std::vector<tpp::BrgemmDesc> kernel_descs_;
  std::vector<tpp::Brgemm> kernels_;
  std::optional<parlooper::ThreadedLoop<7>> loop_;  // none in check()
  bool zero_in_body_ = true;                          // scatter_taps: else the loop below first
  std::optional<parlooper::ThreadedLoop<2>> zero_loop_;
};

}  // namespace weft::ops
