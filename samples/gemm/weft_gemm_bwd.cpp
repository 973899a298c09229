// weft-gemm-bwd: backward by data, dX = W^T x dY, on ThreadedLoop + BRGEMM, in FP32, bf16 or FP64,
// verified against a double-precision reference.
#include <cstdio>
#include <string>

#include <weft/cli/run_tool.hpp>
#include <weft/ops/gemm_bwd.hpp>

#include "gemm_args.hpp"
#include "gemm_auto.hpp"
#include "gemm_pass.hpp"

namespace {

using namespace weft::samples;
namespace ops = weft::ops;

const weft::cli::Tool kTool{
    "weft-gemm-bwd",
    "usage: weft-gemm-bwd LOOP_STRING M N K bm bn bk [mbf] [private_trans] [n_iters] [precision]\n"
    "       weft-gemm-bwd auto M N K [n_iters]\n"
    "                     [--threads T] [--check 0|1] [--warmup W]\n"
    "                     [--k-blocks L] [--m-blocks L] [--n-blocks L]\n"
    "  computes dX (K x N) = W^T (K x M) x dY (M x N) over a = K blocks, b = M blocks (the\n"
    "  reduction, split into mbf batch-reduce chunks), c = N blocks\n"
    "  private_trans 1: each thread transposes W on first use (default 0: up front)\n"
    "  precision    FP32 (default), BF16 (as USE_BF16=1) or FP64 (weft's: doubles, no VNNI; MEASURE\n"
    "               tags end in _f64), as weft-gemm's precision argument (F16, BF8, INT8 refused)\n"
    "  auto         loop string, blocks, tiles, mbf and private_trans from the tuning database\n"
    "               (weft-tune gemm --pass bwd): this shape's best, else the nearest tuned\n"
    "               shape's, else the defaults (aBC, 32-cubed tiles, one chunk); in bf16 the bf16\n"
    "               record (weft-tune gemm --pass bwd --dtype bf16), else the FP32 one\n"
    "  USE_BF16=1 in the environment: bf16 (W in the forward's VNNI-2 tiles, transposed into\n"
    "  VNNI-2 along M inside the timed run; bm and bk even)\n"};

int run(int argc, char** argv) {
  ops::GemmBwdConfig config;
  SampleArgs args;
  parse_gemm_arguments(args, config, argc, argv, 11,
                       "LOOP_STRING M N K bm bn bk [mbf] [private_trans] [n_iters] [precision]");
  const bool tuned = parse_auto_shape(args, config, 5, "auto M N K [n_iters]");
  if (!tuned) {
    config.mbf = args.integer(7, "mbf", 1);
    config.private_trans = args.switch_at(8, "private_trans");
    parse_gemm_precision(args, config, 10, "weft-gemm-bwd");
  }
  const RunSettings settings = args.run_settings(tuned ? 4 : 9);
  resolve_gemm_auto(config, settings.threads, "weft-gemm-bwd");
  const ops::GemmBwd bwd(config);  // validates everything before memory is allocated
  const char* const transposes = config.private_trans ? "private" : "up-front";
  return run_gemm_pass(
      bwd, settings,
      gemm_buffers("weft-gemm-bwd", config, "",
                   std::string("W, dY, dX, their blocked copies, W^T") + (config.private_trans ? " per thread" : ""),
                   settings.check),
      gemm_header("weft-gemm-bwd", config) + ", mbf " + std::to_string(config.mbf) + ", " + transposes +
          " transposes, threads " + std::to_string(settings.threads) + "\n");
}

}  // namespace

int main(int argc, char** argv) { return weft::cli::run_tool(kTool, [&] { return run(argc, argv); }); }
