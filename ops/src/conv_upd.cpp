#include <weft/ops/conv_upd.hpp>

#include <omp.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <utility>

#include <weft/jit/error.hpp>
#include <weft/ops/element_type.hpp>
#include <weft/ops/block_loops.hpp>
#include <weft/ops/verification.hpp>
#include <weft/parlooper/loop_string.hpp>

namespace weft::ops {
namespace {

constexpr int kLoops = 7;
// The loops whose iterations add into the same grad_filter tile: images, output rows, columns.
constexpr int kImages = 0, kRows = 3, kColumns = 4;

bool is_reduction(int loop) { return loop == kImages || loop == kRows || loop == kColumns; }
char letter(int loop) { return static_cast<char>('a' + loop); }

const ConvUpdConfig& validated(const ConvUpdConfig& c) {
  c.validate();
  const std::int64_t ofh = c.shape.ofh();
  if (c.h_in_gemm < 0 || c.h_in_gemm > ofh) {
    throw Error("h_in_gemm (output rows per BRGEMM) must be in [1, ofh = " + std::to_string(ofh) +
                "], or 0 for the automatic choice; got " + std::to_string(c.h_in_gemm));
  }
  for (const auto& [name, rim] : {std::pair{"pad_h_out", c.pad_h_out}, std::pair{"pad_w_out", c.pad_w_out}}) {
    if (rim < 0 || rim > 4096) {
      throw Error(std::string(name) + " (grad_output's rim) must be in [0, 4096], got " + std::to_string(rim));
    }
  }
  return c;
}

// The body relies on the loops covering their whole ranges with the steps given here; inline
// bounds in the string (`d[0,8,]`) would move them, inline block sizes (`d[,,,(4)]`) do not.
parlooper::LoopNest parsed_nest(const std::string& loop_string) {
  parlooper::LoopNest nest = parlooper::parse_loop_string(loop_string, kLoops);
  for (const parlooper::InlineSpec& spec : nest.inline_specs) {
    if (spec.has_start || spec.has_end || spec.has_step) {
      throw Error("loop string '" + loop_string + "': loop '" + letter(spec.loop) +
                  "' has inline bounds (start, end or step); the convolution's loops cover their whole "
                  "ranges, so only inline block sizes are accepted, as in " + letter(spec.loop) + "[,,,(4)]");
    }
  }
  return nest;
}

// Whether threads share out the level's iterations (a grid dimension of one way gives every thread all of them).
bool is_split(const parlooper::LoopLevel& level) {
  return level.par == parlooper::ParKind::collapse || (level.par != parlooper::ParKind::none && level.ways > 1);
}

bool is_split(const parlooper::LoopNest& nest, int loop) {
  return std::any_of(nest.levels.begin(), nest.levels.end(),
                     [&](const parlooper::LoopLevel& level) { return level.loop == loop && is_split(level); });
}

std::int64_t chosen_rows(const ConvUpdConfig& c, const parlooper::LoopNest& nest) {
  if (c.h_in_gemm > 0) return c.h_in_gemm;
  return is_split(nest, kRows) ? 1 : c.shape.ofh();
}

// Why two threads could add into the same grad_filter tile, or "" when none can: a reduction loop
// (of more than one iteration) split among threads, or one that encloses a work-shared run whose
// schedule may hand a tile to another thread on its next entry.
std::string sharing(const parlooper::LoopNest& nest, const std::array<std::int64_t, kLoops>& iterations) {
  for (const parlooper::LoopLevel& level : nest.levels) {
    if (is_split(level) && is_reduction(level.loop) && iterations[level.loop] > 1) {
      return std::string("the reduction loop '") + letter(level.loop) + "' (" +
             std::to_string(iterations[level.loop]) + " iterations) is split among threads";
    }
  }
  if (nest.has_run() && nest.schedule.kind != parlooper::ScheduleKind::static_) {
    for (int l = 0; l < nest.run_begin; ++l) {
      const int loop = nest.levels[static_cast<std::size_t>(l)].loop;
      if (is_reduction(loop) && iterations[loop] > 1) {
        return std::string("the reduction loop '") + letter(loop) +
               "' encloses the work-shared loops, whose schedule is not static: a tile may go to another "
               "thread on the next iteration of '" + letter(loop) + "'";
      }
    }
  }
  return "";
}

std::array<std::int64_t, kLoops> trips(const ConvShape& s, std::int64_t c_blocks, std::int64_t k_blocks) {
  return {s.N, c_blocks, k_blocks, s.ofh(), s.ofw(), s.R, s.S};
}

// Copies of grad_filter run() needs: one per thread when threads could share tiles, else none.
std::int64_t partial_copies(const ConvUpdConfig& c, const parlooper::LoopNest& nest, std::int64_t rows, int team) {
  const std::array<std::int64_t, kLoops> iterations = {c.shape.N, 1, 1, (c.shape.ofh() + rows - 1) / rows, 1, 1, 1};
  const std::string reason = sharing(nest, iterations);
  if (reason.empty() || team == 1) return 0;
  if (!c.use_mb_par_f32) {
    throw Error("loop string '" + c.loop_string + "' with use_mb_par_f32 0 on " + std::to_string(team) +
                " threads: " + reason + ", so threads would add into the same grad_filter tiles at once. "
                "Use use_mb_par_f32 1 (a partial filter per thread, added up at the end), or keep a, d and e "
                "lower case (and the schedule static)");
  }
  return team;
}

// fp32: B is the input pixels read in place, transposed. bf16: both operands as UpdOperands lays
// them out (B plain, A in VNNI-2), the sums in fp32.
tpp::BrgemmDesc kernel_desc(const ConvUpdConfig& c, const std::optional<UpdOperands>& bf16, int beta) {
  tpp::BrgemmDesc d;
  d.m = static_cast<std::int32_t>(c.bk);
  d.n = static_cast<std::int32_t>(c.bc);
  d.lda = c.bk;
  d.ldc = c.bk;
  d.beta = beta;
  if (bf16) {
    d.k = static_cast<std::int32_t>(bf16->pixels());
    d.ldb = bf16->wq();
    d.types = {.in = jit::DataType::bf16, .out = jit::DataType::f32, .compute = jit::DataType::f32};
  } else {
    d.k = static_cast<std::int32_t>(c.shape.ofw());
    d.ldb = c.shape.stride_w * c.bc;
    d.b_transposed = true;
  }
  return d;
}

// The fp32 operands: the blocked tensors read in place, B transposed (the interface UpdOperands has).
struct Fp32Operands {
  const float* input;
  const float* grad_output;
  ActivationLayout in, out;
  std::int64_t stride_h;

  const float* grad_output_row(std::int64_t n, std::int64_t kb, std::int64_t y) const {
    return grad_output + out.offset(n, kb, y + out.pad_h, out.pad_w);
  }
  const float* input_tap(std::int64_t n, std::int64_t cb, std::int64_t y, std::int64_t r, std::int64_t s) const {
    return input + in.offset(n, cb, y * stride_h + r, s);
  }
  std::int64_t a_row() const { return out.padded_w() * out.channels.block; }
  std::int64_t b_rows() const { return stride_h * in.padded_w() * in.channels.block; }
  std::int64_t batch(std::int64_t y, std::int64_t rows) const { return std::min(rows, out.h - y); }
};

// A 1x1 convolution of stride 1 without padding may read an image's pixels as one row (the blocked
// layouts are the same bytes): with an odd row length (7 x 7 on ResNet-50's last stage) each row
// pairs its last pixel with a zero one (1 product in 8 wasted), one row of 49 pixels wastes 1 in 50
// (measured on 7 x 7, 512 -> 2048, one thread, Zen 4: 154 -> 174 GFLOPS). Only when one BRGEMM
// takes all rows anyway (the default rows per BRGEMM), so that the loops stay as the string says.
bool merges_rows(const ConvUpdConfig& c, std::int64_t rows) {
  const ConvShape& s = c.shape;
  return s.R == 1 && s.S == 1 && s.stride_h == 1 && s.stride_w == 1 && s.pad_h == 0 && s.pad_w == 0 &&
         c.pad_h_out == 0 && c.pad_w_out == 0 && s.ofw() % 2 != 0 && s.ofh() > 1 && rows == s.ofh();
}

std::optional<UpdOperands> bf16_operands(const ConvUpdConfig& c, std::int64_t rows, ActivationLayout input,
                                        ActivationLayout grad_output, const FilterLayout& filter, PassCode code) {
  if (!c.bf16()) return std::nullopt;
  ConvShape shape = c.shape;
  if (merges_rows(c, rows)) {
    shape.W *= shape.H;
    shape.H = 1;
    input.w *= input.h;
    input.h = 1;
    grad_output.w *= grad_output.h;
    grad_output.h = 1;
  }
  return std::make_optional<UpdOperands>(shape, input, grad_output, filter, code);
}

}  // namespace

void ConvUpd::check(const ConvUpdConfig& config) { [[maybe_unused]] const ConvUpd checked(config, PassCode::check); }

ConvUpd::ConvUpd(ConvUpdConfig config, PassCode code)
    : config_(validated(config)),
      team_(omp_get_max_threads()),
      rows_(chosen_rows(config_, parsed_nest(config_.loop_string))),
      loop_(make_loop<kLoops>(block_nest_specs<kLoops>(trips(config_.shape, config_.c_blocking().blocks(),
                                                             config_.k_blocking().blocks()),
                                                       {1, 1, 1, rows_, config_.shape.ofw(), 1, 1}, {}),
                              config_.loop_string, code)),
      operands_(bf16_operands(config_, rows_, input_layout(), grad_output_layout(), filter_layout(), code)),
      first_touch_(make_kernel<tpp::Brgemm>(kernel_desc(config_, operands_, 0), code)),
      accumulate_(make_kernel<tpp::Brgemm>(kernel_desc(config_, operands_, 1), code)),
      partial_filters_(config_.bc * config_.bk, filter_layout().size() / (config_.bc * config_.bk),
                       partial_copies(config_, parsed_nest(config_.loop_string), rows_, team_), code) {}

ActivationLayout ConvUpd::input_layout() const {
  const ConvShape& s = config_.shape;
  return {.images = s.N, .channels = config_.c_blocking(), .h = s.H, .w = s.W, .pad_h = s.pad_h, .pad_w = s.pad_w};
}

ActivationLayout ConvUpd::grad_output_layout() const {
  const ConvShape& s = config_.shape;
  return {.images = s.N, .channels = config_.k_blocking(), .h = s.ofh(), .w = s.ofw(), .pad_h = config_.pad_h_out,
          .pad_w = config_.pad_w_out};
}

FilterLayout ConvUpd::filter_layout() const {
  return {.k = config_.k_blocking(), .c = config_.c_blocking(), .r = config_.shape.R, .s = config_.shape.S};
}

double ConvUpd::tolerance() const {
  return sum_tolerance(reduction_length()) + (config_.bf16() ? 0x1p-8 : 0.0);
}

std::int64_t ConvUpd::reduction_length() const { return config_.shape.N * config_.shape.ofh() * config_.shape.ofw(); }

void ConvUpd::run(const void* input, const void* grad_output, void* grad_filter) const {
  run_into(input, grad_output, grad_filter, FilterType::config);
}

void ConvUpd::run(const jit::bfloat16* input, const jit::bfloat16* grad_output, float* grad_filter) const {
  require_buffers_of<jit::bfloat16>(config_.dtype, "ConvUpd::run");
  run_into(input, grad_output, grad_filter, FilterType::f32);
}

void ConvUpd::run_into(const void* input, const void* grad_output, void* grad_filter, FilterType filter_type) const {
  require_buffers("ConvUpd::run", {{"input", input}, {"grad_output", grad_output}, {"grad_filter", grad_filter}});
  if (omp_in_parallel()) {
    throw Error("ConvUpd::run inside an OpenMP parallel region: it opens its own (its partial filters are shared "
                "by the team it starts)");
  }
  if (omp_get_max_threads() > team_) {
    throw Error("ConvUpd::run on " + std::to_string(omp_get_max_threads()) + " threads, but it was built for " +
                std::to_string(team_) + " (its race checks and partial filters count on them): build it with "
                "the team it runs on");
  }
  if (operands_) {
    operands_->prepare(input, grad_output);
    accumulate(*operands_, operands_->accumulator());
    if (filter_type == FilterType::f32) {
      operands_->finish_f32(static_cast<float*>(grad_filter));
    } else {
      operands_->finish(grad_filter);
    }
  } else {
    accumulate(Fp32Operands{static_cast<const float*>(input), static_cast<const float*>(grad_output),
                            input_layout(), grad_output_layout(), config_.shape.stride_h},
               static_cast<float*>(grad_filter));
  }
}

template <class Operands>
void ConvUpd::accumulate(const Operands& operands, float* grad_filter) const {
  const FilterLayout filter = filter_layout();
  const std::int64_t rows = rows_;
  const bool partial = uses_partial_filters();
  if (partial) partial_filters_.start(grad_filter);

  (*loop_)([&](int* ind) {
    const std::int64_t n = ind[0], cb = ind[1], kb = ind[2], h = ind[3], r = ind[5], s = ind[6];
    tpp::BrgemmArgs args;
    args.a = operands.grad_output_row(n, kb, h);
    args.b = operands.input_tap(n, cb, h, r, s);
    args.count = operands.batch(h, rows);
    args.stride_a = operands.a_row();
    args.stride_b = operands.b_rows();
    bool first = n == 0 && h == 0;
    if (partial) {
      const std::int64_t tile = ((kb * filter.c.blocks() + cb) * filter.r + r) * filter.s + s;
      args.c = partial_filters_.tile(parlooper::ThreadedLoop<kLoops>::get_tid(ind), tile, first);
    } else {
      args.c = grad_filter + filter.offset(kb, cb, r, s);
    }
    (first ? *first_touch_ : *accumulate_)(args);
  });
  if (partial) partial_filters_.reduce();
}

std::string ConvUpd::measure_tag(int threads) const {
  return config_.loop_string + "_hg=" + std::to_string(rows_) + "_mbpar=" + (config_.use_mb_par_f32 ? "1" : "0") +
         "_threads" + std::to_string(threads) + (config_.bf16() ? "_bf16" : "");
}

}  // namespace weft::ops
