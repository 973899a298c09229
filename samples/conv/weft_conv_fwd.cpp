// weft-conv-fwd: forward convolution (optional fused bias and ReLU) on ThreadedLoop<7> + BRGEMM,
// PARLOOPER's conv_model_fwd.cpp with the same arguments, verified against a double-precision
// direct convolution.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <omp.h>

#include <weft/cli/run_tool.hpp>
#include <weft/jit/cpu.hpp>
#include <weft/ops/conv_fwd.hpp>
#include <weft/ops/conv_reference.hpp>

#include "conv_auto.hpp"
#include "pass_buffer.hpp"

namespace {

using namespace weft::samples;
namespace ops = weft::ops;
using weft::ops::ConvFwd;
using weft::ops::ConvFwdConfig;

const weft::cli::Tool kTool{
    "weft-conv-fwd",
    "usage: weft-conv-fwd LOOP_STRING N H W C K R S stride_h stride_w pad_h pad_w bc bk\n"
    "                     [h_block] [w_block] [c_block] [k_block] [h_in_gemm] [pack_input] [n_iters]\n"
    "                     [logical_padding] [input_padding_copy] [pad_h_in] [pad_w_in] [pad_h_out]\n"
    "                     [pad_w_out] [zero_output_rims] [with_bias] [with_relu]\n"
    "                     [--threads T] [--check 0|1] [--warmup W]\n"
    "  LOOP_STRING  loop order/blocking/parallelization over a = images, b = C blocks, c = K blocks,\n"
    "               d = output rows, e = output columns, f = R, g = S (e.g. Afgbdced, A{C:2}C{R:2}fgbcde;\n"
    "               docs/loop_string.md); b, f and g are reductions and stay sequential\n"
    "  bc bk        channel blocks of the input and output (C and K need not be multiples)\n"
    "  h_block      block size of loop d at its outer occurrence, in rows (default 1)\n"
    "  w_block      output columns are split into w_block GEMMs (default 1)\n"
    "  c_block      C blocks are split into c_block batch-reduce chunks (default 1)\n"
    "  k_block      block size of loop c at its outer occurrence, in K blocks (default 1)\n"
    "  h_in_gemm    output rows per GEMM (stride 1 and output as wide as the input, or packed 1x1)\n"
    "  pack_input   1: strided 1x1, gather the pixels read into a dense copy first (timed)\n"
    "  n_iters      timed iterations (default 10)\n"
    "  logical_padding  1: the blocked tensors have no rims, taps outside the image are skipped\n"
    "  input_padding_copy  1 (with logical padding): copy the input into a padded scratch (timed)\n"
    "  pad_h_in pad_w_in pad_h_out pad_w_out  the rims; they follow from logical_padding (physical:\n"
    "               pad_h / pad_w, logical: 0), a contradicting value is refused\n"
    "  zero_output_rims  1: the run writes zeros into the output's rims (checked)\n"
    "  with_bias with_relu  fused into the last batch-reduce chunk\n"
    "       weft-conv-fwd auto N H W C K R S stride_h stride_w pad_h pad_w [n_iters] [options]\n"
    "  auto         the configuration `weft-tune conv --pass fwd` stored for this shape and --threads\n"
    "               (else the nearest tuned shape the sample accepts, then the shipped databases',\n"
    "               else the machine model's choice, docs/conv_samples.md); WEFT_TUNING_DB names\n"
    "               the database\n"
    "  USE_BF16=1 (environment)  bf16 tensors (filter tiles in VNNI-2), fp32 accumulation; bc even\n"};

double milliseconds_since(double start) { return (omp_get_wtime() - start) * 1e3; }

std::vector<float> random_floats(std::int64_t count, std::uint64_t seed) {
  std::vector<float> v(static_cast<std::size_t>(count));
  ops::fill_random(v.data(), count, seed);
  return v;
}

// What run_allocated allocates, for the memory check before any of it is.
std::uint64_t memory_needed(const ConvFwd& conv, bool check) {
  const ops::ConvShape& s = conv.config().shape;
  MemoryTally memory;
  memory.add_floats({s.N, s.C, s.H, s.W});            // input
  memory.add_floats({s.K, s.C, s.R, s.S});            // filter
  memory.add_floats({conv.config().k_blocking().padded()});  // bias, blocked
  memory.add_floats({s.K});                           // bias
  // Blocked copies, and in bf16 their bf16 copies (half as large) besides.
  const std::int64_t blocked = conv.input_layout().size() + conv.filter_layout().size() + conv.output_layout().size();
  memory.add_floats({blocked});
  if (conv.config().bf16()) memory.add_bytes(weft::bytes_needed({blocked}, 2));
  if (conv.config().zero_output_rims || conv.config().bf16()) memory.add_floats({conv.output_layout().size()});  // as floats
  memory.add_bytes(conv.scratch_bytes());
  if (check) {
    memory.add_floats({2, s.N, s.K, s.ofh(), s.ofw()});  // the result, unblocked, and the reference
    if (conv.config().zero_output_rims) memory.add_floats({conv.output_layout().size()});  // the reference, blocked
  }
  return memory.bytes();
}

std::string options_text(const ConvFwdConfig& c) {
  char text[400];
  std::snprintf(text, sizeof text,
                ", h_block %lld w_block %lld c_block %lld k_block %lld h_in_gemm %lld pack_input %d, %s padding%s "
                "(rims in %lld %lld out %lld %lld), zero_output_rims %d, bias %d, relu %d",
                (long long)c.h_block, (long long)c.w_block, (long long)c.c_block, (long long)c.k_block,
                (long long)c.h_in_gemm, c.pack_input, c.logical_padding ? "logical" : "physical",
                c.input_padding_copy ? " with an input copy" : "", (long long)c.pad_h_in, (long long)c.pad_w_in,
                (long long)c.pad_h_out, (long long)c.pad_w_out, c.zero_output_rims, c.with_bias, c.with_relu);
  return text;
}

// Allocates, converts, runs, times and checks; every allocation happens in here.
int run_allocated(const ConvFwd& conv, const RunSettings& settings) {
  const ConvFwdConfig& config = conv.config();
  const ops::ConvShape& s = config.shape;
  std::vector<float> input = random_floats(s.N * s.C * s.H * s.W, 1);
  std::vector<float> filter = random_floats(s.K * s.C * s.R * s.S, 2);
  std::vector<float> bias = random_floats(s.K, 3);
  if (config.bf16()) {
    // The values the bf16 run reads, for the reference.
    for (std::vector<float>* v : {&input, &filter, &bias}) ops::round_to_bf16(*v);
  }

  double start = omp_get_wtime();
  const PassBuffer input_blocked = PassBuffer::activations(ops::nchw_to_blocked(input.data(), conv.input_layout()), config);
  const double input_ms = milliseconds_since(start);
  start = omp_get_wtime();
  const PassBuffer filter_blocked =
      PassBuffer::filter(ops::kcrs_to_blocked(filter.data(), conv.filter_layout()), conv.filter_layout(), config);
  const double filter_ms = milliseconds_since(start);
  const PassBuffer bias_blocked = PassBuffer::activations(ops::blocked_bias(bias.data(), config.k_blocking()), config);
  // Not zero, as PARLOOPER's: rims the run should zero, and outputs it should write, must be.
  PassBuffer output_blocked = PassBuffer::activations(random_floats(conv.output_layout().size(), 4), config);

  std::printf("%s%s, %s mode, threads %d, isa %s\n", conv_header("weft-conv-fwd", config).c_str(),
              options_text(config).c_str(), conv.per_tap() ? "per-tap" : "batch-reduce", settings.threads,
              std::string(weft::jit::to_string(weft::jit::selected_isa())).c_str());
  std::printf("conversion: input NCHW -> blocked %.3f ms, filter KCRS -> blocked %.3f ms\n", input_ms, filter_ms);

  const auto verify = [&] {
    std::vector<float> result(static_cast<std::size_t>(s.N * s.K * s.ofh() * s.ofw())), ref(result.size());
    const double back = omp_get_wtime();
    const std::vector<float> output = output_blocked.as_floats();
    ops::blocked_to_nchw(output.data(), result.data(), conv.output_layout());
    std::printf("conversion: output blocked -> NCHW %.3f ms\n", milliseconds_since(back));
    ops::conv_fwd_reference(s, input.data(), filter.data(), config.with_bias ? bias.data() : nullptr, config.with_relu,
                            ref.data());
    const double tolerance = conv.tolerance();
    if (!config.zero_output_rims) {
      return Verdict{ops::compare(result.data(), ref.data(), static_cast<std::int64_t>(ref.size())), tolerance};
    }
    // The rims are part of the result: compare the whole blocked output with the reference's
    // blocked copy, whose rims are zero.
    std::printf("output rims: %lld elements not zero\n",
                (long long)ops::nonzero_rim_elements(output.data(), conv.output_layout()));
    const std::vector<float> ref_blocked = ops::nchw_to_blocked(ref.data(), conv.output_layout());
    return Verdict{ops::compare(output.data(), ref_blocked.data(), conv.output_layout().size()), tolerance};
  };
  const auto run = [&] {
    conv.run(input_blocked.data(), filter_blocked.data(), bias_blocked.data(), output_blocked.data());
  };
  return measure_and_report(settings, {.run = run,
                                       .flops = conv.flops(),
                                       .measure_tag = conv.measure_tag(settings.threads),
                                       .verify = verify});
}

int run(int argc, char** argv) {
  ConvFwdConfig config;
  SampleArgs args;
  const std::size_t n_iters_index = parse_conv_fwd_arguments(args, config, argc, argv);
  const RunSettings settings = args.run_settings(n_iters_index);
  resolve_conv_auto(config, settings.threads, "weft-conv-fwd");
  const ConvFwd conv(config);  // validates everything before memory is allocated
  return run_within_memory(conv_buffers("weft-conv-fwd", config, "input, filter, output, their blocked copies",
                                        settings.check),
                           memory_needed(conv, settings.check), [&] { return run_allocated(conv, settings); });
}

}  // namespace

int main(int argc, char** argv) { return weft::cli::run_tool(kTool, [&] { return run(argc, argv); }); }
