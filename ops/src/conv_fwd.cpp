#include <weft/ops/conv_fwd.hpp>

#include <algorithm>
#include <array>
#include <climits>
#include <initializer_list>
#include <utility>

#include <omp.h>

#include <weft/jit/error.hpp>
#include <weft/ops/element_type.hpp>
#include <weft/ops/block_loops.hpp>
#include <weft/ops/rim_taps.hpp>
#include <weft/ops/verification.hpp>
#include <weft/parlooper/loop_string.hpp>

namespace weft::ops {
namespace {

using parlooper::LoopNest;

std::string str(std::int64_t v) { return std::to_string(v); }

// The logical loops, PARLOOPER's letters.
enum Loop : int { kImages, kCBlocks, kKBlocks, kRows, kCols, kTapR, kTapS };

// pad_h_in ... pad_w_out follow from logical_padding; a given value must agree.
void resolve_rims(ConvFwdConfig& c) {
  const struct {
    const char* name;
    std::int64_t& value;
    std::int64_t pad;
  } rims[] = {{"pad_h_in", c.pad_h_in, c.shape.pad_h},
              {"pad_w_in", c.pad_w_in, c.shape.pad_w},
              {"pad_h_out", c.pad_h_out, c.shape.pad_h},
              {"pad_w_out", c.pad_w_out, c.shape.pad_w}};
  for (const auto& rim : rims) {
    const std::int64_t expected = c.logical_padding ? 0 : rim.pad;
    if (rim.value == ConvFwdConfig::kFollowPadding) {
      rim.value = expected;
    } else if (rim.value != expected) {
      throw Error(std::string(rim.name) + " = " + str(rim.value) + " contradicts logical_padding = " +
                  str(c.logical_padding) + ": the blocked tensors' rims follow from it (" +
                  (c.logical_padding ? "logical padding: no rims, 0"
                                     : "physical padding: pad_h / pad_w, " + str(rim.pad)) +
                  "). PARLOOPER refuses this as well; leave the argument out or pass " + str(expected));
    }
  }
}

bool is_per_tap(const ConvFwdConfig& c) {
  return c.logical_padding && !c.input_padding_copy && (c.shape.pad_h > 0 || c.shape.pad_w > 0);
}

// The layout B is read from in the batch-reduce mode: the packed input, the padded copy, or the input.
ActivationLayout scratch_layout(const ConvFwdConfig& c) {
  const ConvShape& s = c.shape;
  if (c.pack_input) return {s.N, c.c_blocking(), s.ofh(), s.ofw(), 0, 0};
  if (c.input_padding_copy) return {s.N, c.c_blocking(), s.H, s.W, s.pad_h, s.pad_w};
  return {};
}

ActivationLayout input_layout_of(const ConvFwdConfig& c) {
  return {c.shape.N, c.c_blocking(), c.shape.H, c.shape.W, c.pad_h_in, c.pad_w_in};
}

ActivationLayout output_layout_of(const ConvFwdConfig& c) {
  return {c.shape.N, c.k_blocking(), c.shape.ofh(), c.shape.ofw(), c.pad_h_out, c.pad_w_out};
}

// Plain N x K x P x Q: blocks of one channel, no rims.
ActivationLayout plain_output_of(const ConvFwdConfig& c) {
  return {c.shape.N, Blocking{c.shape.K, 1}, c.shape.ofh(), c.shape.ofw(), 0, 0};
}

// Several output rows in one GEMM read the input as one matrix over the output's padded row pitch:
// stepping one output row (pitch columns of the GEMM, col_step input pixels each) must step
// row_step input rows.
void check_rows_in_gemm(const ConvFwdConfig& c) {
  if (c.h_in_gemm == 1) return;
  const std::string hg = "h_in_gemm = " + str(c.h_in_gemm);
  if (is_per_tap(c)) {
    throw Error(hg + ": logical padding computes each tap on the clipped columns of one output row, so it "
                "needs h_in_gemm = 1 (PARLOOPER refuses it too); use input_padding_copy 1 or physical padding");
  }
  if (c.w_block != 1) {
    throw Error(hg + " computes whole output rows in one GEMM, so it needs w_block = 1 (got " + str(c.w_block) +
                ")");
  }
  const ActivationLayout out = output_layout_of(c);
  const ActivationLayout b = c.pack_input || c.input_padding_copy ? scratch_layout(c) : input_layout_of(c);
  const std::int64_t col_step = c.pack_input ? 1 : c.shape.stride_w, row_step = c.pack_input ? 1 : c.shape.stride_h;
  if (out.padded_w() * col_step != row_step * b.padded_w()) {
    throw Error(hg + " computes several output rows in one GEMM over the output's row pitch (" +
                str(out.padded_w()) + " pixels), which must then step the input by stride_h rows: " +
                str(out.padded_w()) + " x " + str(col_step) + " input pixels != " + str(row_step) + " x " +
                str(b.padded_w()) + " (the input's row pitch)" + (c.pack_input ? " (packed)" : "") +
                ". It holds for stride 1 with the output rows as wide as the input's (S = 2 pad_w + 1, as 3x3 with "
                "pad 1, or 1x1 without padding), and for a packed strided 1x1 without output rims; else pass "
                "h_in_gemm 1");
  }
}

// What the constructor checks before it builds anything, with the rims resolved.
ConvFwdConfig validated(ConvFwdConfig c) {
  c.validate();
  require_positive({{"h_block", c.h_block}, {"w_block", c.w_block}, {"c_block", c.c_block},
                    {"k_block", c.k_block}, {"h_in_gemm", c.h_in_gemm}});
  const ConvShape& s = c.shape;
  const std::int64_t cb = c.c_blocking().blocks();
  if (c.c_block > cb) {
    throw Error("c_block = " + str(c.c_block) + ": the " + str(cb) + " C blocks (C / bc rounded up) are split "
                "into c_block batch-reduce chunks, so it must be at most " + str(cb));
  }
  if (c.w_block > s.ofw()) {
    throw Error("w_block = " + str(c.w_block) + ": the " + str(s.ofw()) + " output columns are split into "
                "w_block GEMMs, so it must be at most " + str(s.ofw()));
  }
  if (c.h_in_gemm > s.ofh()) {
    throw Error("h_in_gemm = " + str(c.h_in_gemm) + " output rows per GEMM, but there are only " + str(s.ofh()));
  }
  if (c.input_padding_copy && !c.logical_padding) {
    throw Error("input_padding_copy copies a logically padded input into a padded scratch, so it needs "
                "logical_padding = 1 (PARLOOPER refuses it too)");
  }
  resolve_rims(c);
  if (c.pack_input) {
    if (s.R != 1 || s.S != 1) {
      throw Error("pack_input gathers the pixels a strided 1x1 filter reads; with R x S = " + str(s.R) + " x " +
                  str(s.S) + " there is nothing to pack (PARLOOPER ignores it silently): pass 0");
    }
    if (c.input_padding_copy) throw Error("pack_input and input_padding_copy do not go together (nor in PARLOOPER)");
    if (is_per_tap(c)) {
      throw Error("pack_input reads the padding's zeros from the input's rims: it needs physical padding "
                  "(logical_padding 0) or pad_h = pad_w = 0");
    }
  }
  check_rows_in_gemm(c);
  if (c.plain_output) {
    if (is_per_tap(c)) {
      throw Error("plain_output needs the batch-reduce mode: logical padding without input_padding_copy reduces "
                  "tap by tap into the output; use input_padding_copy 1 or physical padding");
    }
    if (c.c_block != 1) {
      throw Error("plain_output needs c_block = 1 (got " + str(c.c_block) + "): an output block is moved into the "
                  "plain output after its last chunk, so one call must reduce all C blocks");
    }
    if (c.zero_output_rims) throw Error("zero_output_rims with plain_output: a plain output has no rims");
  }
  return c;
}

// The nest of the loop string over `specs`, after the nest's own checks and the sample's: bounds
// come from the shape (inline bounds would skip or repeat pixels), and h_block must be a multiple
// of the d loop's step where it is used.
LoopNest checked_loop_nest(const ConvFwdConfig& c, const std::array<parlooper::LoopSpecs, 7>& specs) {
  LoopNest nest = parlooper::parse_loop_string(c.loop_string, 7);
  for (const parlooper::InlineSpec& spec : nest.inline_specs) {
    if (spec.has_start || spec.has_end || spec.has_step) {
      throw Error(std::string("loop_string '") + c.loop_string + "': inline bounds for loop '" +
                  static_cast<char>('a' + spec.loop) + "'; the convolution's loops take their bounds and steps "
                  "from the shape, only block sizes may be given inline (e.g. c[,,,(4,2)])");
    }
  }
  const bool d_blocks_inline = std::any_of(nest.inline_specs.begin(), nest.inline_specs.end(), [](const auto& s) {
    return s.loop == kRows && !s.block_size.empty();
  });
  for (const parlooper::LoopLevel& level : nest.levels) {
    if (level.loop == kRows && level.num_occurrences > 1 && !d_blocks_inline && c.h_block % c.h_in_gemm != 0) {
      throw Error("h_block = " + str(c.h_block) + " must be a multiple of h_in_gemm = " + str(c.h_in_gemm) +
                  ": it is the block size of loop d (output rows), which steps by h_in_gemm");
    }
  }
  parlooper::make_nest_bounds(nest, specs);
  return nest;
}

// A reduction loop outside the work-shared run needs every entry of the run to give an output
// block to the same thread (static schedules do; grids do), since nothing orders its chunks else.
void require_fixed_owner(const LoopNest& nest, std::initializer_list<std::pair<int, std::int64_t>> reductions) {
  if (!nest.has_run() || nest.schedule.kind == parlooper::ScheduleKind::static_) return;
  for (int l = 0; l < nest.run_begin; ++l) {
    for (const auto& [loop, iterations] : reductions) {
      if (nest.levels[static_cast<std::size_t>(l)].loop == loop && iterations > 1) {
        throw Error(std::string("loop '") + static_cast<char>('a' + loop) + "' is a reduction of this sample (" +
                    str(iterations) + " steps) and encloses the work-shared run, whose schedule deals its "
                    "iterations anew on every entry: the steps of one output block could run on different "
                    "threads at once. Use a static schedule, or put the reduction loop inside the run");
      }
    }
  }
}

std::int64_t padded_plane(const ActivationLayout& l) { return l.padded_h() * l.padded_w() * l.channels.block; }

// The taps of one axis (rows or columns) that read the image, for output position i whose window
// starts at padded input position i * step (the image at [pad, pad + extent)).
RimTaps image_taps(std::int64_t positions, std::int64_t step, std::int64_t pad, std::int64_t extent,
                   std::int64_t taps, bool skip) {
  return rim_taps(positions, taps, skip && pad > 0, [&](std::int64_t i) {
    return TapRange{std::max<std::int64_t>(0, pad - i * step), std::min(taps, pad + extent - i * step)};
  });
}

// The taps each output column reads in the batch-reduce mode of a validated configuration: with
// one output row per GEMM and R x S > 1 the columns whose window reaches into the input's rims skip
// those taps (edge columns, computed down the image), where that saves enough.
RimTaps column_taps(const ConvFwdConfig& c) {
  const ConvShape& s = c.shape;
  const ActivationLayout b = c.pack_input || c.input_padding_copy ? scratch_layout(c) : input_layout_of(c);
  const bool skip_rims = c.h_in_gemm == 1 && s.R * s.S > 1;
  RimTaps cols = image_taps(s.ofw(), c.pack_input ? 1 : s.stride_w, b.pad_w, s.W, s.S, skip_rims);
  if (cols.saved_share() < kEdgeColumnsMinSavedShare) cols = every_tap(s.ofw(), s.S);
  return cols;
}

}  // namespace

void ConvFwd::check(const ConvFwdConfig& config) { [[maybe_unused]] const ConvFwd checked(config, PassCode::check); }

bool ConvFwd::plain_output_pays(const ConvFwdConfig& config) {
  // 1x1 filters only: their passes stream the output, whose separate conversion costs them most;
  // an R x S pass's GEMMs lose about what the transposes save (measured, ops/conv_fwd.hpp).
  if (config.shape.R * config.shape.S != 1) return false;
  if (is_per_tap(config) || config.c_block != 1 || config.zero_output_rims) return false;
  ConvFwdConfig checked;
  try {
    checked = validated(config);
  } catch (const Error&) {
    return false;
  }
  return column_taps(checked).ranges.size() == 1;
}

ConvFwd::ConvFwd(ConvFwdConfig config, PassCode code)
    : config_(validated(std::move(config))),
      per_tap_(is_per_tap(config_)),
      c_blocks_(config_.c_blocking().blocks()),
      c_step_(chunk_step(c_blocks_, config_.c_block)),
      w_step_(chunk_step(config_.shape.ofw(), config_.w_block)),
      input_(input_layout_of(config_)),
      output_(output_layout_of(config_)),
      plain_output_(plain_output_of(config_)),
      scratch_(scratch_layout(config_)),
      filter_{config_.k_blocking(), config_.c_blocking(), config_.shape.R, config_.shape.S},
      b_row_step_(config_.pack_input ? 1 : config_.shape.stride_h),
      b_col_step_(config_.pack_input ? 1 : config_.shape.stride_w) {
  const ConvShape& s = config_.shape;
  const std::array<parlooper::LoopSpecs, 7> specs = block_nest_specs<7>(
      {s.N, c_blocks_, config_.k_blocking().blocks(), s.ofh(), s.ofw(), s.R, s.S},
      {1, c_step_, 1, config_.h_in_gemm, w_step_, per_tap_ ? 1 : s.R, per_tap_ ? 1 : s.S},
      {{{}, {}, {config_.k_block}, {config_.h_block}, {}, {}, {}}});
  const std::int64_t chunks = (c_blocks_ + c_step_ - 1) / c_step_;
  const std::int64_t r_steps = per_tap_ ? s.R : 1, s_steps = per_tap_ ? s.S : 1;
  const LoopNest nest = checked_loop_nest(config_, specs);
  require_sequential_reduction(nest, kCBlocks, chunks);
  require_sequential_reduction(nest, kTapR, r_steps);
  require_sequential_reduction(nest, kTapS, s_steps);
  require_fixed_owner(nest, {{kCBlocks, chunks}, {kTapR, r_steps}, {kTapS, s_steps}});
  if (per_tap_) {
    prepare_per_tap();
  } else {
    prepare_batch_reduce();
  }
  kernels_ = make_kernels<tpp::Brgemm>(kernel_descs_, code);
  prepare_scratch(code);
  prepare_plain_output(code);
  if (code == PassCode::build) loop_.emplace(specs, config_.loop_string);
}

void ConvFwd::prepare_per_tap() {
  const ConvShape& s = config_.shape;
  const std::int64_t ldb = config_.bc * s.stride_w, ofw = s.ofw();
  // Output column q reads input column q stride_w + s - pad_w, inside the image for q in
  // [first_col_[s], end_col_[s]).
  first_col_.resize(static_cast<std::size_t>(s.S));
  end_col_.resize(first_col_.size());
  for (std::int64_t t = 0; t < s.S; ++t) {
    const std::int64_t lo = s.pad_w - t <= 0 ? 0 : (s.pad_w - t + s.stride_w - 1) / s.stride_w;
    const std::int64_t hi = s.W + s.pad_w - t <= 0 ? 0 : (s.W + s.pad_w - t + s.stride_w - 1) / s.stride_w;
    first_col_[static_cast<std::size_t>(t)] = std::min(lo, ofw);
    end_col_[static_cast<std::size_t>(t)] = std::max(std::min(hi, ofw), std::min(lo, ofw));
  }
  // The widths a call can have: a whole step, the last step, and the steps a tap clips (only those
  // at the image's edges: the steps in between are whole).
  slot_of_width_.assign(static_cast<std::size_t>(w_step_ + 1), -1);
  add_kernels(w_step_, tpp::BrgemmBatch::strided, ldb);
  add_kernels(ofw - (ofw - 1) / w_step_ * w_step_, tpp::BrgemmBatch::strided, ldb);
  for (std::size_t t = 0; t < first_col_.size(); ++t) {
    const std::int64_t lo = first_col_[t], hi = end_col_[t];
    if (lo >= hi) continue;
    for (std::int64_t ow : {lo / w_step_ * w_step_, (hi - 1) / w_step_ * w_step_}) {
      add_kernels(std::min(ow + std::min(w_step_, ofw - ow), hi) - std::max(ow, lo), tpp::BrgemmBatch::strided, ldb);
    }
  }
}

void ConvFwd::prepare_batch_reduce() {
  const ConvShape& s = config_.shape;
  const std::int64_t bc = config_.bc, ofh = s.ofh(), ofw = s.ofw(), taps = s.R * s.S, hg = config_.h_in_gemm;
  const tpp::BrgemmBatch batch = taps == 1 ? tpp::BrgemmBatch::strided : tpp::BrgemmBatch::offsets;
  const ActivationLayout& b = scratch_.images > 0 ? scratch_ : input_;
  const std::int64_t ldb = bc * b_col_step_;
  // avoid_rim_fmas needs one output row per GEMM (a GEMM over several rows runs through the rims
  // between them) and offset tables (R x S > 1).
  const bool skip_rims = hg == 1 && taps > 1;
  const RimTaps rows = image_taps(ofh, b_row_step_, b.pad_h, s.H, s.R, skip_rims);
  // A plain output is moved out of one call's rows, which GEMMs down the image would reach past.
  const RimTaps cols = config_.plain_output ? every_tap(ofw, s.S) : column_taps(config_);
  row_range_of_row_ = rows.of_position;
  col_ranges_ = static_cast<std::int32_t>(cols.ranges.size());
  if (taps > 1) {
    const std::uint64_t bytes = bytes_needed({c_step_, taps, 2}, sizeof(std::int64_t));
    require_memory("the batch-reduce offset tables", bytes);
    // The offsets of the taps in filter rows r and columns t of the ranges, C block by C block.
    const auto tap_list = [&](TapRange r, TapRange t) {
      TapList list{(r.second - r.first) * (t.second - t.first), {}, {}};
      allocating("the batch-reduce offset tables", bytes, [&] {
        list.offsets_a.reserve(static_cast<std::size_t>(c_step_ * list.taps_per_block));
        list.offsets_b.reserve(static_cast<std::size_t>(c_step_ * list.taps_per_block));
        return 0;
      });
      for (std::int64_t cb = 0; cb < c_step_; ++cb) {
        for (std::int64_t ir = r.first; ir < r.second; ++ir) {
          for (std::int64_t is = t.first; is < t.second; ++is) {
            list.offsets_a.push_back(filter_.offset(0, cb, ir, is));
            list.offsets_b.push_back(b.offset(0, cb, ir, is));
          }
        }
      }
      return list;
    };
    for (const auto& r : rows.ranges)
      for (const auto& t : cols.ranges) tap_lists_.push_back(tap_list(r, t));
  }
  if (hg > 1) {
    // One column block (w_block 1). Slot 0: h_in_gemm rows; slot 1: the last, shorter row block.
    const std::int64_t pitch = output_.padded_w(), tail_rows = ofh % hg;
    add_kernels((hg - 1) * pitch + w_step_, batch, ldb);
    add_kernels(tail_rows > 0 ? (tail_rows - 1) * pitch + ofw : w_step_, batch, ldb);
    row_pieces_ = {Piece{.col = 0, .slot = 0, .col_range = 0}};
    first_row_piece_ = {0, 1};
    first_edge_col_ = {0, 0};
    edge_rows_.assign(static_cast<std::size_t>(ofh), 0);
    return;
  }
  // A column block's GEMMs along its row: the columns whose taps are all in the image (range 0).
  // Its edge columns (other ranges) are GEMMs down the image instead, one per edge column over a
  // run of rows with one range of filter rows: a GEMM one column wide would load a vector of the
  // filter per multiply-add (rims on both sides of 7 x 7 images: 2 of 7 columns).
  slot_of_width_.assign(static_cast<std::size_t>(w_step_ + 1), -1);
  for (std::int64_t ow = 0; ow < ofw; ow += w_step_) {
    first_row_piece_.push_back(static_cast<std::int32_t>(row_pieces_.size()));
    first_edge_col_.push_back(static_cast<std::int32_t>(edge_cols_.size()));
    const std::int64_t end = std::min(ow + w_step_, ofw);
    std::int64_t q = ow;
    for (; q < end && cols.of_position[static_cast<std::size_t>(q)] != 0; ++q)
      edge_cols_.push_back({.col = q, .col_range = cols.of_position[static_cast<std::size_t>(q)]});
    const std::int64_t interior = q;
    while (q < end && cols.of_position[static_cast<std::size_t>(q)] == 0) ++q;
    if (q > interior) {
      add_kernels(q - interior, batch, ldb);
      row_pieces_.push_back({.col = interior,
                             .slot = static_cast<std::int32_t>(width_slot(q - interior)), .col_range = 0});
    }
    for (; q < end; ++q) edge_cols_.push_back({.col = q, .col_range = cols.of_position[static_cast<std::size_t>(q)]});
  }
  first_row_piece_.push_back(static_cast<std::int32_t>(row_pieces_.size()));
  first_edge_col_.push_back(static_cast<std::int32_t>(edge_cols_.size()));
  // Each chunk of a run of rows with one range of filter rows has its edge columns computed by its
  // last row, when that row computes its own: every (row, column block) is one body call per
  // (image, C chunk, K block), and the chunk's edge pixels are written by that call alone.
  edge_rows_.assign(static_cast<std::size_t>(ofh), 0);
  if (!edge_cols_.empty()) {
    edge_rows_ = edge_chunks(ofh, kEdgeColumnsMaxRows, [&](std::int64_t oh) {
      return rows.of_position[static_cast<std::size_t>(oh + 1)] == rows.of_position[static_cast<std::size_t>(oh)];
    });
    const std::int64_t down_ldb = b_row_step_ * b.padded_w() * bc, down_ldc = output_.padded_w() * config_.bk;
    for (const std::int32_t chunk : edge_rows_) {
      if (chunk == 0) continue;
      if (edge_slot_of_rows_.size() <= static_cast<std::size_t>(chunk)) {
        edge_slot_of_rows_.resize(static_cast<std::size_t>(chunk + 1), -1);
      }
      std::int32_t& slot = edge_slot_of_rows_[static_cast<std::size_t>(chunk)];
      if (slot < 0) {
        slot = static_cast<std::int32_t>(kernel_descs_.size() / 4);
        add_kernels(chunk, batch, down_ldb, down_ldc);
      }
    }
  }
}

void ConvFwd::prepare_scratch(PassCode code) {
  if (scratch_.images == 0) return;
  // One row per body call: a padded copy's interior row (the rims stay the zeros the buffer was
  // allocated with), or a packed row of the pixels a strided 1x1 filter reads.
  const ConvShape& s = config_.shape;
  tpp::UnaryDesc row{.op = tpp::UnaryOp::copy, .types = config_.tpp_types()};
  if (config_.pack_input) {
    row.m = config_.bc, row.n = s.ofw(), row.ld_in = config_.bc * s.stride_w, row.ld_out = config_.bc;
  } else {
    row.m = s.W * config_.bc, row.n = 1, row.ld_in = row.m, row.ld_out = row.m;
  }
  prepare_kernel_ = make_kernel<tpp::Unary>(row, code);
  prepare_loop_ = make_loop<3>(block_nest_specs<3>({s.N, c_blocks_, scratch_.h}, {1, 1, 1}, {}), "ABC", code);
}

void ConvFwd::prepare_plain_output(PassCode code) {
  if (!config_.plain_output) return;
  // Output row y of a call, columns [ow, ow + width) of channels [kb bk, kb bk + extent): from the
  // scratch (extent x width, ld bk) into the plain image (width x extent, ld P Q).
  const ConvShape& s = config_.shape;
  const Blocking k = config_.k_blocking();
  const std::int64_t ofw = s.ofw();
  const std::int64_t extents[] = {k.extent(0), k.extent(k.blocks() - 1)};
  const std::int64_t widths[] = {w_step_, ofw - (ofw - 1) / w_step_ * w_step_};
  const jit::DataType type = config_.dtype;
  for (int index = 0; index < 4; ++index) {
    row_transposes_[static_cast<std::size_t>(index)] = make_kernel<tpp::Unary>(
        tpp::UnaryDesc{.op = tpp::UnaryOp::transpose, .m = extents[index / 2], .n = widths[index % 2],
                       .ld_in = config_.bk, .ld_out = s.ofh() * ofw,
                       .types = {.in = type, .out = type, .compute = jit::DataType::f32}},
        code);
  }
}

std::int64_t ConvFwd::output_rows_elements() const {
  if (!config_.plain_output) return 0;
  // A call writes h_in_gemm rows of the output's pitch (w_step columns with one row), bk channels each.
  const std::int64_t line = 64 / config_.element_bytes();
  const std::int64_t elements = config_.h_in_gemm * output_.padded_w() * config_.bk;
  return (elements + line - 1) / line * line;
}

void ConvFwd::add_kernels(std::int64_t width, tpp::BrgemmBatch batch, std::int64_t ldb, std::int64_t ldc) {
  const bool along_row = ldc == 0;
  if (along_row && !slot_of_width_.empty() && slot_of_width_[static_cast<std::size_t>(width)] >= 0) return;
  if (width > INT32_MAX) {
    throw Error("one GEMM would span " + str(width) + " output pixels, more than a BRGEMM kernel takes");
  }
  if (along_row && !slot_of_width_.empty()) {
    slot_of_width_[static_cast<std::size_t>(width)] = static_cast<std::int32_t>(kernel_descs_.size() / 4);
  }
  for (int index = 0; index < 4; ++index) {
    const bool first = index & 2, last = index & 1;
    tpp::BrgemmDesc d;
    d.m = static_cast<std::int32_t>(config_.bk);
    d.n = static_cast<std::int32_t>(width);
    d.k = static_cast<std::int32_t>(config_.bc);
    d.lda = config_.bk;
    d.ldb = ldb;
    d.ldc = along_row ? config_.bk : ldc;
    d.beta = first ? 0 : 1;
    d.batch = batch;
    d.bias = last && config_.with_bias ? tpp::BrgemmBias::per_row : tpp::BrgemmBias::none;
    d.activation = last && config_.with_relu ? tpp::BrgemmActivation::relu : tpp::BrgemmActivation::none;
    d.types = config_.tpp_types();
    kernel_descs_.push_back(d);
  }
}

std::uint64_t ConvFwd::scratch_bytes() const {
  const auto element = static_cast<std::uint64_t>(config_.element_bytes());
  const std::uint64_t input = scratch_.images > 0 ? bytes_needed({scratch_.size()}, element) : 0;
  const std::uint64_t rows = bytes_needed({omp_get_max_threads(), output_rows_elements()}, element);
  return add_bytes(input, rows);
}

double ConvFwd::tolerance() const {
  // Calls that round an output: one per C chunk, times one per tap in the per-tap mode.
  const std::int64_t taps = per_tap_ ? config_.shape.R * config_.shape.S : 1;
  const auto roundings = static_cast<double>((c_blocks_ + c_step_ - 1) / c_step_ * taps);
  return sum_tolerance(reduction_terms() + 1) + (config_.bf16() ? roundings * 0x1p-8 : 0.0);
}

std::string ConvFwd::measure_tag(int threads) const {
  const ConvFwdConfig& c = config_;
  return c.loop_string + "_hb=" + str(c.h_block) + "_wb=" + str(c.w_block) + "_cb=" + str(c.c_block) +
         "_kb=" + str(c.k_block) + "_hg=" + str(c.h_in_gemm) + "_pu=" + str(c.pack_input) + "_threads" +
         std::to_string(threads) + (c.bf16() ? "_bf16" : "");
}

void ConvFwd::run(const void* input, const void* filter, const void* bias, void* output) const {
  require_buffers("ConvFwd::run", {{"input", input}, {"filter", filter}, {"output", output}});
  if (config_.with_bias) require_buffers("ConvFwd::run", {{"bias (with_bias is set)", bias}});
  if (!config_.with_bias) bias = nullptr;
  if (config_.bf16()) {
    using B = jit::bfloat16;
    return run_typed(static_cast<const B*>(input), static_cast<const B*>(filter), static_cast<const B*>(bias),
                     static_cast<B*>(output));
  }
  run_typed(static_cast<const float*>(input), static_cast<const float*>(filter), static_cast<const float*>(bias),
            static_cast<float*>(output));
}

template <class T>
void ConvFwd::run_typed(const T* input, const T* filter, const T* bias, T* output) const {
  if (per_tap_) return run_per_tap(input, filter, bias, output);
  const std::uint64_t bytes = scratch_bytes();
  if (scratch_buffer_.size() * sizeof(float) < bytes) {
    // Zeros (the rims of a padded copy), in floats: as many as hold scratch_bytes(). Allocated on
    // the first run, and again for a larger team (plain_output: the output rows per thread).
    const auto floats = static_cast<std::size_t>((bytes + sizeof(float) - 1) / sizeof(float));
    scratch_buffer_ = allocating("the convolution's scratch", bytes, [&] { return std::vector<float>(floats, 0.0f); });
  }
  T* scratch = reinterpret_cast<T*>(scratch_buffer_.data());
  if (!prepare_loop_) return run_batch_reduce(input, input_, filter, bias, output);

  const tpp::Unary& copy = *prepare_kernel_;
  const std::int64_t row_step = config_.pack_input ? config_.shape.stride_h : 1;
  (*prepare_loop_)([&](int* ind) {
    const std::int64_t n = ind[0], cb = ind[1], y = ind[2];
    copy(tpp::UnaryArgs{.in = input + input_.offset(n, cb, y * row_step, 0),
                        .out = scratch + scratch_.offset(n, cb, y + scratch_.pad_h, scratch_.pad_w)});
  });
  run_batch_reduce(static_cast<const T*>(scratch), scratch_, filter, bias, output);
}

template <class T>
void ConvFwd::run_batch_reduce(const T* b, const ActivationLayout& b_layout, const T* filter, const T* bias,
                               T* output) const {
  const ConvShape& s = config_.shape;
  const std::int64_t Cb = c_blocks_, c_step = c_step_, w_step = w_step_, hg = config_.h_in_gemm;
  const std::int64_t ofh = s.ofh(), ofw = s.ofw(), taps = s.R * s.S, bk = config_.bk;
  const std::int64_t row_step = b_row_step_, col_step = b_col_step_, pad_h = output_.pad_h, pad_w = output_.pad_w;
  const std::int64_t stride_a = taps * config_.bc * bk, stride_b = padded_plane(b_layout);
  const bool zero_rims_now = config_.zero_output_rims && (pad_h > 0 || pad_w > 0);
  const TapList* tap_lists = tap_lists_.empty() ? nullptr : tap_lists_.data();  // none for 1x1 (strided)
  const std::int32_t *row_range_of_row = row_range_of_row_.data(), *edge_rows = edge_rows_.data();
  const std::int32_t col_ranges = col_ranges_, *edge_slot_of_rows = edge_slot_of_rows_.data();
  const Piece* row_pieces = row_pieces_.data();
  const EdgeColumn* edge_cols = edge_cols_.data();
  const std::int32_t *first_row_piece = first_row_piece_.data(), *first_edge_col = first_edge_col_.data();
  // plain_output: each thread's output rows follow the input scratch (a call's rows at pitch
  // `pitch`, as in the blocked output), moved row by row into the plain output after the GEMMs.
  const bool plain = config_.plain_output;
  T* const thread_rows = reinterpret_cast<T*>(scratch_buffer_.data()) + (scratch_.images > 0 ? scratch_.size() : 0);
  const std::int64_t rows_elements = output_rows_elements(), pitch = output_.padded_w(), plane = ofh * ofw;
  const std::int64_t k_blocks = config_.k_blocking().blocks();
  (*loop_)([&](int* ind) {
    const std::int64_t n = ind[kImages], cb = ind[kCBlocks], kb = ind[kKBlocks], oh = ind[kRows], ow = ind[kCols];
    const std::int64_t rows = std::min(hg, ofh - oh), chunk = std::min(c_step, Cb - cb), block = ow / w_step;
    const bool first = cb == 0, last = cb + c_step >= Cb;
    T* const own_rows = plain ? thread_rows + omp_get_thread_num() * rows_elements : nullptr;
    tpp::BrgemmArgs args;
    args.a = filter + filter_.offset(kb, cb, 0, 0);
    args.count = chunk * taps;
    args.stride_a = stride_a;
    args.stride_b = stride_b;
    args.bias = bias != nullptr ? bias + kb * bk : nullptr;
    // The GEMM(s) from (row, col) over `range` (of tap_lists_), with kernel slot `slot`.
    const auto gemm = [&](std::int64_t row, std::int64_t col, std::int64_t range, std::int64_t slot) {
      args.b = b + b_layout.offset(n, cb, row * row_step, col * col_step);
      args.c = plain ? own_rows + ((row - oh) * pitch + col - ow) * bk : output + output_.offset(n, kb, row + pad_h, col + pad_w);
      if (tap_lists != nullptr) {
        const TapList& list = tap_lists[range];
        args.count = chunk * list.taps_per_block;
        args.offsets_a = list.offsets_a.data();
        args.offsets_b = list.offsets_b.data();
      }
      kernel(slot, first, last)(args);
    };
    const std::int64_t row_range = row_range_of_row[oh] * col_ranges;
    for (std::int32_t p = first_row_piece[block]; p < first_row_piece[block + 1]; ++p) {
      gemm(oh, row_pieces[p].col, row_range + row_pieces[p].col_range, rows < hg ? 1 : row_pieces[p].slot);
    }
    if (const std::int64_t run = edge_rows[oh]; run > 0) {
      for (std::int32_t e = first_edge_col[block]; e < first_edge_col[block + 1]; ++e) {
        gemm(oh - run + 1, edge_cols[e].col, row_range + edge_cols[e].col_range, edge_slot_of_rows[run]);
      }
    }
    if (last && zero_rims_now) zero_rims(output, n, kb, oh, rows, ow, std::min(w_step, ofw - ow));
    if (plain) {
      const tpp::Unary& transpose = row_transpose(kb == k_blocks - 1, ow + w_step >= ofw);
      for (std::int64_t y = 0; y < rows; ++y) {
        transpose(tpp::UnaryArgs{.in = own_rows + y * pitch * bk,
                                 .out = output + (n * s.K + kb * bk) * plane + (oh + y) * ofw + ow});
      }
    }
  });
}

template <class T>
void ConvFwd::run_per_tap(const T* input, const T* filter, const T* bias, T* output) const {
  const ConvShape& s = config_.shape;
  const std::int64_t Cb = c_blocks_, c_step = c_step_, w_step = w_step_, ofw = s.ofw(), bk = config_.bk;
  const std::int64_t stride_a = s.R * s.S * config_.bc * bk, stride_b = padded_plane(input_);
  const bool epilogue = config_.with_bias || config_.with_relu;
  (*loop_)([&](int* ind) {
    const std::int64_t n = ind[kImages], cb = ind[kCBlocks], kb = ind[kKBlocks], oh = ind[kRows], ow = ind[kCols];
    const std::int64_t r = ind[kTapR], t = ind[kTapS];
    const std::int64_t cols = std::min(w_step, ofw - ow), y = oh * s.stride_h + r - s.pad_h;
    const std::int64_t q0 = std::max(ow, first_col_[static_cast<std::size_t>(t)]);
    const std::int64_t q1 = std::min(ow + cols, end_col_[static_cast<std::size_t>(t)]);
    const bool first = cb == 0 && r == 0 && t == 0, last = cb + c_step >= Cb && r == s.R - 1 && t == s.S - 1;
    const bool work = y >= 0 && y < s.H && q1 > q0, whole = work && q0 == ow && q1 == ow + cols;
    tpp::BrgemmArgs args;
    args.c = output + output_.offset(n, kb, oh, ow);
    args.count = 0;
    args.bias = bias != nullptr ? bias + kb * bk : nullptr;
    // An output block whose first tap does not cover it is zeroed first (beta = 0, nothing summed).
    if (first && !whole) kernel(width_slot(cols), true, false)(args);
    if (work) {
      args.a = filter + filter_.offset(kb, cb, r, t);
      args.b = input + input_.offset(n, cb, y, q0 * s.stride_w + t - s.pad_w);
      args.c = output + output_.offset(n, kb, oh, q0);
      args.count = std::min(c_step, Cb - cb);
      args.stride_a = stride_a;
      args.stride_b = stride_b;
      kernel(width_slot(q1 - q0), first && whole, last && whole)(args);
    }
    // ... and one whose last tap does not gets its epilogue in place (beta = 1, nothing summed).
    if (last && !whole && epilogue) {
      args.c = output + output_.offset(n, kb, oh, ow);
      args.count = 0;
      kernel(width_slot(cols), false, true)(args);
    }
  });
}

template <class T>
void ConvFwd::zero_rims(T* output, std::int64_t n, std::int64_t kb, std::int64_t oh, std::int64_t rows,
                        std::int64_t ow, std::int64_t cols) const {
  // Each rim element belongs to exactly one output block's last call: rows above and below the
  // image and the left rims to the first column block, the right rims to the last. (PARLOOPER zeroed
  // the top and bottom rims from every column block, which raced when loop e was parallel.)
  const ActivationLayout& o = output_;
  const std::int64_t pixel = o.channels.block, rim_rows = o.pad_h * o.padded_w() * pixel;
  if (ow == 0) {
    if (oh == 0) std::fill_n(output + o.offset(n, kb, 0, 0), rim_rows, T{});
    if (oh + rows >= o.h) std::fill_n(output + o.offset(n, kb, o.pad_h + o.h, 0), rim_rows, T{});
    for (std::int64_t y = o.pad_h + oh; y < o.pad_h + oh + rows; ++y)
      std::fill_n(output + o.offset(n, kb, y, 0), o.pad_w * pixel, T{});
  }
  if (ow + cols >= o.w) {
    for (std::int64_t y = o.pad_h + oh; y < o.pad_h + oh + rows; ++y)
      std::fill_n(output + o.offset(n, kb, y, o.pad_w + o.w), o.pad_w * pixel, T{});
  }
}

}  // namespace weft::ops
