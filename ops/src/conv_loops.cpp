#include <weft/ops/conv_loops.hpp>

#include <utility>

#include <weft/jit/error.hpp>

namespace weft::ops {

void ConvLoops::validate() const {
  shape.validate();
  for (const auto& [name, value] : {std::pair{"bc", bc}, std::pair{"bk", bk}}) {
    if (value < 1 || value > 4096) {
      throw Error(std::string(name) + " must be in [1, 4096], got " + std::to_string(value));
    }
  }
  if (dtype != jit::DataType::f32 && dtype != jit::DataType::bf16)
    throw Error("dtype: data type " + std::string(jit::to_string(dtype)) + ": the convolution operators run f32 or bf16");
  if (bf16() && bc % 2 != 0)
    throw Error("bc = " + std::to_string(bc) + " with bf16: the filter's VNNI-2 pairs run along C, so bc must be even");
}

}  // namespace weft::ops
