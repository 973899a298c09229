// The GEMM sample benchmarks' configuration flags: --loop=STRING --bm= --bn= --bk= --kbf=
// --k-blocks= --m-blocks= --n-blocks= (comma lists), taken out of argv into a GemmConfigOverride
// (gemm_defaults.hpp) before Google Benchmark sees them.
//
//   weft::ops::GemmConfigOverride override;
//   const bool given = weft::bench::take_gemm_override(argc, argv, override);
//   ... override.apply(config) ...
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include <weft/ops/gemm_defaults.hpp>

#include "take_flag.hpp"

namespace weft::bench {

// "1,2,8" -> {1, 2, 8}; parsing stops at the first character that is no number.
inline std::vector<long> list_of(const std::string& text) {
  std::vector<long> v;
  for (const char* p = text.c_str(); *p;) {
    char* end = nullptr;
    const long x = std::strtol(p, &end, 10);
    if (end == p) break;
    v.push_back(x);
    p = *end == ',' ? end + 1 : end;
  }
  return v;
}

// Whether any of the flags was given.
inline bool take_gemm_override(int& argc, char** argv, ops::GemmConfigOverride& o) {
  std::string value;
  bool given = false;
  auto take = [&](const char* name) { return take_flag(argc, argv, name, value) && (given = true); };
  if (take("loop")) o.loop_string = value;
  if (take("bm")) o.bm = std::atol(value.c_str());
  if (take("bn")) o.bn = std::atol(value.c_str());
  if (take("bk")) o.bk = std::atol(value.c_str());
  if (take("kbf")) o.kbf = std::atol(value.c_str());
  if (take("k-blocks")) o.k_blocks = list_of(value);
  if (take("m-blocks")) o.m_blocks = list_of(value);
  if (take("n-blocks")) o.n_blocks = list_of(value);
  return given;
}

}  // namespace weft::bench
