// weft-gemm: forward GEMM (C = A x B, optional fused bias and ReLU) or an MLP of n layers, on
// ThreadedLoop + BRGEMM, in FP32, bf16 or FP64, verified against a double-precision reference.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <weft/cli/run_tool.hpp>
#include <weft/jit/cpu.hpp>
#include <weft/jit/error.hpp>
#include <weft/ops/gemm_fwd.hpp>

#include "gemm_args.hpp"
#include "gemm_auto.hpp"
#include "gemm_fwd_data.hpp"

namespace {

using namespace weft::samples;
namespace ops = weft::ops;
using weft::ops::GemmFwdConfig;

const weft::cli::Tool kTool{
    "weft-gemm",
    "usage: weft-gemm LOOP_STRING M N K bm bn bk [kbf] [n_layers] [n_iters] [fuse_bias] [fuse_relu]\n"
    "                 [precision] [use_ping_pong_bufs]\n"
    "       weft-gemm auto M N K [n_layers] [n_iters] [fuse_bias] [fuse_relu]\n"
    "                 [--threads T] [--check 0|1] [--warmup W]\n"
    "                 [--k-blocks L] [--m-blocks L] [--n-blocks L]\n"
    "  LOOP_STRING  loop order/blocking/parallelization over a = K blocks, b = M blocks,\n"
    "               c = N blocks (e.g. aBC, bcaBCb; see docs/loop_string.md)\n"
    "  kbf          the K loop is split into kbf batch-reduce chunks (default 1)\n"
    "  n_layers     > 1 runs an MLP (needs M == K, bm == bk); n_iters default 10\n"
    "  precision    PARLOOPER's precision argument: FP32 (default) or BF16 (F16, BF8 and INT8 are\n"
    "               refused), or FP64 (weft's: doubles, no VNNI; MEASURE tags end in _f64);\n"
    "               USE_BF16 other than 0 in the environment also runs BF16\n"
    "  use_ping_pong_bufs  1: the layers of an MLP write two output buffers in turn; 0 (default):\n"
    "               each layer its own, as in PARLOOPER\n"
    "  --x-blocks L block sizes in blocks, outermost first (e.g. 8,2), for the repeated letters\n"
    "               of loop x; default: PARLOOPER's prime-factor rule\n"
    "  auto         loop string, blocks, tiles and kbf from the tuning database (weft-tune gemm;\n"
    "               an MLP: weft-tune gemm --layers L): this shape's best, else the nearest tuned\n"
    "               shape's, else a heuristic; in bf16 the bf16 record (weft-tune gemm --dtype bf16),\n"
    "               else the FP32 one\n"};

// [n_layers] [n_iters] [fuse_bias] [fuse_relu] from position `first` on, where both argument lines
// have them. Returns the index of n_iters.
std::size_t read_layers(const SampleArgs& args, GemmFwdConfig& c, std::size_t first) {
  c.n_layers = static_cast<int>(args.integer(first, "n_layers", 1, 1, 1000));
  c.fuse_bias = args.switch_at(first + 2, "fuse_bias");
  c.fuse_relu = args.switch_at(first + 3, "fuse_relu");
  return first + 1;
}

constexpr const char* kForm =
    "LOOP_STRING M N K bm bn bk [kbf] [n_layers] [n_iters] [fuse_bias] [fuse_relu] [precision] "
    "[use_ping_pong_bufs]";

// PARLOOPER's arguments after fuse_relu (its scripts pass "... 0 0 BF16 0"): precision (13, into
// c.dtype: parse_gemm_precision), use_ping_pong_bufs (14) and sparse_frac (15). Returns whether the
// MLP writes a ring of two output buffers.
bool parse_parlooper_tail(const SampleArgs& args, GemmFwdConfig& c) {
  const std::vector<std::string>& positional = args.positional();
  if (positional.size() > 14) {
    throw weft::Error("sparse_frac (argument 15, '" + positional[14] +
                "'): PARLOOPER ran a sparse A through decompressing kernels here, which weft-gemm does "
                "not have; nothing was run. Drop the argument for a dense GEMM");
  }
  parse_gemm_precision(args, c, 12, "weft-gemm");
  return args.switch_at(13, "use_ping_pong_bufs");
}

// Fills `c` from the command line; returns the index of n_iters among the positional arguments.
std::size_t config_from(SampleArgs& args, GemmFwdConfig& c, int argc, char** argv) {
  parse_gemm_arguments(args, c, argc, argv, 15, kForm);
  // auto M N K [n_layers] ...: the positions after K shift, since the tuner picks the tiles.
  if (parse_auto_shape(args, c, 8, "auto M N K [n_layers] [n_iters] [fuse_bias] [fuse_relu]"))
    return read_layers(args, c, 4);
  c.kbf = args.integer(7, "kbf", 1);
  return read_layers(args, c, 8);
}

// Allocates (GemmFwdData), runs, times and checks. T is the precision's type.
template <class T>
int run_allocated(const ops::GemmFwd& gemm, bool ring_buffer, const RunSettings& settings) {
  const GemmFwdData<T> data(gemm, ring_buffer);
  const GemmFwdConfig& config = gemm.config();
  const int n_outputs = data.output_buffers();
  std::printf("%s, kbf %lld (%lld K blocks per batch reduce), layers %d (%d output buffer%s), bias %d, relu %d, "
              "threads %d, isa %s\n",
              gemm_header("weft-gemm", config).c_str(), (long long)config.kbf, (long long)gemm.k_step(),
              config.n_layers, n_outputs, n_outputs == 1 ? "" : "s", config.fuse_bias, config.fuse_relu,
              settings.threads, std::string(weft::jit::to_string(weft::jit::selected_isa())).c_str());
  return measure_and_report(settings, {.run = [&] { data.run(); },
                                       .flops = gemm.flops(),
                                       .measure_tag = gemm.measure_tag(settings.threads),
                                       .verify = [&] { return data.check(); }});
}

int run(int argc, char** argv) {
  GemmFwdConfig config;
  SampleArgs args;
  const std::size_t n_iters_index = config_from(args, config, argc, argv);
  const bool ring_buffer = config.loop_string != "auto" && parse_parlooper_tail(args, config);
  const RunSettings settings = args.run_settings(n_iters_index);
  resolve_gemm_auto(config, settings.threads, "weft-gemm");

  const ops::GemmFwd gemm(config);  // validates everything before memory is allocated
  const std::string layers = config.n_layers > 1 ? ", " + std::to_string(config.n_layers) + " layers" : "";
  // The precision's element type, as a value to dispatch on.
  const auto in_precision = [&](auto&& f) {
    if (config.bf16()) return f(ops::bfloat16{});
    if (config.f64()) return f(double{});
    return f(float{});
  };
  const std::uint64_t bytes =
      in_precision([&]<class T>(T) { return GemmFwdData<T>::bytes(gemm, ring_buffer, settings.check); });
  return run_within_memory(gemm_buffers("weft-gemm", config, layers, "A, B, C, their blocked copies", settings.check),
                           bytes, [&] {
                             return in_precision([&]<class T>(T) { return run_allocated<T>(gemm, ring_buffer, settings); });
                           });
}

}  // namespace

int main(int argc, char** argv) { return weft::cli::run_tool(kTool, [&] { return run(argc, argv); }); }
