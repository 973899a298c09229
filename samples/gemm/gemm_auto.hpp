// `auto` in the GEMM samples: the tuned configuration for the shape (best_gemm_config.hpp), when
// the sample is built with the tuner (WEFT_HAVE_TUNER); without it, `auto` is bad usage.
//
//   parse_auto_shape(args, config, 5, "auto M N K [n_iters]");   // gemm_args.hpp
//   resolve_gemm_auto(config, settings.threads, "weft-gemm-bwd");
#pragma once

#include <cstdio>

#include "element_type.hpp"
#include "sample_args.hpp"
#include "tuned_auto.hpp"
#if defined(WEFT_HAVE_TUNER)
#include "best_gemm_config.hpp"
#endif

namespace weft::samples {

// When config.loop_string is "auto", replaces `config` (GemmFwdConfig, GemmBwdConfig or
// GemmUpdConfig) by the tuning database's choice for its shape and prints
// "<program> auto: <choice>".
template <class Config>
void resolve_gemm_auto(Config& config, int threads, const char* program) {
#if defined(WEFT_HAVE_TUNER)
  // The database holds FP32 measurements only: a bf16 run takes the loops and tiles chosen for
  // FP32, in its own precision (and the pass refuses odd tiles where bf16 needs pairs).
  const jit::DataType dtype = config.dtype;
  const bool tuned = config.loop_string == "auto";
  resolve_auto(config, threads, program, [](const Config& c, int t) { return weft::tuner::best_gemm_config(c, t); });
  config.dtype = dtype;
  if (tuned && dtype != jit::DataType::f32)
    std::printf("%s auto: the tuning database measured FP32; running its choice in %s\n", program,
                precision_name(dtype).c_str());
#else
  (void)threads;
  (void)program;
  refuse_auto_without_tuner(config);
#endif
}

}  // namespace weft::samples
