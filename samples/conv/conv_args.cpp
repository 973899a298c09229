#include "conv_args.hpp"

#include <weft/jit/error.hpp>

namespace weft::samples {

using weft::ops::ConvLoops;
using weft::ops::kMaxExtent;

void parse_conv_arguments(SampleArgs& args, ConvLoops& loops, int argc, char** argv, std::size_t max,
                          const char* form) {
  // USE_BF16 (PARLOOPER's switch): bf16 tensors; a pass without bf16 kernels refuses it by name.
  loops.dtype = bf16_requested() ? jit::DataType::bf16 : jit::DataType::f32;
  args.parse(argc, argv);
  const bool tuned = !args.positional().empty() && args.positional()[0] == "auto";
  if (!tuned) args.require_at_most(max, form);
  args.require({"LOOP_STRING", "N", "H", "W", "C", "K", "R", "S", "stride_h", "stride_w", "pad_h", "pad_w"},
               "; the arguments start with LOOP_STRING N H W C K R S stride_h stride_w pad_h pad_w bc bk");
  loops.loop_string = args.positional()[0];
  ops::ConvShape& s = loops.shape;
  s.N = args.integer(1, "N", 0, 1, kMaxExtent);
  s.H = args.integer(2, "H", 0, 1, kMaxExtent);
  s.W = args.integer(3, "W", 0, 1, kMaxExtent);
  s.C = args.integer(4, "C", 0, 1, kMaxExtent);
  s.K = args.integer(5, "K", 0, 1, kMaxExtent);
  s.R = args.integer(6, "R", 0, 1, kMaxExtent);
  s.S = args.integer(7, "S", 0, 1, kMaxExtent);
  s.stride_h = args.integer(8, "stride_h", 0, 1, kMaxExtent);
  s.stride_w = args.integer(9, "stride_w", 0, 1, kMaxExtent);
  s.pad_h = args.integer(10, "pad_h", 0, 0, kMaxExtent);
  s.pad_w = args.integer(11, "pad_w", 0, 0, kMaxExtent);
  if (tuned) return;
  args.require({"LOOP_STRING", "N", "H", "W", "C", "K", "R", "S", "stride_h", "stride_w", "pad_h", "pad_w", "bc",
                "bk"},
               "; the arguments start with LOOP_STRING N H W C K R S stride_h stride_w pad_h pad_w bc bk");
  loops.bc = args.integer(12, "bc", 0, 1, 4096);
  loops.bk = args.integer(13, "bk", 0, 1, 4096);
}

std::string conv_header(const char* program, const ConvLoops& loops) {
  return std::string(program) + ": " + (loops.bf16() ? "BF16, " : "") + loops.loop_string + ", " +
         loops.shape.to_string() + ", blocks bc " + std::to_string(loops.bc) + " bk " + std::to_string(loops.bk);
}

std::string conv_buffers(const char* program, const ConvLoops& loops, const std::string& buffers, bool check) {
  return std::string(program) + " with " + loops.shape.to_string() + " (" + buffers +
         (check ? " and the check's reference)" : ")");
}

}  // namespace weft::samples
