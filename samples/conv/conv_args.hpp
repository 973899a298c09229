// The command line and the printed words every convolution sample shares: PARLOOPER's
// `LOOP_STRING N H W C K R S stride_h stride_w pad_h pad_w bc bk` at positions 0-13 (the same in its
// forward, backward and update samples), and the first words of header lines and memory messages.
// Positions 14 and up are each pass's own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <weft/jit/data_type.hpp>
#include <weft/ops/conv_bwd.hpp>
#include <weft/ops/conv_fwd.hpp>
#include <weft/ops/conv_loops.hpp>
#include <weft/tpp/data_types.hpp>

#include "sample_args.hpp"

namespace weft::samples {

// Reads USE_BF16 into `loops.dtype` (bf16_requested), parses argv into `args`, allows at most `max` positional arguments
// (`form` lists them) and reads the common prefix into `loops`. With "auto" as the first argument
// (the tuned mode) the loop string and the blocks are the tuner's: only N ... pad_w (positions 1-11)
// are read, and the rest is the sample's to read.
void parse_conv_arguments(SampleArgs& args, ops::ConvLoops& loops, int argc, char** argv, std::size_t max,
                          const char* form);

// "<program>: [BF16, ]<loop_string>, N 1 H 56 ... pad 1 1, blocks bc 32 bk 32": how header lines start.
std::string conv_header(const char* program, const ops::ConvLoops& loops);

// "<program> with N 1 H 56 ... (<buffers>[ and the check's reference])": what a memory message names.
std::string conv_buffers(const char* program, const ops::ConvLoops& loops, const std::string& buffers, bool check);

// Reads weft-conv-fwd's command line into `config` (parse_conv_arguments, then PARLOOPER's
// positions 14-29: h_block w_block c_block k_block h_in_gemm pack_input n_iters logical_padding
// input_padding_copy pad_h_in pad_w_in pad_h_out pad_w_out zero_output_rims with_bias with_relu)
// and returns the index of n_iters. Throws UsageError. "auto N H W C K R S stride_h stride_w pad_h pad_w
// [n_iters]" reads the shape only (conv_auto.hpp resolves the rest) and returns 12.
std::size_t parse_conv_fwd_arguments(SampleArgs& args, ops::ConvFwdConfig& config, int argc, char** argv);

inline constexpr const char* kConvFwdForm =
    "LOOP_STRING N H W C K R S stride_h stride_w pad_h pad_w bc bk [h_block] [w_block] [c_block] [k_block] "
    "[h_in_gemm] [pack_input] [n_iters] [logical_padding] [input_padding_copy] [pad_h_in] [pad_w_in] "
    "[pad_h_out] [pad_w_out] [zero_output_rims] [with_bias] [with_relu]";

// weft-conv-bwd's command line: PARLOOPER's `loop_string N H W C K R S stride_h stride_w pad_h pad_w
// bc bk [h_block w_block c_block k_block h_in_gemm [n_iters]]` into `config`; returns the position
// of n_iters. "auto" reads the shape only (conv_auto.hpp resolves the rest) and returns 12.
std::size_t parse_conv_bwd_arguments(SampleArgs& args, ops::ConvBwdConfig& config, int argc, char** argv);

inline constexpr const char* kConvBwdForm =
    "LOOP_STRING N H W C K R S stride_h stride_w pad_h pad_w bc bk [h_block w_block c_block k_block h_in_gemm "
    "[n_iters]]";

}  // namespace weft::samples
