// The command lines of weft-conv-fwd and weft-conv-bwd after their common prefix (conv_args.hpp):
// each pass's own positional arguments, PARLOOPER's.
#include "conv_args.hpp"
#include "conv_auto.hpp"

namespace weft::samples {

using weft::ops::ConvFwdConfig;
using weft::ops::kMaxExtent;

std::size_t parse_conv_fwd_arguments(SampleArgs& args, ConvFwdConfig& c, int argc, char** argv) {
  parse_conv_arguments(args, c, argc, argv, 30, kConvFwdForm);
  if (c.loop_string == "auto") {  // the tuned configuration (conv_auto.hpp): only the shape and n_iters
    args.require_at_most(kConvAutoIters + 1, kConvAutoForm);
    return kConvAutoIters;
  }
  c.h_block = args.integer(14, "h_block", 1);
  c.w_block = args.integer(15, "w_block", 1);
  c.c_block = args.integer(16, "c_block", 1);
  c.k_block = args.integer(17, "k_block", 1);
  c.h_in_gemm = args.integer(18, "h_in_gemm", 1);
  c.pack_input = args.switch_at(19, "pack_input");
  c.logical_padding = args.switch_at(21, "logical_padding");
  c.input_padding_copy = args.switch_at(22, "input_padding_copy");
  c.pad_h_in = args.integer(23, "pad_h_in", ConvFwdConfig::kFollowPadding, 0, kMaxExtent);
  c.pad_w_in = args.integer(24, "pad_w_in", ConvFwdConfig::kFollowPadding, 0, kMaxExtent);
  c.pad_h_out = args.integer(25, "pad_h_out", ConvFwdConfig::kFollowPadding, 0, kMaxExtent);
  c.pad_w_out = args.integer(26, "pad_w_out", ConvFwdConfig::kFollowPadding, 0, kMaxExtent);
  c.zero_output_rims = args.switch_at(27, "zero_output_rims");
  c.with_bias = args.switch_at(28, "with_bias");
  c.with_relu = args.switch_at(29, "with_relu");
  return 20;
}

std::size_t parse_conv_bwd_arguments(SampleArgs& args, ops::ConvBwdConfig& config, int argc, char** argv) {
  parse_conv_arguments(args, config, argc, argv, 20, kConvBwdForm);
  if (config.loop_string == "auto") {  // the tuned configuration (conv_auto.hpp): only the shape and n_iters
    args.require_at_most(kConvAutoIters + 1, kConvAutoForm);
    return kConvAutoIters;
  }
  config.h_block = args.integer(14, "h_block", 1, 1, kMaxExtent);
  config.w_block = args.integer(15, "w_block", 1, 1, kMaxExtent);
  config.c_block = args.integer(16, "c_block", 1, 1, kMaxExtent);
  config.k_block = args.integer(17, "k_block", 1, 1, kMaxExtent);
  config.h_in_gemm = args.integer(18, "h_in_gemm", 1, 1, kMaxExtent);
  return 19;
}

}  // namespace weft::samples
