// `auto` in every sample: when config.loop_string is "auto", the configuration is replaced by the
// choice a lookup returns (a tuner::TunedChoice: config, source, describe()), and
// "<program> auto: <choice>" is printed. Without the tuner in the build, `auto` is bad usage.
//
//   resolve_auto(config, threads, "weft-conv-fwd",
//                [](const auto& c, int t) { return weft::samples::best_conv_config(c, t); });
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

// The `auto` request of a build without the tuner.
template <class Config>
void refuse_auto_without_tuner(const Config& config) {
  if (config.loop_string == "auto") throw UsageError("auto needs the tuner, which this build does not have");
}

}  // namespace weft::samples
