// What every convolution pass's configuration starts with: the loop string over PARLOOPER's
// logical loops, the shape, the channel blocks and the element type.
//
//   ConvFwdConfig c;                 // a ConvLoops and the pass's own knobs
//   c.shape = {.N = 1, .H = 56, .W = 56, .C = 64, .K = 64, .R = 3, .S = 3, .pad_h = 1, .pad_w = 1};
//   c.bc = c.bk = 32;
//   c.validate();                    // throws weft::Error naming the bad field
#pragma once

#include <cstdint>
#include <string>

#include <weft/jit/data_type.hpp>
#include <weft/ops/blocked_layout.hpp>
#include <weft/ops/conv_shape.hpp>
#include <weft/tpp/data_types.hpp>

namespace weft::ops {

// The base of every convolution pass's configuration. The logical loops are PARLOOPER's:
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

}  // namespace weft::ops
