// weft-conv-bwd: backward by data of the convolution, grad_input from grad_output and the filter, on
// ThreadedLoop + BRGEMM, verified against a double-precision direct convolution.
#include <omp.h>

#include <cstdio>
#include <string>
#include <vector>

#include <weft/cli/command_line.hpp>
#include <weft/cli/run_tool.hpp>
#include <weft/jit/cpu.hpp>
#include <weft/ops/verification.hpp>

#include "conv_auto.hpp"
#include <weft/ops/conv_bwd.hpp>
#include <weft/ops/conv_reference.hpp>
#include "pass_buffer.hpp"
#include "sample_driver.hpp"

namespace {

using namespace weft::samples;
namespace ops = weft::ops;

const weft::cli::Tool kTool{
    "weft-conv-bwd",
    "usage: weft-conv-bwd LOOP_STRING N H W C K R S stride_h stride_w pad_h pad_w bc bk\n"
    "                     [h_block w_block c_block k_block h_in_gemm [n_iters]]\n"
    "                     [--threads T] [--check 0|1] [--warmup W] [--pretransposed 0|1]\n"
    "  computes grad_input (N x C x H x W) from grad_output (N x K x ofh x ofw) and the filter\n"
    "  (K x C x R x S) over a = N, b = C blocks (blocks of c_block), c = K blocks (the reduction,\n"
    "  k_block batch-reduce chunks), d = rows (step h_in_gemm, blocks of h_block rows), e = columns\n"
    "  (w_block GEMMs per row), f = R, g = S; rows and columns are grad_input's at stride 1,\n"
    "  grad_output's at larger strides\n"
    "  defaults: h_block 1, w_block 1, c_block 1, k_block 1, h_in_gemm 1, n_iters 10\n"
    "  h_in_gemm > 1 needs stride 1, w_block 1 and a 'same' convolution's row length\n"
    "  --pretransposed 1: the filter is transposed for the BRGEMMs once, before the timed runs\n"
    "  (ConvBwd::run_transposed, as when the weights change less often than the pass runs); 0\n"
    "  (default): each run transposes it (ConvBwd::run, PARLOOPER's way)\n"
    "  weft-conv-bwd auto N H W C K R S stride_h stride_w pad_h pad_w [n_iters]: the configuration\n"
    "  `weft-tune conv --pass bwd` stored for this shape and --threads (else the nearest tuned shape\n"
    "  the sample accepts, then the shipped databases', else the machine model's choice: 64-channel\n"
    "  blocks, K chunks from the L2, docs/conv_samples.md); WEFT_TUNING_DB names the database\n"
    "  USE_BF16=1 (environment)  bf16 tensors (filter tiles in VNNI-2), fp32 accumulation; bc, bk even\n"};

double milliseconds_since(double start) { return (omp_get_wtime() - start) * 1e3; }

std::size_t count(std::int64_t n) { return static_cast<std::size_t>(n); }

// Allocates, converts, runs, times and checks; every allocation happens in here.
int run_allocated(const ops::ConvBwd& bwd, const RunSettings& settings, bool pretransposed) {
  const ops::ConvBwdConfig& config = bwd.config();
  const ops::ConvShape& s = config.shape;
  const std::int64_t out_count = s.N * s.K * s.ofh() * s.ofw(), in_count = s.N * s.C * s.H * s.W;
  std::vector<float> grad_output(count(out_count)), filter(count(s.K * s.C * s.R * s.S));
  ops::fill_random(grad_output.data(), out_count, 1);
  ops::fill_random(filter.data(), s.K * s.C * s.R * s.S, 2);
  if (config.bf16()) {
    // The values the bf16 run reads, for the reference.
    ops::round_to_bf16(grad_output);
    ops::round_to_bf16(filter);
  }

  double start = omp_get_wtime();
  const PassBuffer grad_output_blocked =
      PassBuffer::activations(ops::nchw_to_blocked(grad_output.data(), bwd.grad_output_layout()), config);
  const double output_ms = milliseconds_since(start);
  start = omp_get_wtime();
  const PassBuffer filter_blocked =
      PassBuffer::filter(ops::kcrs_to_blocked(filter.data(), bwd.filter_layout()), bwd.filter_layout(), config);
  const double filter_ms = milliseconds_since(start);
  PassBuffer grad_input_blocked =
      PassBuffer::activations(std::vector<float>(count(bwd.grad_input_layout().size()), 0.0f), config);
  // The transposed filter in the pass's element type (floats hold bf16 two by two).
  std::vector<float> filter_transposed(
      count(pretransposed ? (bwd.transposed_filter_layout().size() * config.element_bytes() + 3) / 4 : 0));
  double transpose_ms = 0;
  if (pretransposed) {
    start = omp_get_wtime();
    bwd.transpose_filter(filter_blocked.data(), filter_transposed.data());
    transpose_ms = milliseconds_since(start);
  }

  const char* transposed_when = bwd.transposes_per_chunk() ? "per chunk" : "up front";
  if (pretransposed) transposed_when = "before the runs";
  std::printf("%s, h_block %lld, w_block %lld, c_block %lld, k_block %lld, h_in_gemm %lld, %s path, filter "
              "transposed %s, threads %d, isa %s\n",
              conv_header("weft-conv-bwd", config).c_str(), (long long)config.h_block, (long long)config.w_block,
              (long long)config.c_block, (long long)config.k_block, (long long)config.h_in_gemm,
              ops::to_string(bwd.path()), transposed_when, settings.threads,
              std::string(weft::jit::to_string(weft::jit::selected_isa())).c_str());
  std::printf("conversions (not timed with the kernel): grad_output NCHW -> blocked %.3f ms, filter KCRS -> "
              "blocked %.3f ms\n",
              output_ms, filter_ms);
  if (pretransposed) {
    std::printf("filter transpose (not timed with the kernel): blocked -> transposed %.3f ms\n", transpose_ms);
  }

  const auto verify = [&] {
    std::vector<float> result(count(in_count)), reference(count(in_count));
    const double back = omp_get_wtime();
    ops::blocked_to_nchw(grad_input_blocked.as_floats().data(), result.data(), bwd.grad_input_layout());
    std::printf("conversion: grad_input blocked -> NCHW %.3f ms\n", milliseconds_since(back));
    ops::conv_bwd_data_reference(s, grad_output.data(), filter.data(), reference.data());
    return Verdict{ops::compare(result.data(), reference.data(), in_count), bwd.tolerance()};
  };
  return measure_and_report(
      settings, {.run =
                     [&] {
                       if (pretransposed) {
                         bwd.run_transposed(filter_transposed.data(), grad_output_blocked.data(),
                                            grad_input_blocked.data());
                       } else {
                         bwd.run(filter_blocked.data(), grad_output_blocked.data(), grad_input_blocked.data());
                       }
                     },
                 .flops = bwd.flops(),
                 .measure_tag = bwd.measure_tag(settings.threads),
                 .verify = verify});
}

int run(int argc, char** argv) {
  ops::ConvBwdConfig config;
  SampleArgs args;
  std::int64_t pretransposed = 0;
  weft::cli::add_integer(args.app(), "--pretransposed", pretransposed, 0, 1,
                         "1: transpose the filter once, before the timed runs (run_transposed)");
  const std::size_t n_iters_index = parse_conv_bwd_arguments(args, config, argc, argv);
  const RunSettings settings = args.run_settings(n_iters_index);
  resolve_conv_auto(config, settings.threads, "weft-conv-bwd");
  const ops::ConvBwd bwd(config);  // validates everything before memory is allocated

  const ops::ConvShape& s = config.shape;
  MemoryTally memory;
  memory.add_floats({s.N, s.K, s.ofh(), s.ofw()});     // grad_output
  memory.add_floats({s.K, s.C, s.R, s.S});             // filter
  for (const ops::ActivationLayout* l : {&bwd.grad_output_layout(), &bwd.grad_input_layout()})
    memory.add_floats({l->images, l->channels.blocks(), l->padded_h(), l->padded_w(), l->channels.block});
  memory.add_floats({config.k_blocking().padded(), config.c_blocking().padded(), s.R, s.S});
  if (config.bf16()) {  // the bf16 copies of the blocked tensors, and grad_input as floats for the check
    memory.add_bytes(weft::bytes_needed({bwd.grad_output_layout().size() + bwd.grad_input_layout().size() +
                                         bwd.filter_layout().size()},
                                        2));
    memory.add_floats({bwd.grad_input_layout().size()});
  }
  if (pretransposed != 0) {
    memory.add_floats({bwd.transposed_filter_layout().size()});
  } else {
    memory.add_bytes(bwd.run_memory_bytes(settings.threads));
  }
  if (settings.check) {
    memory.add_floats({s.N, s.C, s.H, s.W});  // the result, unblocked
    memory.add_floats({s.N, s.C, s.H, s.W});  // the reference
  }
  return run_within_memory(
      conv_buffers("weft-conv-bwd", config,
                   "grad_output, filter, their blocked copies, the transposed filter, blocked grad_input",
                   settings.check),
      memory.bytes(), [&] { return run_allocated(bwd, settings, pretransposed != 0); });
}

}  // namespace

int main(int argc, char** argv) { return weft::cli::run_tool(kTool, [&] { return run(argc, argv); }); }
