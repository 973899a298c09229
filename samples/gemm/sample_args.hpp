// Command-line parsing shared by the GEMM samples: PARLOOPER-style positional arguments plus
// named options (--name value) anywhere on the line. Malformed input throws UsageError, which the
// samples turn into a usage message and exit status 2.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace weft::samples {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct SampleArgs {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;  // "--threads 2" -> {"threads", "2"}

  // Splits argv; every "--name" takes the next argument as its value. `known` lists the allowed
  // option names; others are a UsageError.
  static SampleArgs parse(int argc, char** argv, const std::vector<std::string>& known);

  // UsageError naming the first extra argument when there are more than `max` positional
  // arguments; `form` lists them, e.g. "LOOP_STRING M N K bm bn bk [mbf] [private_trans] [n_iters]".
  void require_at_most(std::size_t max, const char* form) const;

  // Positional argument `index` as an integer in [min, max], or `fallback` when absent.
  std::int64_t integer(std::size_t index, const char* name, std::int64_t fallback,
                       std::int64_t min = 1, std::int64_t max = INT32_MAX) const;
  std::int64_t option_integer(const std::string& name, std::int64_t fallback,
                              std::int64_t min = 0, std::int64_t max = INT32_MAX) const;
  // "4,2" -> {4, 2}; empty when the option is absent.
  std::vector<long> option_list(const std::string& name) const;
};

// UsageError naming the first of LOOP_STRING M N K bm bn bk that is missing.
void require_gemm_shape_arguments(const SampleArgs& args);

// The arguments every GEMM sample shares: LOOP_STRING M N K bm bn bk at positions 0-6 and the
// --k-blocks / --m-blocks / --n-blocks options. `Config` is one of the samples' configurations.
template <class Config>
void parse_gemm_arguments(const SampleArgs& args, Config& c) {
  require_gemm_shape_arguments(args);
  c.loop_string = args.positional[0];
  c.M = args.integer(1, "M", 0);
  c.N = args.integer(2, "N", 0);
  c.K = args.integer(3, "K", 0);
  c.bm = args.integer(4, "bm", 0, 1, 4096);
  c.bn = args.integer(5, "bn", 0, 1, 4096);
  c.bk = args.integer(6, "bk", 0, 1, 4096);
  c.k_blocks = args.option_list("k-blocks");
  c.m_blocks = args.option_list("m-blocks");
  c.n_blocks = args.option_list("n-blocks");
}

// PARLOOPER's samples run bf16 when the environment variable USE_BF16 is a non-zero integer.
// weft's samples compute in FP32 only, so they refuse it (weft::Error) rather than print FP32
// numbers that a script would file under bf16; 0 or unset runs FP32. A value that is not an
// integer is a UsageError.
void reject_bf16_request();

// The named options every GEMM sample takes.
inline const std::vector<std::string> kGemmOptions = {"threads", "check", "warmup",
                                                      "k-blocks", "m-blocks", "n-blocks"};

// Strict decimal integer: the whole text, no sign games, within [min, max].
std::int64_t parse_integer(const std::string& text, const char* name, std::int64_t min,
                           std::int64_t max);

}  // namespace weft::samples
