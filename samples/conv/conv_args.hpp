// The command line and the printed words every convolution sample shares: PARLOOPER's
// `LOOP_STRING N H W C K R S stride_h stride_w pad_h pad_w bc bk` at positions 0-13 (the same in its
// forward, backward and update samples), and the first words of header lines and memory messages.
// Positions 14 and up are each pass's own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <weft/jit/data_type.hpp>
#include <weft/ops/blocked_layout.hpp>
#include <weft/tpp/data_types.hpp>

#include "conv_shape.hpp"
#include "ops_names.hpp"
#include "sample_args.hpp"

namespace weft::samples {

// The base of every convolution sample's configuration. The logical loops are PARLOOPER's:
// a = images, b = C blocks, c = K blocks, d = output rows, e = output columns, f = R, g = S.
struct ConvLoops {
  std::string loop_string = "Abcdefg";
  ConvShape shape;
  std::int64_t bc = 32, bk = 32;
  // The element type of activations, filters and bias: f32, or bf16 (PARLOOPER's USE_BF16: bf16
  // tensors, filters in VNNI-2 blocks (conv_layout.hpp), fp32 accumulation in the BRGEMM).
  jit::DataType dtype = jit::DataType::f32;

  Blocking c_blocking() const { return {shape.C, bc}; }
  Blocking k_blocking() const { return {shape.K, bk}; }
  bool bf16() const { return dtype == jit::DataType::bf16; }
  // The TPPs' data types: fp32 throughout, or bf16 tensors with fp32 arithmetic.
  tpp::DataTypes tpp_types() const {
    if (!bf16()) return {};
    return {.in = jit::DataType::bf16, .out = jit::DataType::bf16, .compute = jit::DataType::f32};
  }
  std::int64_t element_bytes() const { return static_cast<std::int64_t>(jit::size_of(dtype)); }
  // Throws weft::Error for a bad shape (ConvShape::validate), block size (1..4096) or data type
  // (f32 or bf16; bf16 needs an even bc: the filter's VNNI-2 pairs run along C).
  void validate() const;
};

// Reads USE_BF16 into `loops.dtype` (bf16_requested), parses argv into `args`, allows at most `max` positional arguments
// (`form` lists them) and reads the common prefix into `loops`. With "auto" as the first argument
// (the tuned mode) the loop string and the blocks are the tuner's: only N ... pad_w (positions 1-11)
// are read, and the rest is the sample's to read.
void parse_conv_arguments(SampleArgs& args, ConvLoops& loops, int argc, char** argv, std::size_t max,
                          const char* form);

// "<program>: [BF16, ]<loop_string>, N 1 H 56 ... pad 1 1, blocks bc 32 bk 32": how header lines start.
std::string conv_header(const char* program, const ConvLoops& loops);

// "<program> with N 1 H 56 ... (<buffers>[ and the check's reference])": what a memory message names.
std::string conv_buffers(const char* program, const ConvLoops& loops, const std::string& buffers, bool check);

}  // namespace weft::samples
