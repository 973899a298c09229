// What the convolution benchmark times: one pass of one ResNet-50 layer by one implementation,
// prepared (buffers in the implementation's own layouts, filled, kernels and primitives created)
// before any timing, so that run() does the pass and nothing else.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <weft/jit/data_type.hpp>

#include "resnet50_layers.hpp"

namespace weft::bench {

enum class Pass { fwd, bwd, upd };  // forward, backward by data, backward by weights

inline const char* pass_name(Pass p) { return p == Pass::fwd ? "fwd" : p == Pass::bwd ? "bwd" : "upd"; }

struct PreparedPass {
  std::function<void()> run;  // one complete pass: returns when its results are written
  std::string info;           // what the implementation chose to run (e.g. oneDNN's impl_info_str)
  // The result of the last run() as a plain tensor (NCHW for activations, KCRS / OIHW for filters),
  // for comparing implementations on the same inputs; empty: not offered.
  std::function<std::vector<float>()> plain_result;
  std::int64_t reduction_terms = 1;  // products summed per result element (the comparison's tolerance)
  // Relative error of the result from rounding it to bf16 (0 in f32), added to the comparison's
  // tolerance: weft rounds once per C chunk, oneDNN once.
  double rounding = 0;
};

// Every implementation generates its inputs as the plain tensors fill_random gives with seeds 1 and 2,
// in the order: fwd src, weights; bwd diff_dst, weights; upd src, diff_dst. Converted into its own
// layouts while preparing, they are the same inputs everywhere, so results can be compared.
//
// An implementation prepares a pass of a layer at batch N in a data type (f32, or bf16: bf16
// tensors, fp32 accumulation; the plain inputs rounded to bf16 to nearest even by each), or returns
// nothing when it does not offer that pass (the bench then leaves it out of that row).
using PreparePass =
    std::function<std::optional<PreparedPass>(const samples::ConvLayer&, Pass, std::int64_t N, jit::DataType)>;

struct Implementation {
  std::string name;
  PreparePass prepare;
};

// 2 N C K R S P Q: the multiply-adds of each pass (every pass has the same count).
inline double conv_flops(const samples::ConvLayer& l, std::int64_t N) {
  return 2.0 * static_cast<double>(N * l.C * l.K * l.R * l.S * l.ofh() * l.ofw());
}

}  // namespace weft::bench
