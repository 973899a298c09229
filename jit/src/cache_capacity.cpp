#include "weft/jit/cache_capacity.hpp"

#include <charconv>
#include <cstdlib>
#include <string>
#include <string_view>

#include "weft/jit/error.hpp"

namespace weft::jit {

std::size_t cache_capacity_from_env(const char* variable, const char* what, std::size_t fallback) {
  const char* env = std::getenv(variable);
  if (env == nullptr || *env == '\0') return fallback;
  const std::string_view text(env);
  std::size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw Error(std::string(variable) + "='" + std::string(text) + "' is not a number of " + what +
                " (0 or more; the default is " + std::to_string(fallback) + ")");
  }
  return value;
}

}  // namespace weft::jit
