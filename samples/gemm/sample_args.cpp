#include "sample_args.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include <weft/jit/error.hpp>

namespace weft::samples {

std::int64_t parse_integer(const std::string& text, const char* name, std::int64_t min,
                           std::int64_t max) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE) {
    throw UsageError(std::string(name) + ": '" + text + "' is not an integer");
  }
  if (v < min || v > max) {
    throw UsageError(std::string(name) + ": " + text + " is outside [" + std::to_string(min) + ", " +
                     std::to_string(max) + "]");
  }
  return v;
}

SampleArgs SampleArgs::parse(int argc, char** argv, const std::vector<std::string>& known) {
  SampleArgs args;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.rfind("--", 0) != 0) {
      args.positional.push_back(word);
      continue;
    }
    const std::string name = word.substr(2);
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      throw UsageError("unknown option " + word);
    }
    if (i + 1 >= argc) throw UsageError("option " + word + " needs a value");
    args.options[name] = argv[++i];
  }
  return args;
}

void SampleArgs::require_at_most(std::size_t max, const char* form) const {
  if (positional.size() <= max) return;
  throw UsageError("unexpected argument '" + positional[max] + "' (argument " + std::to_string(max + 1) +
                   "): at most " + std::to_string(max) + " positional arguments, " + form);
}

void require_gemm_shape_arguments(const SampleArgs& args) {
  static const char* const names[] = {"LOOP_STRING", "M", "N", "K", "bm", "bn", "bk"};
  const std::size_t given = args.positional.size();
  if (given < 7) {
    throw UsageError("missing " + std::string(names[given]) + " (argument " + std::to_string(given + 1) +
                     "); the first seven arguments are LOOP_STRING M N K bm bn bk");
  }
}

void reject_bf16_request() {
  const char* const value = std::getenv("USE_BF16");
  if (value == nullptr || *value == '\0') return;
  if (parse_integer(value, "USE_BF16 (environment)", INT64_MIN, INT64_MAX) == 0) return;
  throw Error(std::string("USE_BF16=") + value +
              " asks for bf16, which weft's GEMM samples do not have yet: they compute in FP32 only. "
              "Nothing was run (an FP32 result would be reported under the same MEASURE tag as a bf16 "
              "one); unset USE_BF16 or set it to 0 to run FP32");
}

std::int64_t SampleArgs::integer(std::size_t index, const char* name, std::int64_t fallback,
                                 std::int64_t min, std::int64_t max) const {
  if (index >= positional.size()) return fallback;
  return parse_integer(positional[index], name, min, max);
}

std::int64_t SampleArgs::option_integer(const std::string& name, std::int64_t fallback,
                                        std::int64_t min, std::int64_t max) const {
  const auto it = options.find(name);
  if (it == options.end()) return fallback;
  return parse_integer(it->second, ("--" + name).c_str(), min, max);
}

std::vector<long> SampleArgs::option_list(const std::string& name) const {
  std::vector<long> values;
  const auto it = options.find(name);
  if (it == options.end()) return values;
  std::string item;
  const std::string& text = it->second;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ',') {
      values.push_back(static_cast<long>(parse_integer(item, ("--" + name).c_str(), 1, INT32_MAX)));
      item.clear();
    } else {
      item += text[i];
    }
  }
  return values;
}

}  // namespace weft::samples
