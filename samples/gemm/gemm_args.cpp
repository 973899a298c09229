#include "gemm_args.hpp"

#include <weft/cli/command_line.hpp>
#include <weft/jit/error.hpp>
#include <weft/ops/element_type.hpp>

namespace weft::samples {
namespace {

using weft::ops::GemmLoops;

std::string sizes(std::int64_t a, std::int64_t b, std::int64_t c) {
  return std::to_string(a) + " x " + std::to_string(b) + " x " + std::to_string(c);
}

}  // namespace

void parse_gemm_arguments(SampleArgs& args, GemmLoops& loops, int argc, char** argv, std::size_t max,
                          const char* form) {
  loops.dtype = bf16_requested() ? jit::DataType::bf16 : jit::DataType::f32;
  const char* const what = "block sizes in blocks, outermost first";
  cli::add_integer_list(args.app(), "--k-blocks", loops.k_blocks, 1, INT32_MAX, what);
  cli::add_integer_list(args.app(), "--m-blocks", loops.m_blocks, 1, INT32_MAX, what);
  cli::add_integer_list(args.app(), "--n-blocks", loops.n_blocks, 1, INT32_MAX, what);
  args.parse(argc, argv);
  if (!args.positional().empty() && args.positional()[0] == "auto") return;
  args.require_at_most(max, form);
  args.require({"LOOP_STRING", "M", "N", "K", "bm", "bn", "bk"},
               "; the first seven arguments are LOOP_STRING M N K bm bn bk");
  loops.loop_string = args.positional()[0];
  loops.M = args.integer(1, "M", 0);
  loops.N = args.integer(2, "N", 0);
  loops.K = args.integer(3, "K", 0);
  loops.bm = args.integer(4, "bm", 0, 1, 4096);
  loops.bn = args.integer(5, "bn", 0, 1, 4096);
  loops.bk = args.integer(6, "bk", 0, 1, 4096);
}

bool parse_auto_shape(const SampleArgs& args, GemmLoops& loops, std::size_t max, const char* form) {
  if (args.positional().empty() || args.positional()[0] != "auto") return false;
  args.require({"auto", "M", "N", "K"}, ": auto needs M N K");
  args.require_at_most(max, form);
  loops.loop_string = "auto";
  loops.M = args.integer(1, "M", 0);
  loops.N = args.integer(2, "N", 0);
  loops.K = args.integer(3, "K", 0);
  return true;
}

void parse_gemm_precision(const SampleArgs& args, GemmLoops& loops, std::size_t position, const char* program) {
  if (args.positional().size() <= position) return;
  const std::string& precision = args.positional()[position];
  const std::string argument = "precision (argument " + std::to_string(position + 1) + "): ";
  if (precision == "F16" || precision == "BF8" || precision == "INT8") {
    throw Error(argument + precision + " is not supported yet, " + program +
                " computes in FP32, BF16 or FP64; nothing was run (another precision's result would be reported "
                "under the same MEASURE tag). Pass FP32, BF16 or FP64");
  }
  if ((precision == "FP32" || precision == "FP64") && loops.bf16()) {
    throw Error(argument + precision +
                ", but USE_BF16 in the environment asks for bf16; nothing was run. Pass BF16, or unset USE_BF16 (or "
                "set it to 0) for " + precision);
  }
  if (precision == "BF16") {
    loops.dtype = jit::DataType::bf16;
  } else if (precision == "FP64") {
    loops.dtype = jit::DataType::f64;
  } else if (precision != "FP32") {
    throw UsageError(argument + "'" + precision +
                     "' is none of PARLOOPER's FP32, BF16, F16, BF8, INT8, nor weft's FP64");
  }
}

std::string gemm_header(const char* program, const GemmLoops& loops) {
  return std::string(program) + ": " + ops::precision_name(loops.dtype) + ", " + loops.loop_string +
         ", M x N x K = " + sizes(loops.M, loops.N, loops.K) + ", blocks " + sizes(loops.bm, loops.bn, loops.bk);
}

std::string gemm_buffers(const char* program, const GemmLoops& loops, const std::string& shape_extra,
                         const std::string& buffers, bool check) {
  return std::string(program) + " with M x N x K = " + sizes(loops.M, loops.N, loops.K) + shape_extra + " (" +
         buffers + (check ? " and the check's reference)" : ")");
}

}  // namespace weft::samples
