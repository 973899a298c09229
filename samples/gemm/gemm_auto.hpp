// `auto` in the GEMM samples: the tuned configuration for the shape (best_gemm_config.hpp), when
// the sample is built with the tuner (WEFT_HAVE_TUNER); without it, `auto` is bad usage.
//
//   parse_auto_shape(args, config, 5, "auto M N K [n_iters]");   // gemm_args.hpp
//   resolve_gemm_auto(config, settings.threads, "weft-gemm-bwd");
#pragma once

#include <cstdio>

#include "sample_args.hpp"
#if defined(WEFT_HAVE_TUNER)
#include "best_gemm_config.hpp"
#endif

namespace weft::samples {

// When config.loop_string is "auto", replaces `config` (GemmFwdConfig, GemmBwdConfig or
// GemmUpdConfig) by the tuning database's choice for its shape and prints
// "<program> auto: <choice>".
template <class Config>
void resolve_gemm_auto(Config& config, int threads, const char* program) {
  if (config.loop_string != "auto") return;
#if defined(WEFT_HAVE_TUNER)
  const auto choice = weft::tuner::best_gemm_config(config, threads);
  config = choice.config;
  std::printf("%s auto: %s\n", program, choice.describe().c_str());
#else
  (void)threads;
  (void)program;
  throw UsageError("auto needs the tuner, which this build does not have");
#endif
}

}  // namespace weft::samples
