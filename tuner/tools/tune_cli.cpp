#include "tune_cli.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace weft::tuner {
namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

}  // namespace

bool parse_integer(const std::string& text, long min, long max, long& value) {
  // strtol alone would take leading blanks and '+' and turn an overflow into LONG_MAX.
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-')) return false;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (*end != '\0' || errno != 0 || v < min || v > max) return false;
  value = v;
  return true;
}

CliArgs::CliArgs(int argc, char** argv, int first, const std::set<std::string>& options,
                 const std::set<std::string>& flags) {
  for (int i = first; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      help_ = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0) {
      if (arg.size() > 1 && arg[0] == '-')
        throw CliError("unknown option '" + arg + "' (options start with --, e.g. --M 64)");
      throw CliError("unexpected argument '" + arg + "'");
    }
    std::string name = arg.substr(2), value;
    const auto eq = name.find('=');
    const bool inline_value = eq != std::string::npos;
    if (inline_value) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (!options.count(name) && !flags.count(name)) throw CliError("unknown option --" + name);
    if (flags.count(name) && inline_value) throw CliError("--" + name + " takes no value, got '" + arg + "'");
    if (options.count(name) && !inline_value) {
      // "--db --no-save" is a forgotten value, not a path named "--no-save" (use --db=--no-save).
      if (i + 1 >= argc || std::string(argv[i + 1]).rfind("--", 0) == 0)
        throw CliError("option --" + name + " needs a value");
      value = argv[++i];
    }
    if (has(name)) throw CliError("--" + name + " is given twice");
    values_[name] = value;
  }
}

std::string CliArgs::text(const std::string& name, const std::string& fallback) const {
  const auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

std::string CliArgs::nonempty_text(const std::string& name, const std::string& fallback) const {
  const std::string t = text(name, fallback);
  if (has(name) && t.empty()) throw CliError("--" + name + " needs a value, got an empty one");
  return t;
}

long CliArgs::integer(const std::string& name, long fallback, long min, long max) const {
  if (!has(name)) return fallback;
  const std::string& t = values_.at(name);
  long v = 0;
  if (!parse_integer(t, min, max, v))
    throw CliError("--" + name + " must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                   "], got '" + t + "'");
  return v;
}

double CliArgs::real(const std::string& name, double fallback, double min, double max) const {
  if (!has(name)) return fallback;
  const std::string& t = values_.at(name);
  char* end = nullptr;
  const bool starts_well = !t.empty() && (std::isdigit(static_cast<unsigned char>(t[0])) || t[0] == '-' || t[0] == '.');
  const double v = starts_well ? std::strtod(t.c_str(), &end) : NAN;
  if (!starts_well || *end != '\0' || !(v >= min && v <= max))
    throw CliError("--" + name + " must be a number in [" + number(min) + ", " + number(max) + "], got '" + t + "'");
  return v;
}

std::vector<long> CliArgs::list(const std::string& name, std::vector<long> fallback, long min, long max) const {
  if (!has(name)) return fallback;
  std::vector<long> out;
  const std::string& t = values_.at(name);
  std::size_t start = 0;
  while (start <= t.size()) {
    const std::size_t end = std::min(t.find(',', start), t.size());
    long v = 0;
    if (!parse_integer(t.substr(start, end - start), min, max, v))
      throw CliError("--" + name + " takes integers in [" + std::to_string(min) + ", " + std::to_string(max) +
                     "] separated by commas, got '" + t + "'");
    out.push_back(v);
    start = end + 1;
  }
  return out;
}

}  // namespace weft::tuner
