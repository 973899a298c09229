// weft-gemm-upd: backward by weights, dW = dY x X^T, on ThreadedLoop + BRGEMM (+ partial filters
// and a reduction TPP), in FP32, bf16 or FP64, verified against a double-precision reference.
#include <cstdio>
#include <string>

#include <weft/cli/run_tool.hpp>
#include <weft/ops/gemm_upd.hpp>

#include "gemm_args.hpp"
#include "gemm_auto.hpp"
#include "gemm_pass.hpp"

namespace {

using namespace weft::samples;
namespace ops = weft::ops;

const weft::cli::Tool kTool{
    "weft-gemm-upd",
    "usage: weft-gemm-upd LOOP_STRING M N K bm bn bk [nbf] [private_trans] [n_partial_filters] [n_iters]\n"
    "                     [precision]\n"
    "       weft-gemm-upd auto M N K [n_iters]\n"
    "                     [--threads T] [--check 0|1] [--warmup W]\n"
    "                     [--k-blocks L] [--m-blocks L] [--n-blocks L]\n"
    "  computes dW (M x K) = dY (M x N) x X^T (N x K) over a = K blocks, b = M blocks, c = N blocks\n"
    "  (the reduction, split into nbf batch-reduce chunks)\n"
    "  private_trans 1: each thread transposes X on first use (default 0: up front)\n"
    "  n_partial_filters P > 0 with a parallel c: thread p along c accumulates into copy p of dW,\n"
    "  summed at the end (P must be >= the parallel degree of c)\n"
    "  precision    FP32 (default), BF16 (as USE_BF16=1) or FP64 (weft's: doubles, no VNNI; MEASURE\n"
    "               tags end in _f64), as weft-gemm's precision argument (F16, BF8, INT8 refused)\n"
    "  auto         loop string, blocks, tiles, nbf and private_trans from the tuning database\n"
    "               (weft-tune gemm --pass upd), P the parallel degree of c: this shape's best,\n"
    "               else the nearest tuned shape's, else the defaults (aBC, 32-cubed tiles); in\n"
    "               bf16 the bf16 record (weft-tune gemm --pass upd --dtype bf16), else the FP32 one\n"
    "  USE_BF16=1 in the environment: bf16 (dY repacked in VNNI-2 along N, dW written in the\n"
    "  weights' VNNI-2 tiles, inside the timed run; bn and bk even)\n"};

int run(int argc, char** argv) {
  ops::GemmUpdConfig config;
  SampleArgs args;
  parse_gemm_arguments(args, config, argc, argv, 12,
                       "LOOP_STRING M N K bm bn bk [nbf] [private_trans] [n_partial_filters] [n_iters] [precision]");
  const bool tuned = parse_auto_shape(args, config, 5, "auto M N K [n_iters]");
  if (!tuned) {
    config.nbf = args.integer(7, "nbf", 1);
    config.private_trans = args.switch_at(8, "private_trans");
    config.n_partial_filters = args.integer(9, "n_partial_filters", 0, 0, 4096);
    parse_gemm_precision(args, config, 11, "weft-gemm-upd");
  }
  const RunSettings settings = args.run_settings(tuned ? 4 : 10);
  resolve_gemm_auto(config, settings.threads, "weft-gemm-upd");
  const ops::GemmUpd upd(config);  // validates everything before memory is allocated
  const bool partial = upd.uses_partial_filters();
  const std::string buffers = std::string("dY, X, dW, their blocked copies, X^T") +
                              (config.private_trans ? " per thread" : "") + (partial ? ", partial filters" : "");
  return run_gemm_pass(upd, settings, gemm_buffers("weft-gemm-upd", config, "", buffers, settings.check),
                       gemm_header("weft-gemm-upd", config) + ", nbf " + std::to_string(config.nbf) + ", " +
                           (config.private_trans ? "private" : "up-front") + " transposes, partial filters " +
                           std::to_string(config.n_partial_filters) +
                           (partial ? "" : " (unused: c is not parallel)") + ", threads " +
                           std::to_string(settings.threads) + "\n");
}

}  // namespace

int main(int argc, char** argv) { return weft::cli::run_tool(kTool, [&] { return run(argc, argv); }); }
