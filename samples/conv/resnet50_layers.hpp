// The ResNet-50 v1.5 convolution layers with PARLOOPER's settings per pass, read from
// samples/conv/resnet50_layers.txt (whose header says what each field is and where it comes from).
// One list for the benchmark, the scripts and the tuner; programs get its path from the build as
// WEFT_RESNET50_LAYERS:
//
//   for (const ConvLayer& layer : read_resnet50_layers(WEFT_RESNET50_LAYERS))
//     run(layer.H, layer.W, layer.C, layer.K, layer.R, layer.S, layer.stride, layer.pad);
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace weft::samples {

// PARLOOPER's conv_fwd arguments after the shape (without n_iters).
struct FwdChoice {
  std::string loop_string;
  std::int64_t bc, bk, h_block, w_block, c_block, k_block, h_in_gemm, pack_input, logical_padding;
};

// PARLOOPER's conv_bwd arguments after the shape (without n_iters).
struct BwdChoice {
  std::string loop_string;
  std::int64_t bc, bk, h_block, w_block, c_block, k_block, h_in_gemm;
};

// PARLOOPER's conv_upd arguments after the shape (without n_iters). Its scripts tune the bf16 update,
// whose loop nests and knobs the fp32 one does not have: reference only.
struct UpdChoice {
  std::string loop_string;
  std::int64_t bc, bk;
  std::vector<std::int64_t> bf16_knobs;  // the 13 after bk, in conv_upd's order
};

// One distinct layer: stride and padding are the same in both dimensions; the batch is not part of
// it (N = the thread count). `count` is how many of the network's convolutions have this shape.
struct ConvLayer {
  int id = 0;
  std::string name;
  std::int64_t H = 0, W = 0, C = 0, K = 0, R = 0, S = 0, stride = 1, pad = 0;
  int count = 1;
  std::optional<FwdChoice> fwd;  // absent where PARLOOPER's scripts do not run the pass ("-")
  std::optional<BwdChoice> bwd;
  std::optional<UpdChoice> upd;

  std::int64_t ofh() const { return (H + 2 * pad - R) / stride + 1; }
  std::int64_t ofw() const { return (W + 2 * pad - S) / stride + 1; }
};

// The layers of the list at `path`, in its order. A file that cannot be read or a malformed line is
// a weft::Error naming the file and line and what is wrong.
std::vector<ConvLayer> read_resnet50_layers(const std::string& path);

// The same from a stream; `source` names it in the messages.
std::vector<ConvLayer> parse_resnet50_layers(std::istream& in, const std::string& source);

}  // namespace weft::samples
