#include <weft/ops/conv.hpp>

#include <type_traits>

#include <weft/jit/error.hpp>
#include <weft/ops/best_conv_config.hpp>
#include <weft/ops/conv_workload.hpp>

namespace weft::ops {
namespace {

ConvPassKind pass_kind(const ConvFwdConfig&) { return ConvPassKind::fwd; }
ConvPassKind pass_kind(const ConvBwdConfig&) { return ConvPassKind::bwd; }
ConvPassKind pass_kind(const ConvUpdConfig&) { return ConvPassKind::upd; }

// `tuned` (the tuner's knobs) for the descriptor's shape, with its dtype and fusions.
template <class Config>
Config with_knobs(const tuner::TunedConfig& tuned, const ConvDesc& desc) {
  Config c;
  if constexpr (std::is_same_v<Config, ConvFwdConfig>) {
    c = to_conv_fwd_config(tuned, desc.shape);
    c.with_bias = desc.bias;
    c.with_relu = desc.relu;
  } else if constexpr (std::is_same_v<Config, ConvBwdConfig>) {
    c = to_conv_bwd_config(tuned, desc.shape);
  } else {
    c = to_conv_upd_config(tuned, desc.shape);
    c.pad_h_out = desc.grad_output_pad_h;
    c.pad_w_out = desc.grad_output_pad_w;
  }
  c.dtype = desc.dtype;
  return c;
}

template <class Config>
void check_pass(const Config& c) {
  if constexpr (std::is_same_v<Config, ConvFwdConfig>) ConvFwd::check(c);
  else if constexpr (std::is_same_v<Config, ConvBwdConfig>) ConvBwd::check(c);
  else ConvUpd::check(c);
}

}  // namespace

template <class Config>
Config conv_config(const ConvDesc& desc) {
  return with_knobs<Config>(default_conv_config(pass_kind(Config{}), desc.shape, desc.dtype), desc);
}

template <class Config>
Config tuned_conv_config(const ConvDesc& desc, int threads) {
  return best_conv_config(conv_config<Config>(desc), threads).config;
}

template <class Config>
Config default_conv_config(const ConvDesc& desc, int threads) {
  const Config model =
      with_knobs<Config>(untuned_conv_config(pass_kind(Config{}), desc.shape, threads, desc.dtype), desc);
  try {
    check_pass(model);  // the model's choice may be one this pass refuses for the shape
    return model;
  } catch (const Error&) {
    return conv_config<Config>(desc);
  }
}

template ConvFwdConfig conv_config(const ConvDesc&);
template ConvBwdConfig conv_config(const ConvDesc&);
template ConvUpdConfig conv_config(const ConvDesc&);
template ConvFwdConfig tuned_conv_config(const ConvDesc&, int);
template ConvBwdConfig tuned_conv_config(const ConvDesc&, int);
template ConvUpdConfig tuned_conv_config(const ConvDesc&, int);
template ConvFwdConfig default_conv_config(const ConvDesc&, int);
template ConvBwdConfig default_conv_config(const ConvDesc&, int);
template ConvUpdConfig default_conv_config(const ConvDesc&, int);

}  // namespace weft::ops
