// weft-conv-upd: backward by weights of a convolution (PARLOOPER's conv_model_upd, FP32 or bf16) on
// ThreadedLoop<7> + BRGEMM, verified against a double-precision direct convolution.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <weft/cli/command_line.hpp>
#include <weft/cli/run_tool.hpp>
#include <weft/jit/cpu.hpp>
#include <weft/ops/conv_layout.hpp>
#include <weft/ops/conv_reference.hpp>
#include <weft/ops/conv_upd.hpp>

#include "conv_args.hpp"
#include "conv_auto.hpp"
#include "pass_buffer.hpp"
#include "sample_driver.hpp"

namespace {

using namespace weft::samples;
namespace ops = weft::ops;

constexpr const char* kForm = "LOOP_STRING N H W C K R S stride_h stride_w pad_h pad_w bc bk [n_iters] [use_mb_par_f32]";
// PARLOOPER's FP32 run reads its arguments up to use_mb_par_f32; the bf16 run reads
// bf16_use_nchw_format at that position and 12 knobs after it.
constexpr std::size_t kPositional = 16;

const weft::cli::Tool kTool{
    "weft-conv-upd",
    std::string("usage: weft-conv-upd ") + kForm +
        "\n"
        "                     [--threads T] [--check 0|1] [--warmup W] [--h-in-gemm H]\n"
        "  computes grad_filter (K x C x R x S) from input (N x C x H x W) and grad_output (N x K x ofh x ofw)\n"
        "  over PARLOOPER's loops a = N, b = C blocks, c = K blocks, d = output rows, e = output columns\n"
        "  (one step of ofw), f = R, g = S; a, d and e are the reduction. Each body call is one BRGEMM\n"
        "  batched over --h-in-gemm output rows (default: all of them, 1 when the string parallelizes d)\n"
        "  n_iters: timed runs (default 10)\n"
        "  use_mb_par_f32 1 (default): a string that splits a, d or e among threads accumulates into a\n"
        "  partial filter per thread, added up at the end of each run; 0: such strings are refused\n"
        "  physical padding (zero rims in the blocked input); C and K need not be multiples of bc and bk\n"
        "  USE_BF16=1 (environment): bf16 input and grad_output, grad_filter in bf16 as the forward pass\n"
        "  takes it (VNNI-2 tiles), fp32 sums; bc even. Argument 16 is then PARLOOPER's\n"
        "  bf16_use_nchw_format (0 only: the blocked layouts) and use_mb_par_f32 stays 1; PARLOOPER's bf16\n"
        "  knobs (arguments 17 to 28) are refused\n"
        "       weft-conv-upd auto N H W C K R S stride_h stride_w pad_h pad_w [n_iters] [options]\n"
        "  auto: the configuration `weft-tune conv --pass upd` stored for this shape and --threads (else\n"
        "  the nearest tuned shape the sample accepts, then the shipped databases', else the machine\n"
        "  model's choice, docs/conv_samples.md); WEFT_TUNING_DB names the database\n"};

bool tuned(const SampleArgs& args) { return !args.positional().empty() && args.positional()[0] == "auto"; }

// Returns the position of n_iters.
std::size_t parse_arguments(SampleArgs& args, ops::ConvUpdConfig& config, int argc, char** argv) {
  weft::cli::add_integer(args.app(), "--h-in-gemm", config.h_in_gemm, 0, ops::kMaxExtent,
                         "output rows per BRGEMM (0: all, or 1 when d is parallel)");
  parse_conv_arguments(args, config, argc, argv, SIZE_MAX, kForm);
  if (tuned(args)) {  // the tuned configuration (conv_auto.hpp): only the shape and n_iters
    args.require_at_most(kConvAutoIters + 1, kConvAutoForm);
    return kConvAutoIters;
  }
  const auto& positional = args.positional();
  if (positional.size() > kPositional) {
    throw UsageError("unexpected argument '" + positional[kPositional] + "' (argument " +
                     std::to_string(kPositional + 1) + "): PARLOOPER's arguments 17 to 28 are bf16 tuning knobs "
                     "(bf16_fuse_upd_transposes ... logical_padding), which weft's update does not take (its "
                     "bf16 run lays out its operands one way, upd_operands.hpp); " + kForm);
  }
  if (config.bf16()) {  // PARLOOPER's bf16 run reads bf16_use_nchw_format here
    if (args.integer(15, "bf16_use_nchw_format", 0, 0, 1) != 0) {
      throw UsageError("bf16_use_nchw_format 1 (argument 16 with USE_BF16): weft's bf16 update reads the blocked "
                       "layouts only; give 0");
    }
    return 14;
  }
  config.use_mb_par_f32 = args.integer(15, "use_mb_par_f32", 1, 0, 1) != 0;
  return 14;
}

std::vector<float> random_floats(std::int64_t count, std::uint64_t seed) {
  std::vector<float> v(static_cast<std::size_t>(count));
  ops::fill_random(v.data(), count, seed);
  return v;
}

double milliseconds(const std::function<void()>& fn) { return 1e3 * seconds_per_call(fn, 0, 1); }

int run(int argc, char** argv) {
  ops::ConvUpdConfig config;
  SampleArgs args;
  const std::size_t n_iters_index = parse_arguments(args, config, argc, argv);
  const RunSettings settings = args.run_settings(n_iters_index);
  resolve_conv_auto(config, settings.threads, "weft-conv-upd");
  const ops::ConvUpd upd(config);  // validates everything before memory is allocated
  const ops::ConvShape& s = config.shape;
  const ops::ActivationLayout in_layout = upd.input_layout(), out_layout = upd.grad_output_layout();
  const ops::FilterLayout filter_layout = upd.filter_layout();
  const std::int64_t filter_floats = s.K * s.C * s.R * s.S;

  MemoryTally memory;
  memory.add_floats({s.N, s.C, s.H, s.W});          // input, NCHW
  memory.add_floats({s.N, s.K, s.ofh(), s.ofw()});  // grad_output, NCHW
  memory.add_floats({in_layout.size()});
  memory.add_floats({out_layout.size()});
  memory.add_floats({filter_layout.size()});
  memory.add_floats({filter_floats});  // grad_filter, KCRS
  if (config.bf16()) memory.add_bytes(weft::bytes_needed({in_layout.size() + out_layout.size() + filter_layout.size()}, 2));
  memory.add_bytes(upd.run_memory_bytes());
  if (settings.check) memory.add_floats({filter_floats});  // the reference
  const bool partial = upd.uses_partial_filters();
  const std::string buffers = std::string("input, grad_output, grad_filter, their blocked copies") +
                              (partial ? ", a partial filter per thread" : "") +
                              (config.bf16() ? ", the bf16 BRGEMMs' operands" : "");

  return run_within_memory(conv_buffers("weft-conv-upd", config, buffers, settings.check), memory.bytes(), [&] {
    std::vector<float> input = random_floats(s.N * s.C * s.H * s.W, 1);
    std::vector<float> grad_output = random_floats(s.N * s.K * s.ofh() * s.ofw(), 2);
    if (config.bf16()) {  // the values the bf16 run reads, for the reference
      ops::round_to_bf16(input);
      ops::round_to_bf16(grad_output);
    }
    std::optional<PassBuffer> input_blocked, grad_output_blocked;
    std::vector<float> grad_filter_blocked(static_cast<std::size_t>(filter_layout.size()));
    std::vector<weft::jit::bfloat16> grad_filter_bf16(config.bf16() ? grad_filter_blocked.size() : 0);
    std::vector<float> grad_filter(static_cast<std::size_t>(filter_floats));
    const double to_blocked_in = milliseconds(
        [&] { input_blocked = PassBuffer::activations(ops::nchw_to_blocked(input.data(), in_layout), config); });
    const double to_blocked_out = milliseconds([&] {
      grad_output_blocked = PassBuffer::activations(ops::nchw_to_blocked(grad_output.data(), out_layout), config);
    });
    const double to_kcrs =
        milliseconds([&] { ops::blocked_to_kcrs(grad_filter_blocked.data(), grad_filter.data(), filter_layout); });
    std::printf("%s, h_in_gemm %lld, use_mb_par_f32 %d (%s), threads %d, isa %s\n",
                conv_header("weft-conv-upd", config).c_str(), static_cast<long long>(upd.rows_per_gemm()),
                config.use_mb_par_f32 ? 1 : 0,
                partial ? "a partial filter per thread, reduced in each run" : "accumulating into grad_filter",
                settings.threads, std::string(weft::jit::to_string(weft::jit::selected_isa())).c_str());
    std::printf("layout conversions (once, outside the timing): input NCHW -> blocked %.3f ms, grad_output NCHW "
                "-> blocked %.3f ms, grad_filter blocked -> KCRS %.3f ms\n",
                to_blocked_in, to_blocked_out, to_kcrs);
    void* out = config.bf16() ? static_cast<void*>(grad_filter_bf16.data()) : grad_filter_blocked.data();
    const auto verify = [&] {
      std::vector<float> reference(static_cast<std::size_t>(filter_floats));
      ops::conv_bwd_weights_reference(s, input.data(), grad_output.data(), reference.data());
      if (config.bf16()) grad_filter_blocked = ops::vnni2_to_filter(grad_filter_bf16.data(), filter_layout);
      ops::blocked_to_kcrs(grad_filter_blocked.data(), grad_filter.data(), filter_layout);
      return Verdict{ops::compare(grad_filter.data(), reference.data(), filter_floats), upd.tolerance()};
    };
    return measure_and_report(settings, {.run = [&] { upd.run(input_blocked->data(), grad_output_blocked->data(), out); },
                                         .flops = upd.flops(),
                                         .measure_tag = upd.measure_tag(settings.threads),
                                         .verify = verify});
  });
}

}  // namespace

int main(int argc, char** argv) { return weft::cli::run_tool(kTool, [&] { return run(argc, argv); }); }
