// `auto` in the convolution samples: `weft-conv-<pass> auto N H W C K R S stride_h stride_w pad_h
// pad_w [n_iters]` runs the tuned configuration for the shape (ops' best_conv_config.hpp).
//
//   const std::size_t n_iters = parse_conv_fwd_arguments(args, config, argc, argv);  // "auto": 12
//   resolve_conv_auto(config, settings.threads, "weft-conv-fwd");
#pragma once

#include <cstddef>

#include <weft/ops/best_conv_config.hpp>

#include "sample_args.hpp"
#include "tuned_auto.hpp"

namespace weft::samples {

// The positional form of `auto` and where its n_iters is.
inline constexpr const char* kConvAutoForm = "auto N H W C K R S stride_h stride_w pad_h pad_w [n_iters]";
inline constexpr std::size_t kConvAutoIters = 12;

inline bool is_conv_auto(const SampleArgs& args) { return !args.positional().empty() && args.positional()[0] == "auto"; }

// When config.loop_string is "auto", replaces `config` (ConvFwdConfig, ConvBwdConfig or
// ConvUpdConfig) by the tuning database's choice for its shape and team and prints
// "<program> auto: <choice>".
template <class Config>
void resolve_conv_auto(Config& config, int threads, const char* program) {
  resolve_auto(config, threads, program, [](const Config& c, int t) { return ops::best_conv_config(c, t); });
}

}  // namespace weft::samples
