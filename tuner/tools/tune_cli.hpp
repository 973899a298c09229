// Command-line parsing of weft-tune: "--name value" (or "--name=value") options and "--flag"
// switches in any order after the command. Malformed input throws CliError naming the argument,
// which the tool turns into the usage text and exit status 2.
#pragma once

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace weft::tuner {

struct CliError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class CliArgs {
 public:
  // `options` take a value, `flags` do not; anything else, an option given twice, a flag given a
  // value or an option whose value is missing is a CliError naming it. "--help" and "-h" are
  // always accepted (help_requested()).
  CliArgs(int argc, char** argv, int first, const std::set<std::string>& options,
          const std::set<std::string>& flags);

  bool has(const std::string& name) const { return values_.count(name) != 0; }
  bool help_requested() const { return help_; }
  std::string text(const std::string& name, const std::string& fallback) const;
  // A value that must not be empty (a path, a list).
  std::string nonempty_text(const std::string& name, const std::string& fallback) const;
  long integer(const std::string& name, long fallback, long min, long max) const;
  double real(const std::string& name, double fallback, double min, double max) const;
  // "32,64" -> {32, 64}, each in [min, max]; fallback when absent.
  std::vector<long> list(const std::string& name, std::vector<long> fallback, long min, long max) const;

 private:
  std::map<std::string, std::string> values_;
  bool help_ = false;
};

// Strict decimal integer: the whole text, no blanks, no sign other than '-', within [min, max].
// Returns false (and leaves `value`) when the text is anything else.
bool parse_integer(const std::string& text, long min, long max, long& value);

}  // namespace weft::tuner
