#include "weft/cli/values.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace weft::cli {
namespace {

std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

UsageError outside(std::string_view name, std::string_view text, const std::string& min, const std::string& max) {
  return UsageError(std::string(name) + ": " + std::string(text) + " is outside [" + min + ", " + max + "]");
}

}  // namespace

std::int64_t parse_integer(std::string_view text, std::string_view name, std::int64_t min, std::int64_t max) {
  const std::string s(text);
  // strtoll alone would take leading blanks and '+', and saturate on overflow.
  const std::size_t digits = !s.empty() && s[0] == '-' ? 1 : 0;
  bool well_formed = s.size() > digits;
  for (std::size_t i = digits; i < s.size(); ++i) well_formed = well_formed && s[i] >= '0' && s[i] <= '9';
  errno = 0;
  const long long value = well_formed ? std::strtoll(s.c_str(), nullptr, 10) : 0;
  if (!well_formed || errno == ERANGE) throw UsageError(std::string(name) + ": '" + s + "' is not an integer");
  if (value < min || value > max) throw outside(name, s, std::to_string(min), std::to_string(max));
  return value;
}

double parse_number(std::string_view text, std::string_view name, double min, double max) {
  const std::string s(text);
  char* end = nullptr;
  // strtod would also take blanks, "nan", "inf" and hexadecimal.
  const bool starts_well = !s.empty() && ((s[0] >= '0' && s[0] <= '9') || s[0] == '-' || s[0] == '.');
  const double value = starts_well ? std::strtod(s.c_str(), &end) : NAN;
  if (!starts_well || *end != '\0' || !std::isfinite(value) || s.find_first_of("xX") != std::string::npos)
    throw UsageError(std::string(name) + ": '" + s + "' is not a number");
  if (value < min || value > max) throw outside(name, s, number_text(min), number_text(max));
  return value;
}

std::vector<long> parse_integer_list(std::string_view text, std::string_view name, long min, long max) {
  std::vector<long> values;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = text.substr(start, comma == std::string_view::npos ? comma : comma - start);
    if (item.empty())
      throw UsageError(std::string(name) + ": '" + std::string(text) +
                       "' is not a list of integers separated by commas (e.g. 32,64)");
    values.push_back(static_cast<long>(parse_integer(item, name, min, max)));
    if (comma == std::string_view::npos) return values;
    start = comma + 1;
  }
}

}  // namespace weft::cli
