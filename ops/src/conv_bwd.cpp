#include <weft/ops/conv_bwd.hpp>

#include <omp.h>

#include <algorithm>
#include <array>
#include <climits>
#include <utility>

#include <weft/jit/error.hpp>
#include <weft/ops/element_type.hpp>
#include <weft/ops/block_loops.hpp>
#include <weft/ops/rim_taps.hpp>
#include <weft/ops/verification.hpp>
#include <weft/parlooper/loop_string.hpp>

namespace weft::ops {
namespace {

using parlooper::LoopNest;

constexpr int kLoopC = 2, kLoopD = 3, kLoopE = 4, kLoopF = 5, kLoopG = 6;

ConvBwdPath path_of(const ConvShape& s) {
  if (s.stride_h == 1 && s.stride_w == 1) return ConvBwdPath::gather;
  return s.R == 1 && s.S == 1 ? ConvBwdPath::scatter_1x1 : ConvBwdPath::scatter_taps;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The rims grad_output needs: the gather path reads R - 1 - pad_h rows (S - 1 - pad_w columns)
// beyond its edges, the "full" correlation's border; a larger padding needs none (it starts inside).
ActivationLayout grad_output_layout_of(const ConvLoops& c, ConvBwdPath path) {
  const ConvShape& s = c.shape;
  const bool gather = path == ConvBwdPath::gather;
  return {.images = s.N, .channels = c.k_blocking(), .h = s.ofh(), .w = s.ofw(),
          .pad_h = gather ? std::max<std::int64_t>(0, s.R - 1 - s.pad_h) : 0,
          .pad_w = gather ? std::max<std::int64_t>(0, s.S - 1 - s.pad_w) : 0};
}

ActivationLayout grad_input_layout_of(const ConvLoops& c) {
  const ConvShape& s = c.shape;
  return {.images = s.N, .channels = c.c_blocking(), .h = s.H, .w = s.W, .pad_h = s.pad_h, .pad_w = s.pad_w};
}

// The gather's taps per grad_input column: with one row per GEMM and S > 1 the columns whose taps
// reach into grad_output's rims skip them (edge columns, GEMMs down the image), where that saves
// enough.
RimTaps gather_column_taps(const ConvShape& s, std::int64_t h_in_gemm) {
  RimTaps cols = rim_taps(s.W, s.S, h_in_gemm == 1 && s.S > 1, [&](std::int64_t x) {
    return TapRange{std::max<std::int64_t>(0, x + s.pad_w - s.ofw() + 1), std::min(s.S, x + s.pad_w + 1)};
  });
  if (cols.saved_share() < kEdgeColumnsMinSavedShare) cols = every_tap(s.W, s.S);
  return cols;
}

// Rows and columns of the pixels the GEMMs run over (loops d and e).
std::pair<std::int64_t, std::int64_t> gemm_pixels(const ConvShape& s, ConvBwdPath path) {
  if (path == ConvBwdPath::gather) return {s.H, s.W};
  return {s.ofh(), s.ofw()};
}

// Per-chunk transposes pay off when a thread meets each (C block, K chunk) once per image: every
// level of b and c is outside every level of d, e, f and g.
bool chunks_outside_pixels(const LoopNest& nest) {
  std::size_t last_chunk_level = 0, first_pixel_level = nest.levels.size();
  for (std::size_t l = 0; l < nest.levels.size(); ++l) {
    const int loop = nest.levels[l].loop;
    if (loop == 1 || loop == kLoopC) last_chunk_level = l;
    if (loop >= kLoopD && first_pixel_level == nest.levels.size()) first_pixel_level = l;
  }
  return last_chunk_level < first_pixel_level;
}

bool parallel(const LoopNest& nest, int loop) {
  return std::any_of(nest.levels.begin(), nest.levels.end(), [&](const parlooper::LoopLevel& l) {
    return l.loop == loop && l.par != parlooper::ParKind::none;
  });
}

std::string letter(int loop) { return std::string(1, static_cast<char>('a' + loop)); }
std::string upper(int loop) { return std::string(1, static_cast<char>('A' + loop)); }

void require_at_most(const char* name, std::int64_t value, std::int64_t max, const std::string& what) {
  if (value > max) {
    throw Error(std::string(name) + " must be at most " + what + " = " + std::to_string(max) + ", got " +
                std::to_string(value));
  }
}

// Everything about the configuration that can be wrong, before anything is generated.
ConvBwdConfig validated(ConvBwdConfig c) {
  c.validate();
  if (c.bf16() && c.bk % 2 != 0)
    throw Error("bk = " + std::to_string(c.bk) + " with bf16: the backward filter's VNNI-2 pairs run along K, so bk must be "
                "even");
  require_positive({{"h_block", c.h_block}, {"w_block", c.w_block}, {"c_block", c.c_block},
                    {"k_block", c.k_block}, {"h_in_gemm", c.h_in_gemm}});
  const ConvShape& s = c.shape;
  const ConvBwdPath path = path_of(s);
  const auto [rows, cols] = gemm_pixels(s, path);
  const std::string pixels = path == ConvBwdPath::gather ? "grad_input" : "grad_output";
  require_at_most("k_block", c.k_block, c.k_blocking().blocks(), "the K blocks, ceil(K / bk)");
  require_at_most("w_block", c.w_block, cols, "the " + pixels + " columns");
  require_at_most("h_in_gemm", c.h_in_gemm, rows, "the " + pixels + " rows");
  if (c.h_in_gemm > 1) {
    if (path == ConvBwdPath::scatter_taps) {
      throw Error("h_in_gemm > 1 needs stride 1 or a 1x1 filter (got a " + std::to_string(s.R) + "x" +
                  std::to_string(s.S) + " filter at stride " + std::to_string(s.stride_h) + " " +
                  std::to_string(s.stride_w) + "): a GEMM over several rows writes them as one run of pixels");
    }
    if (c.w_block != 1) {
      throw Error("h_in_gemm > 1 needs w_block 1 (got " + std::to_string(c.w_block) +
                  "): a GEMM over several rows takes them whole");
    }
  }
  if (c.h_in_gemm > 1 && path == ConvBwdPath::gather) {
    const ActivationLayout out = grad_output_layout_of(c, path), in = grad_input_layout_of(c);
    if (out.padded_w() != in.padded_w()) {
      throw Error("h_in_gemm > 1 needs grad_output rows as long as grad_input rows with their rims, "
                  "but this shape has " + std::to_string(out.padded_w()) + " (ofw + its rims) and " +
                  std::to_string(in.padded_w()) + " (W + 2 pad_w) pixels; use h_in_gemm 1 (or a 'same' "
                  "convolution, S = 2 pad_w + 1)");
    }
    const std::int64_t n = (c.h_in_gemm - 1) * in.padded_w() + cols;
    if (n > INT32_MAX) throw Error("h_in_gemm " + std::to_string(c.h_in_gemm) + " makes GEMMs too wide");
  }
  if (c.plain_grad_input) {
    if (path != ConvBwdPath::gather) {
      throw Error("plain_grad_input needs stride 1 (the gather path): a strided pass adds into grad_input pixels "
                  "from several calls");
    }
    if (c.k_block != 1) {
      throw Error("plain_grad_input needs k_block = 1 (got " + std::to_string(c.k_block) + "): a block of "
                  "grad_input is moved into the plain tensor after its call, so one call must sum every K block");
    }
  }
  if (path == ConvBwdPath::gather) {
    const std::int64_t k_step = chunk_step(c.k_blocking().blocks(), c.k_block);
    require_memory("weft-conv-bwd's BRGEMM offsets (K blocks per chunk x R x S)",
                   bytes_needed({k_step, s.R, s.S}, 8 * sizeof(std::int64_t)));
  }
  const LoopNest nest = parlooper::parse_loop_string(c.loop_string, 7);
  for (const auto& spec : nest.inline_specs) {
    if (spec.has_start || spec.has_end || spec.has_step) {
      throw Error("loop string '" + c.loop_string + "': inline bounds of loop '" + letter(spec.loop) +
                  "' would change the convolution's extent; only inline block sizes, e.g. " + letter(spec.loop) +
                  "[,,,(2)], are allowed here");
    }
  }
  for (const auto& level : nest.levels) {
    if (level.loop == kLoopD && level.num_occurrences > 1 && c.h_block % c.h_in_gemm != 0) {
      throw Error("h_block " + std::to_string(c.h_block) + " must be a multiple of h_in_gemm " +
                  std::to_string(c.h_in_gemm) + " when the loop string blocks loop 'd'");
    }
  }
  return c;
}

// Threads racing on grad_input, refused: the reduction over K chunks in parallel, and in the
// scatter over taps, parallel iterations of d, e, f or g whose pixels overlap. Two output rows p
// and p' (taps r, r') meet in grad_input row p stride_h + r = p' stride_h + r', which needs
// R > stride_h (and two rows); columns likewise with S and stride_w.
void require_no_race(const LoopNest& nest, const ConvBwdConfig& c, ConvBwdPath path, std::int64_t chunks,
                     std::int64_t col_blocks) {
  require_sequential_reduction(nest, kLoopC, chunks);
  if (path != ConvBwdPath::scatter_taps) return;
  const ConvShape& s = c.shape;
  const bool rows_meet = s.R > s.stride_h && s.ofh() > 1, cols_meet = s.S > s.stride_w && s.ofw() > 1;
  const struct {
    int loop;
    bool races;
    const char* what;
  } loops[] = {{kLoopD, rows_meet, "output rows"},
               {kLoopE, cols_meet && col_blocks > 1, "output column blocks"},
               {kLoopF, rows_meet, "filter rows"},
               {kLoopG, cols_meet, "filter columns"}};
  for (const auto& l : loops) {
    if (l.races && parallel(nest, l.loop)) {
      throw Error("loop '" + letter(l.loop) + "' (" + l.what + ") runs in parallel ('" + upper(l.loop) +
                  "'), but with a " + std::to_string(s.R) + "x" + std::to_string(s.S) + " filter at stride " +
                  std::to_string(s.stride_h) + " " + std::to_string(s.stride_w) +
                  " several (output pixel, tap) pairs add into the same grad_input pixels: threads would race. "
                  "Keep '" + letter(l.loop) + "' lower case.");
    }
  }
}

}  // namespace

const char* to_string(ConvBwdPath path) {
  switch (path) {
    case ConvBwdPath::gather:
      return "gather";
    case ConvBwdPath::scatter_1x1:
      return "scatter_1x1";
    case ConvBwdPath::scatter_taps:
      return "scatter_taps";
  }
  return "?";
}

void ConvBwd::check(const ConvBwdConfig& config) { [[maybe_unused]] const ConvBwd checked(config, PassCode::check); }

bool ConvBwd::plain_grad_input_pays(const ConvBwdConfig& config) {
  // 1x1 filters only, as ConvFwd::plain_output_pays (measured the same way: conv_bwd.hpp).
  if (config.shape.R * config.shape.S != 1) return false;
  if (path_of(config.shape) != ConvBwdPath::gather || config.k_block != 1) return false;
  try {
    validated(config);
  } catch (const Error&) {
    return false;
  }
  return gather_column_taps(config.shape, config.h_in_gemm).ranges.size() == 1;
}

ConvBwd::ConvBwd(ConvBwdConfig config, PassCode code)
    : config_(validated(std::move(config))),
      path_(path_of(config_.shape)),
      grad_output_(grad_output_layout_of(config_, path_)),
      grad_input_(grad_input_layout_of(config_)),
      plain_grad_input_{.images = config_.shape.N, .channels = Blocking{config_.shape.C, 1}, .h = config_.shape.H,
                        .w = config_.shape.W},
      rows_(gemm_pixels(config_.shape, path_).first),
      cols_(gemm_pixels(config_.shape, path_).second),
      k_step_(chunk_step(config_.k_blocking().blocks(), config_.k_block)),
      h_step_(config_.h_in_gemm),
      w_step_(ceil_div(cols_, config_.w_block)),
      transpose_(config_.bk, config_.bc, config_.dtype, config_.bf16(), code),
      all_tiles_(make_loop<2>({parlooper::LoopSpecs{0L, static_cast<long>(config_.k_blocking().blocks())},
                               parlooper::LoopSpecs{0L, static_cast<long>(config_.c_blocking().blocks() *
                                                                          config_.shape.R * config_.shape.S)}},
                              "AB", code)) {
  const ConvShape& s = config_.shape;
  const std::int64_t Kb = config_.k_blocking().blocks(), bc = config_.bc, bk = config_.bk;
  const std::array<parlooper::LoopSpecs, 7> specs = block_nest_specs<7>(
      {s.N, config_.c_blocking().blocks(), Kb, rows_, cols_, s.R, s.S},
      {1, 1, k_step_, h_step_, w_step_, path_ == ConvBwdPath::scatter_taps ? 1 : s.R,
       path_ == ConvBwdPath::scatter_taps ? 1 : s.S},
      {{{}, {config_.c_block}, {}, {config_.h_block}, {}, {}, {}}});
  const LoopNest nest = checked_nest(config_.loop_string, specs);
  require_no_race(nest, config_, path_, ceil_div(Kb, k_step_), ceil_div(cols_, w_step_));
  per_chunk_ = chunks_outside_pixels(nest);

  // The gather's batch: for each tap (r, s) and K block j of a chunk, the transposed tile and the
  // grad_output pixel that tap reads for the GEMM's first pixel (y, x): row y + pad_h - r, column
  // x + pad_w - s, shifted by the rims. Filter rows whose grad_output rows are rims for every row
  // of a GEMM (r > y + pad_h, or r < y + pad_h - ofh + 1) are left out of its batch: on small
  // images they are a good part of the work (7 x 7, 3 x 3: 2 of 21 tap rows). With one row per
  // GEMM, filter columns likewise (PARLOOPER's avoid_rim_fmas): the edge columns, whose taps reach
  // into grad_output's rims, are GEMMs down the image over their own batches.
  if (path_ == ConvBwdPath::gather) {
    const ActivationLayout& out = grad_output_;
    const std::int64_t plane = out.padded_h() * out.padded_w() * bk;
    const std::int64_t last_chunk = Kb - (ceil_div(Kb, k_step_) - 1) * k_step_;
    // A plain grad_input is moved out of one call's rows, which GEMMs down the image would reach past.
    const RimTaps cols = config_.plain_grad_input ? every_tap(cols_, s.S) : gather_column_taps(s, h_step_);
    col_ranges_ = static_cast<std::int64_t>(cols.ranges.size());
    for (std::size_t tiles = 0; tiles < 2; ++tiles) {
      const std::int64_t tap_tiles = tiles == 0 ? Kb : k_step_;
      for (std::size_t i = 0; i < 2; ++i) {
        const std::int64_t kc = i == 0 ? k_step_ : last_chunk;
        for (const TapRange& range : cols.ranges) {
          GatherBatch& batch = batches_.emplace_back();
          batch.per_filter_row = (range.second - range.first) * kc;
          if (tiles == 1 && !per_chunk_) continue;
          for (std::int64_t r = 0; r < s.R; ++r) {
            for (std::int64_t t = range.first; t < range.second; ++t) {
              for (std::int64_t j = 0; j < kc; ++j) {
                batch.a.push_back(((r * s.S + t) * tap_tiles + j) * bc * bk);
                batch.b.push_back(j * plane +
                                  ((s.pad_h - r + out.pad_h) * out.padded_w() + s.pad_w - t + out.pad_w) * bk);
              }
            }
          }
        }
      }
    }
    for (std::int64_t y = 0; y < rows_; ++y) {
      const std::int64_t last_row = std::min(y + h_step_, rows_) - 1;
      const std::int64_t first = std::max<std::int64_t>(0, y + s.pad_h - s.ofh() + 1);
      tap_rows_.push_back({first, std::min(s.R - 1, last_row + s.pad_h) - first + 1});
    }
    prepare_gather_pieces(cols);
  }

  // Scatters over taps zero grad_input first: in the body on the first visit of an (image, C
  // block), which is its first tuple when every loop that adds into it runs in order on one
  // thread; else in a parallel loop of its own before the convolution.
  if (path_ == ConvBwdPath::scatter_taps) {
    for (int loop = kLoopC; loop <= kLoopG; ++loop) zero_in_body_ = zero_in_body_ && !parallel(nest, loop);
    if (!zero_in_body_) {
      zero_loop_ = make_loop<2>({parlooper::LoopSpecs{0L, static_cast<long>(s.N)},
                                 parlooper::LoopSpecs{0L, static_cast<long>(config_.c_blocking().blocks())}},
                                "AB", code);
    }
  }

  const tpp::BrgemmPrefetch prefetch = output_prefetch(config_.loop_string, 7, kLoopC);
  // The packed scatter's GEMMs run over whole grad_output rows, which follow each other (no rims):
  // one run of pixels, written densely into a thread's fp32 scratch.
  const std::int64_t in_pitch = packed_scatter() ? cols_ : grad_input_.padded_w();
  const std::int64_t rows_tail = rows_ % h_step_ == 0 ? h_step_ : rows_ % h_step_;
  const std::int64_t cols_tail = cols_ - (ceil_div(cols_, w_step_) - 1) * w_step_;
  for (int index = 0; index < 8; ++index) {
    const bool last_rows = index & 4, last_cols = index & 2, first = index & 1;
    const std::int64_t h = last_rows ? rows_tail : h_step_, w = last_cols ? cols_tail : w_step_;
    tpp::BrgemmDesc d;
    d.m = static_cast<std::int32_t>(bc);
    d.n = static_cast<std::int32_t>((h - 1) * in_pitch + w);
    d.k = static_cast<std::int32_t>(bk);
    d.lda = bc;
    d.ldb = bk;
    d.ldc = path_ == ConvBwdPath::gather || packed_scatter() ? bc : s.stride_w * bc;
    d.beta = first && path_ != ConvBwdPath::scatter_taps ? 0 : 1;
    d.batch = path_ == ConvBwdPath::gather ? tpp::BrgemmBatch::offsets : tpp::BrgemmBatch::strided;
    d.prefetch = d.beta == 1 ? prefetch : tpp::BrgemmPrefetch::none;
    d.types = config_.tpp_types();
    if (packed_scatter()) {  // every chunk into the scratch, which the body then stores or adds
      d.beta = 0;
      d.prefetch = tpp::BrgemmPrefetch::none;
      d.types.out = jit::DataType::f32;
    }
    kernel_descs_.push_back(d);
  }
  for (const GatherSlot& slot : gather_slots_) add_gather_kernels(slot, prefetch);
  kernels_ = make_kernels<tpp::Brgemm>(kernel_descs_, code);
  if (config_.plain_grad_input) {
    // Row r of a call, columns [x, x + width) of channels [cb bc, cb bc + extent): from the
    // thread's rows (extent x width, ld bc) into the plain image (width x extent, ld H W).
    const Blocking c = config_.c_blocking();
    const std::int64_t extents[] = {c.extent(0), c.extent(c.blocks() - 1)};
    for (int index = 0; index < 4; ++index) {
      row_transposes_[static_cast<std::size_t>(index)] = make_kernel<tpp::Unary>(
          tpp::UnaryDesc{.op = tpp::UnaryOp::transpose, .m = extents[index / 2], .n = index % 2 ? cols_tail : w_step_,
                         .ld_in = bc, .ld_out = s.H * s.W,
                         .types = {.in = config_.dtype, .out = config_.dtype, .compute = jit::DataType::f32}},
          code);
    }
  }
  if (code == PassCode::build) loop_.emplace(specs, config_.loop_string);
}

void ConvBwd::prepare_gather_pieces(const RimTaps& cols) {
  // Without edge columns a column block is one GEMM (slot 0, or 1 for the last, shorter block);
  // with them, its interior columns are one along the row and each edge column one down the
  // image, computed by the last row of each chunk of a run of rows with the same filter rows
  // (TapRows; edge_chunks).
  for (std::int64_t x = 0; x < cols_; x += w_step_) {
    first_piece_.push_back(static_cast<std::int32_t>(pieces_.size()));
    first_edge_col_.push_back(static_cast<std::int32_t>(edge_cols_.size()));
    const std::int64_t end = std::min(x + w_step_, cols_);
    if (!cols.cuts()) {
      pieces_.push_back({.col = x, .slot = end < x + w_step_ ? 1 : 0, .col_range = 0});
      continue;
    }
    std::int64_t q = x;
    for (; q < end && cols.of_position[static_cast<std::size_t>(q)] != 0; ++q)
      edge_cols_.push_back({.col = q, .slot = 0, .col_range = cols.of_position[static_cast<std::size_t>(q)]});
    const std::int64_t interior = q;
    while (q < end && cols.of_position[static_cast<std::size_t>(q)] == 0) ++q;
    if (q > interior) pieces_.push_back({.col = interior, .slot = gather_slot(q - interior, false), .col_range = 0});
    for (; q < end; ++q)
      edge_cols_.push_back({.col = q, .slot = 0, .col_range = cols.of_position[static_cast<std::size_t>(q)]});
  }
  first_piece_.push_back(static_cast<std::int32_t>(pieces_.size()));
  first_edge_col_.push_back(static_cast<std::int32_t>(edge_cols_.size()));
  edge_rows_.assign(static_cast<std::size_t>(rows_), 0);
  if (edge_cols_.empty()) return;
  edge_rows_ = edge_chunks(rows_, kEdgeColumnsMaxRows, [&](std::int64_t y) {
    const TapRows &here = tap_rows_[static_cast<std::size_t>(y)], &next = tap_rows_[static_cast<std::size_t>(y + 1)];
    return next.first == here.first && next.count == here.count;
  });
  for (const std::int32_t chunk : edge_rows_) {
    if (chunk == 0) continue;
    if (edge_slot_of_rows_.size() <= static_cast<std::size_t>(chunk)) {
      edge_slot_of_rows_.resize(static_cast<std::size_t>(chunk + 1), -1);
    }
    edge_slot_of_rows_[static_cast<std::size_t>(chunk)] = gather_slot(chunk, true);
  }
}

std::int32_t ConvBwd::gather_slot(std::int64_t pixels, bool down) {
  const GatherSlot slot{pixels, down};
  auto same = std::find(gather_slots_.begin(), gather_slots_.end(), slot);
  if (same == gather_slots_.end()) same = gather_slots_.insert(gather_slots_.end(), slot);
  return static_cast<std::int32_t>(4 + (same - gather_slots_.begin()));  // after the 4 slots of kernels_
}

void ConvBwd::add_gather_kernels(const GatherSlot& slot, tpp::BrgemmPrefetch prefetch) {
  for (int first = 0; first < 2; ++first) {
    tpp::BrgemmDesc d;
    d.m = static_cast<std::int32_t>(config_.bc);
    d.n = static_cast<std::int32_t>(slot.pixels);
    d.k = static_cast<std::int32_t>(config_.bk);
    d.lda = config_.bc;
    d.ldb = slot.down ? grad_output_.padded_w() * config_.bk : config_.bk;
    d.ldc = slot.down ? grad_input_.padded_w() * config_.bc : config_.bc;
    d.beta = first ? 0 : 1;
    d.batch = tpp::BrgemmBatch::offsets;
    d.prefetch = d.beta == 1 && !slot.down ? prefetch : tpp::BrgemmPrefetch::none;
    d.types = config_.tpp_types();
    kernel_descs_.push_back(d);
  }
}

FilterLayout ConvBwd::filter_layout() const {
  return {.k = config_.k_blocking(), .c = config_.c_blocking(), .r = config_.shape.R, .s = config_.shape.S};
}

TransposedFilterLayout ConvBwd::transposed_filter_layout() const {
  return {.k = config_.k_blocking(), .c = config_.c_blocking(), .r = config_.shape.R, .s = config_.shape.S};
}

std::int64_t ConvBwd::reduction_terms() const {
  const ConvShape& s = config_.shape;
  return s.K * ceil_div(s.R, s.stride_h) * ceil_div(s.S, s.stride_w);
}

double ConvBwd::tolerance() const {
  const std::int64_t taps = path_ == ConvBwdPath::scatter_taps ? config_.shape.R * config_.shape.S : 1;
  const auto roundings = static_cast<double>(ceil_div(config_.k_blocking().blocks(), k_step_) * taps);
  return sum_tolerance(reduction_terms()) + (config_.bf16() ? roundings * 0x1p-8 : 0.0);
}

std::string ConvBwd::measure_tag(int threads) const {
  const ConvBwdConfig& c = config_;
  return c.loop_string + "_hb=" + std::to_string(c.h_block) + "_wb=" + std::to_string(c.w_block) +
         "_cb=" + std::to_string(c.c_block) + "_kb=" + std::to_string(c.k_block) + "_hg=" +
         std::to_string(c.h_in_gemm) + "_threads" + std::to_string(threads) + (c.bf16() ? "_bf16" : "");
}

namespace {

// Floats that hold `elements` elements of `bytes` bytes each (buffers kept as floats for their
// alignment, whatever the element type).
std::size_t floats_for(std::int64_t elements, std::int64_t bytes) {
  return static_cast<std::size_t>((elements * bytes + 3) / 4);
}

}  // namespace

void ConvBwd::run(const void* filter, const void* grad_output, void* grad_input) const {
  require_buffers("ConvBwd::run", {{"filter", filter}, {"grad_output", grad_output}, {"grad_input", grad_input}});
  const std::int64_t bytes = config_.element_bytes();
  if (!per_chunk_) {
    transposed_.resize(floats_for(transposed_filter_layout().size(), bytes));
    transpose_filter(filter, transposed_.data());
    return run_typed(nullptr, transposed_.data(), grad_output, grad_input);
  }
  // The filter may have changed since the last run: every thread transposes afresh.
  thread_tiles_.resize(static_cast<std::size_t>(omp_get_max_threads()));
  for (ThreadTiles& t : thread_tiles_) {
    t.cb = t.kb = -1;
    t.tiles.resize(floats_for(chunk_elements(), bytes));
    if (config_.bf16()) t.plain.resize(floats_for(config_.bc * config_.bk, bytes));
  }
  run_typed(filter, nullptr, grad_output, grad_input);
}

void ConvBwd::run_transposed(const void* transposed_filter, const void* grad_output, void* grad_input) const {
  require_buffers("ConvBwd::run_transposed",
                  {{"transposed_filter", transposed_filter}, {"grad_output", grad_output}, {"grad_input", grad_input}});
  run_typed(nullptr, transposed_filter, grad_output, grad_input);
}

void ConvBwd::run_typed(const void* filter, const void* shared, const void* grad_output, void* grad_input) const {
  if (packed_scatter()) {
    thread_pixels_.resize(static_cast<std::size_t>(omp_get_max_threads()));
    for (ThreadPixels& t : thread_pixels_) t.values.resize(static_cast<std::size_t>(h_step_ * cols_ * config_.bc));
  }
  if (config_.plain_grad_input) {
    thread_rows_.resize(static_cast<std::size_t>(omp_get_max_threads()));
    for (ThreadPixels& t : thread_rows_) t.values.resize(floats_for(row_elements(), config_.element_bytes()));
  }
  if (config_.bf16()) {
    using B = jit::bfloat16;
    return run_path(static_cast<const B*>(filter), static_cast<const B*>(shared), static_cast<const B*>(grad_output),
                    static_cast<B*>(grad_input));
  }
  run_path(static_cast<const float*>(filter), static_cast<const float*>(shared), static_cast<const float*>(grad_output),
           static_cast<float*>(grad_input));
}

void ConvBwd::transpose_filter(const void* filter, void* transposed) const {
  require_buffers("ConvBwd::transpose_filter", {{"filter", filter}, {"transposed", transposed}});
  const std::int64_t tile_bytes = config_.bc * config_.bk * config_.element_bytes(), Kb = config_.k_blocking().blocks();
  const std::int64_t tiles_per_k_block = config_.c_blocking().blocks() * config_.shape.R * config_.shape.S;
  const auto* from = static_cast<const char*>(filter);
  auto* to = static_cast<char*>(transposed);
  std::vector<std::vector<float>> plain(static_cast<std::size_t>(omp_get_max_threads()));
  if (config_.bf16())
    for (auto& p : plain) p.resize(floats_for(config_.bc * config_.bk, config_.element_bytes()));
  (*all_tiles_)([&](int* ind) {  // FilterLayout: [Kb][Cb R S] tiles -> TransposedFilterLayout: [Cb R S][Kb]
    transpose_(from + (ind[0] * tiles_per_k_block + ind[1]) * tile_bytes, to + (ind[1] * Kb + ind[0]) * tile_bytes,
               plain[static_cast<std::size_t>(parlooper::ThreadedLoop<2>::get_tid(ind))].data());
  });
}

template <class T>
void ConvBwd::run_path(const T* filter, const T* shared, const T* grad_output, T* grad_input) const {
  switch (path_) {
    case ConvBwdPath::gather:
      return run_gather(filter, shared, grad_output, grad_input);
    case ConvBwdPath::scatter_1x1:
      return run_scatter_1x1(filter, shared, grad_output, grad_input);
    case ConvBwdPath::scatter_taps:
      return run_scatter_taps(filter, shared, grad_output, grad_input);
  }
}

std::int64_t ConvBwd::chunk_elements() const {
  return k_step_ * config_.shape.R * config_.shape.S * config_.bc * config_.bk;
}

std::int64_t ConvBwd::row_elements() const {
  // A call writes h_in_gemm rows of grad_input's pitch (w_step columns with one row), bc channels
  // each; whole cache lines per thread.
  if (!config_.plain_grad_input) return 0;
  const std::int64_t line = 64 / config_.element_bytes();
  return ceil_div(h_step_ * grad_input_.padded_w() * config_.bc, line) * line;
}

std::uint64_t ConvBwd::run_memory_bytes(int threads) const {
  const auto bytes = static_cast<std::uint64_t>(config_.element_bytes());
  // The packed scatter's fp32 rows, one GEMM's per thread; a plain grad_input's rows, one call's per thread.
  const std::uint64_t pixels = add_bytes(packed_scatter() ? bytes_needed({threads, h_step_, cols_, config_.bc}, 4) : 0,
                                         bytes_needed({threads, row_elements()}, bytes));
  if (!per_chunk_) return pixels + bytes_needed({transposed_filter_layout().size()}, bytes);
  // The chunks' tiles, and in bf16 one tile more per thread (before vnni2_pack).
  return pixels + bytes_needed({threads, k_step_ * config_.shape.R * config_.shape.S + (config_.bf16() ? 1 : 0),
                                config_.bc, config_.bk},
                               bytes);
}

template <class T>
const T* ConvBwd::chunk_tiles(const T* filter, const T* shared, int tid, std::int64_t cb, std::int64_t kb) const {
  const std::int64_t tile = config_.bc * config_.bk, taps = config_.shape.R * config_.shape.S;
  const std::int64_t Kb = config_.k_blocking().blocks(), Cb = config_.c_blocking().blocks();
  if (shared != nullptr) return shared + (cb * taps * Kb + kb) * tile;
  ThreadTiles& mine = thread_tiles_[static_cast<std::size_t>(tid)];
  if (mine.cb != cb || mine.kb != kb) {
    const std::int64_t count = std::min(k_step_, Kb - kb);
    for (std::int64_t j = 0; j < count; ++j) {
      const T* source = filter + ((kb + j) * Cb + cb) * taps * tile;  // FilterLayout::offset(kb + j, cb, 0, 0)
      for (std::int64_t tap = 0; tap < taps; ++tap) {
        transpose_(source + tap * tile, reinterpret_cast<T*>(mine.tiles.data()) + (tap * k_step_ + j) * tile,
                   mine.plain.data());
      }
    }
    mine.cb = cb;
    mine.kb = kb;
  }
  return reinterpret_cast<const T*>(mine.tiles.data());
}

template <class T>
void ConvBwd::run_gather(const T* filter, const T* shared, const T* grad_output, T* grad_input) const {
  const ActivationLayout &in = grad_input_, &out = grad_output_;
  const std::int64_t Kb = config_.k_blocking().blocks(), k_step = k_step_, h_step = h_step_, w_step = w_step_;
  const std::int64_t rows = rows_, col_ranges = col_ranges_;
  // batches_[(tiles * 2 + chunk) * col_ranges + column range]: tiles 0 the whole filter transposed,
  // 1 a thread's chunk; chunk 0 full, 1 the last, shorter one.
  const GatherBatch* batches = batches_.data() + (shared != nullptr ? 0 : 2 * col_ranges);
  const TapRows* tap_rows = tap_rows_.data();
  const Piece *pieces = pieces_.data(), *edge_cols = edge_cols_.data();
  const std::int32_t *first_piece = first_piece_.data(), *first_edge_col = first_edge_col_.data();
  const std::int32_t *edge_rows = edge_rows_.data(), *edge_slot_of_rows = edge_slot_of_rows_.data();
  // plain_grad_input: each call's rows in its thread's scratch (grad_input's row pitch), then moved
  // row by row into the plain tensor.
  const bool plain = config_.plain_grad_input;
  const std::int64_t pitch = in.padded_w(), plane = config_.shape.H * config_.shape.W, C = config_.shape.C;
  const std::int64_t bc = config_.bc, c_blocks = config_.c_blocking().blocks();
  (*loop_)([&](int* ind) {
    const std::int64_t n = ind[0], cb = ind[1], kb = ind[2], y = ind[3], x = ind[4], block = x / w_step;
    const std::int64_t kc = std::min(k_step, Kb - kb);
    const GatherBatch* chunk_batches = batches + (kc == k_step ? 0 : col_ranges);
    const TapRows taps = tap_rows[y];
    const int tid = parlooper::ThreadedLoop<7>::get_tid(ind);
    T* const own_rows = plain ? reinterpret_cast<T*>(thread_rows_[static_cast<std::size_t>(tid)].values.data()) : nullptr;
    tpp::BrgemmArgs args;
    args.a = chunk_tiles(filter, shared, tid, cb, kb);
    // The GEMM from pixel (row, col) over the filter rows of `taps` and the columns of `range`.
    const auto gemm = [&](std::int64_t row, std::int64_t col, std::int64_t range, std::int64_t slot) {
      const GatherBatch& batch = chunk_batches[range];
      const std::int64_t first = taps.first * batch.per_filter_row;
      args.b = grad_output + out.offset(n, kb, row, col);
      args.c = plain ? own_rows + ((row - y) * pitch + col - x) * bc : grad_input + in.offset(n, cb, row + in.pad_h, col + in.pad_w);
      args.count = taps.count * batch.per_filter_row;
      args.offsets_a = batch.a.data() + first;
      args.offsets_b = batch.b.data() + first;
      kernels_[static_cast<std::size_t>(slot * 2 + (kb == 0 ? 1 : 0))](args);
    };
    // Slots 0-3 are (rows tail, columns tail): a piece's slot (0 or 1) + 2 for the last, shorter
    // block of rows. That needs h_step > 1, which has no edge columns, so no slot past 3 gets it.
    const std::int64_t rows_tail = y + h_step > rows ? 2 : 0;
    for (std::int32_t p = first_piece[block]; p < first_piece[block + 1]; ++p) {
      gemm(y, pieces[p].col, pieces[p].col_range, pieces[p].slot + rows_tail);
    }
    if (const std::int64_t run = edge_rows[y]; run > 0) {
      for (std::int32_t e = first_edge_col[block]; e < first_edge_col[block + 1]; ++e) {
        gemm(y - run + 1, edge_cols[e].col, edge_cols[e].col_range, edge_slot_of_rows[run]);
      }
    }
    if (plain) {
      const tpp::Unary& transpose = row_transpose(cb == c_blocks - 1, x + w_step >= cols_);
      for (std::int64_t r = 0; r < std::min(h_step, rows - y); ++r) {
        transpose(tpp::UnaryArgs{.in = own_rows + r * pitch * bc, .out = grad_input + (n * C + cb * bc) * plane + (y + r) * cols_ + x});
      }
    }
  });
}

template <class T>
tpp::BrgemmArgs ConvBwd::strided_batch(const T* filter, const T* shared, const T* grad_output, int tid,
                                       std::int64_t n, std::int64_t cb, std::int64_t kb, std::int64_t p,
                                       std::int64_t q) const {
  tpp::BrgemmArgs args;
  args.a = chunk_tiles(filter, shared, tid, cb, kb);
  args.b = grad_output + grad_output_.offset(n, kb, p, q);
  args.count = std::min(k_step_, config_.k_blocking().blocks() - kb);
  args.stride_a = config_.bc * config_.bk;
  args.stride_b = grad_output_.padded_h() * grad_output_.padded_w() * config_.bk;
  return args;
}

template <class T>
void ConvBwd::run_scatter_1x1(const T* filter, const T* shared, const T* grad_output, T* grad_input) const {
  if (packed_scatter()) return run_packed_scatter(filter, shared, grad_output, grad_input);
  const ActivationLayout& in = grad_input_;
  const std::int64_t bc = config_.bc, sh = config_.shape.stride_h, sw = config_.shape.stride_w;
  const std::int64_t w_step = w_step_, cols = cols_;
  (*loop_)([&](int* ind) {
    const std::int64_t n = ind[0], cb = ind[1], kb = ind[2], p = ind[3], q = ind[4];
    const bool cols_tail = q + w_step > cols;
    if (kb == 0) {
      // The strip of grad_input this output row segment owns: rows [p sh, p sh + sh), columns
      // [q sw, (q + w) sw); the pixels between the strided ones no output reads from.
      const std::int64_t x0 = q * sw, x1 = std::min((q + (cols_tail ? cols - q : w_step)) * sw, in.padded_w());
      const std::int64_t y1 = std::min(p * sh + sh, in.padded_h());
      for (std::int64_t y = p * sh; y < y1; ++y) {
        std::fill_n(grad_input + in.offset(n, cb, y, x0), (x1 - x0) * bc, T{});
      }
    }
    tpp::BrgemmArgs args =
        strided_batch(filter, shared, grad_output, parlooper::ThreadedLoop<7>::get_tid(ind), n, cb, kb, p, q);
    args.c = grad_input + in.offset(n, cb, p * sh, q * sw);
    kernel(false, cols_tail, kb == 0)(args);
  });
}

template <class T>
void ConvBwd::run_packed_scatter(const T* filter, const T* shared, const T* grad_output, T* grad_input) const {
  const ActivationLayout& in = grad_input_;
  const std::int64_t bc = config_.bc, sh = config_.shape.stride_h, sw = config_.shape.stride_w;
  const std::int64_t h_step = h_step_, rows = rows_, cols = cols_;
  const std::int64_t in_rows = in.padded_h(), in_cols = in.padded_w();
  (*loop_)([&](int* ind) {
    const std::int64_t n = ind[0], cb = ind[1], kb = ind[2], p = ind[3];
    const int tid = parlooper::ThreadedLoop<7>::get_tid(ind);
    const bool rows_tail = p + h_step > rows;
    float* pixels = thread_pixels_[static_cast<std::size_t>(tid)].values.data();
    tpp::BrgemmArgs args = strided_batch(filter, shared, grad_output, tid, n, cb, kb, p, 0);
    args.c = pixels;
    kernel(rows_tail, false, false)(args);
    // Output row y's pixels go to grad_input row y sh, every sw-th column. The first chunk stores
    // them and zeroes the strip of grad_input the rows own (rows [y sh, y sh + sh), every column):
    // the pixels no output reads from. Later chunks add.
    const std::int64_t y_end = std::min(p + h_step, rows);
    for (std::int64_t y = p; y < y_end; ++y) {
      const float* row = pixels + (y - p) * cols * bc;
      T* target = grad_input + in.offset(n, cb, y * sh, 0);
      if (kb == 0) {
        for (std::int64_t r = y * sh + 1; r < std::min(y * sh + sh, in_rows); ++r)
          std::fill_n(grad_input + in.offset(n, cb, r, 0), in_cols * bc, T{});
        std::fill_n(target, in_cols * bc, T{});
        for (std::int64_t x = 0; x < cols; ++x)
          for (std::int64_t c = 0; c < bc; ++c) target[x * sw * bc + c] = from_float<T>(row[x * bc + c]);
      } else {
        for (std::int64_t x = 0; x < cols; ++x)
          for (std::int64_t c = 0; c < bc; ++c)
            target[x * sw * bc + c] = from_float<T>(to_float(target[x * sw * bc + c]) + row[x * bc + c]);
      }
    }
  });
}

template <class T>
void ConvBwd::run_scatter_taps(const T* filter, const T* shared, const T* grad_output, T* grad_input) const {
  const ActivationLayout& in = grad_input_;
  const ConvShape& s = config_.shape;
  const std::int64_t tile = config_.bc * config_.bk;
  const std::int64_t slab = in.padded_h() * in.padded_w() * in.channels.block;
  const std::int64_t w_step = w_step_, cols = cols_, S = s.S;
  const std::int64_t tap_tiles = tap_stride(shared);
  const std::int64_t sh = s.stride_h, sw = s.stride_w;
  const auto zero_slab = [&](std::int64_t n, std::int64_t cb) {
    std::fill_n(grad_input + in.offset(n, cb, 0, 0), slab, T{});
  };
  if (!zero_in_body_) (*zero_loop_)([&](int* ind) { zero_slab(ind[0], ind[1]); });
  const bool zero_in_body = zero_in_body_;
  (*loop_)([&](int* ind) {
    const std::int64_t n = ind[0], cb = ind[1], kb = ind[2], p = ind[3], q = ind[4], r = ind[5], t = ind[6];
    if (zero_in_body && (kb | p | q | r | t) == 0) zero_slab(n, cb);
    tpp::BrgemmArgs args =
        strided_batch(filter, shared, grad_output, parlooper::ThreadedLoop<7>::get_tid(ind), n, cb, kb, p, q);
    args.a = static_cast<const T*>(args.a) + (r * S + t) * tap_tiles * tile;  // tap (r, t)'s tiles
    args.c = grad_input + in.offset(n, cb, p * sh + r, q * sw + t);
    kernel(false, q + w_step > cols, false)(args);
  });
}

}  // namespace weft::ops
