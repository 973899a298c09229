// `auto` in the GEMM samples: the tuned configuration for the shape (ops' best_gemm_config.hpp),
// printed as the samples print it.
//
//   parse_auto_shape(args, config, 5, "auto M N K [n_iters]");   // gemm_args.hpp
//   resolve_gemm_auto(config, settings.threads, "weft-gemm-bwd");
#pragma once

#include <weft/ops/best_gemm_config.hpp>

#include "sample_args.hpp"
#include "tuned_auto.hpp"

namespace weft::samples {

// When config.loop_string is "auto", replaces `config` (GemmFwdConfig, GemmBwdConfig or
// GemmUpdConfig) by the tuning database's choice for its shape and precision (config.dtype, kept)
// and prints "<program> auto: <choice>".
template <class Config>
void resolve_gemm_auto(Config& config, int threads, const char* program) {
  // In bf16 the lookup takes a bf16 record (weft-tune gemm --dtype bf16), else an FP32 one, which
  // the printed choice says ("no BF16 record fits; the FP32 one, run in BF16: ..."), else the
  // heuristic.
  resolve_auto(config, threads, program, [](const Config& c, int t) { return ops::best_gemm_config(c, t); });
}

}  // namespace weft::samples
