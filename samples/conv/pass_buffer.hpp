// A blocked tensor in the element type a convolution pass reads or writes: floats, or in bf16
// (ConvLoops::dtype) their bf16 copy, rounded to nearest even (a filter's tiles in VNNI-2, as the
// passes take them). The samples' programs fill floats, run on data() and check as_floats().
//
//   PassBuffer input = PassBuffer::activations(nchw_to_blocked(x, conv.input_layout()), config);
//   PassBuffer filter = PassBuffer::filter(kcrs_to_blocked(w, conv.filter_layout()), conv.filter_layout(), config);
//   conv.run(input.data(), filter.data(), nullptr, output.data());
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <weft/jit/bfloat16.hpp>
#include <weft/ops/conv_layout.hpp>

#include "conv_args.hpp"

namespace weft::samples {

class PassBuffer {
 public:
  static PassBuffer activations(std::vector<float> blocked, const ops::ConvLoops& loops) {
    PassBuffer b;
    if (loops.bf16()) b.bf16_ = ops::to_bf16(blocked);
    b.f32_ = std::move(blocked);
    return b;
  }
  static PassBuffer filter(std::vector<float> blocked, const ops::FilterLayout& layout, const ops::ConvLoops& loops) {
    PassBuffer b;
    if (loops.bf16()) b.bf16_ = ops::filter_to_vnni2(blocked, layout);
    b.f32_ = std::move(blocked);
    return b;
  }

  void* data() { return bf16_.empty() ? static_cast<void*>(f32_.data()) : static_cast<void*>(bf16_.data()); }
  const void* data() const { return bf16_.empty() ? static_cast<const void*>(f32_.data()) : bf16_.data(); }
  // The activations as floats (exactly, from bf16; not for a VNNI-2 filter).
  std::vector<float> as_floats() const {
    return bf16_.empty() ? f32_ : ops::to_floats(bf16_.data(), static_cast<std::int64_t>(bf16_.size()));
  }

 private:
  std::vector<float> f32_;
  std::vector<jit::bfloat16> bf16_;
};

}  // namespace weft::samples
