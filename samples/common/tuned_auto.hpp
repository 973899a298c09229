// `auto` in every sample: when config.loop_string is "auto", the configuration is replaced by the
// choice a lookup returns (a tuner::TunedChoice: config, source, describe()), and
// "<program> auto: <choice>" is printed (the lookups are the operators', ops/, which always have
// the tuner).
//
//   resolve_auto(config, threads, "weft-conv-fwd",
//                [](const auto& c, int t) { return weft::ops::best_conv_config(c, t); });
#pragma once

#include <cstdio>

#include "sample_args.hpp"

namespace weft::samples {

template <class Config, class Lookup>
void resolve_auto(Config& config, int threads, const char* program, Lookup&& lookup) {
  if (config.loop_string != "auto") return;
  const auto choice = lookup(config, threads);
  config = choice.config;
  std::printf("%s auto: %s\n", program, choice.describe().c_str());
}

}  // namespace weft::samples
