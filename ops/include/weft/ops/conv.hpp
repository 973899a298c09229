// The convolution operators: forward (with a fused bias and ReLU), backward by data and backward by
// weights of a 2-D convolution, in f32 or bf16 (fp32 accumulation), on PARLOOPER's blocked layouts.
//
//   descriptor      ConvDesc: the shape (N H W C K R S, strides, padding), dtype and fusions
//   configuration   ConvFwdConfig / ConvBwdConfig / ConvUpdConfig: the descriptor plus the loop
//                   string over PARLOOPER's loops a..g, the channel blocks and each pass's knobs, from
//                     conv_config<Config>(desc)                  explicit: set loop_string, bc, bk, ...
//                     tuned_conv_config<Config>(desc, threads)   the tuning database's best (weft-tune conv)
//                     default_conv_config<Config>(desc, threads) the machine model's untuned choice
//   prepare         ConvFwd conv(config): validates, generates the kernels and loop nests, once
//   execute         conv.run(...), many times, on blocked tensors (input_layout(), filter_layout(), ...)
//   conversions     conv_layout.hpp: nchw_to_blocked / blocked_to_nchw, kcrs_to_blocked /
//                   blocked_to_kcrs, blocked_bias, and in bf16 to_bf16 / filter_to_vnni2
//
//   weft::ops::ConvDesc desc{.shape = {.N = 1, .H = 56, .W = 56, .C = 64, .K = 64, .R = 3, .S = 3,
//                                      .pad_h = 1, .pad_w = 1},
//                            .bias = true, .relu = true};
//   const weft::ops::ConvFwd conv(weft::ops::default_conv_config<weft::ops::ConvFwdConfig>(desc, 4));
//   std::vector<float> x = nchw_to_blocked(x_nchw, conv.input_layout());
//   std::vector<float> w = kcrs_to_blocked(w_kcrs, conv.filter_layout());
//   std::vector<float> b = blocked_bias(bias, conv.config().k_blocking());
//   std::vector<float> y(conv.output_layout().size());
//   conv.run(x.data(), w.data(), b.data(), y.data());
//   blocked_to_nchw(y.data(), y_nchw, conv.output_layout());
//
// Backward by data (dX from dY and W) and by weights (dW from X and dY) go the same way:
//   ConvBwd bwd(default_conv_config<ConvBwdConfig>(desc, 4));   bwd.run(w, dy, dx);
//   ConvUpd upd(default_conv_config<ConvUpdConfig>(desc, 4));   upd.run(x, dy, dw);
// Everything throws weft::Error naming what is wrong: a shape field ("stride_h"), a block ("bc"),
// the dtype, the loop_string (with a caret), a null buffer ("ConvFwd::run: null input").
#pragma once

#include <weft/jit/data_type.hpp>
#include <weft/ops/conv_bwd.hpp>
#include <weft/ops/conv_fwd.hpp>
#include <weft/ops/conv_layout.hpp>
#include <weft/ops/conv_shape.hpp>
#include <weft/ops/conv_upd.hpp>

namespace weft::ops {

// What a convolution operator computes. The backward passes read shape and dtype only, and the
// backward by weights also the rims its grad_output holds.
struct ConvDesc {
  ConvShape shape;
  jit::DataType dtype = jit::DataType::f32;  // f32 or bf16
  bool bias = false;  // forward: + a per-filter bias (K values)
  bool relu = false;  // forward: ReLU on the output
  // Backward by weights: grad_output's rims in its blocked layout (ConvUpdConfig::pad_h_out, pad_w_out).
  std::int64_t grad_output_pad_h = 0, grad_output_pad_w = 0;
};

// The descriptor in a configuration with the samples' plain loops ("Abcdefg", bc = min(32, C),
// bk = min(32, K), every other knob at its default), for the caller to set the loops and blocks.
template <class Config>
Config conv_config(const ConvDesc& desc);

// The tuning database's configuration for the descriptor on `threads` threads (best_conv_config.hpp):
// its own shape's best record, else the machine model's choice.
template <class Config>
Config tuned_conv_config(const ConvDesc& desc, int threads);

// The machine model's untuned choice (conv_model.hpp) where the pass takes it, else conv_config's.
template <class Config>
Config default_conv_config(const ConvDesc& desc, int threads);

extern template ConvFwdConfig conv_config(const ConvDesc&);
extern template ConvBwdConfig conv_config(const ConvDesc&);
extern template ConvUpdConfig conv_config(const ConvDesc&);
extern template ConvFwdConfig tuned_conv_config(const ConvDesc&, int);
extern template ConvBwdConfig tuned_conv_config(const ConvDesc&, int);
extern template ConvUpdConfig tuned_conv_config(const ConvDesc&, int);
extern template ConvFwdConfig default_conv_config(const ConvDesc&, int);
extern template ConvBwdConfig default_conv_config(const ConvDesc&, int);
extern template ConvUpdConfig default_conv_config(const ConvDesc&, int);

}  // namespace weft::ops
