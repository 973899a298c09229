// The values weft's programs read from their command lines, checked strictly (the whole text, in
// range) and reported in one wording, "<name>: <problem>":
//
//   parse_integer("0", "bm", 1, 4096);           // UsageError "bm: 0 is outside [1, 4096]"
//   parse_integer("12abc", "--threads", 1, 8);   // UsageError "--threads: '12abc' is not an integer"
//   parse_integer_list("8,2", "--m-blocks", 1, 64);   // {8, 2}
//
// The options of command_line.hpp and the samples' positional arguments both read through these.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include <weft/jit/error.hpp>

namespace weft::cli {

// A bad command line: the program prints the message and its usage, and exits with status 2
// (run_tool.hpp).
class UsageError : public Error {
 public:
  using Error::Error;
};

// A decimal integer (an optional '-', then digits only) in [min, max].
std::int64_t parse_integer(std::string_view text, std::string_view name, std::int64_t min, std::int64_t max);

// A decimal number in [min, max] ("0.5", "1e3"); never NaN or infinite.
double parse_number(std::string_view text, std::string_view name, double min, double max);

// Integers in [min, max] separated by commas ("32,64"); none may be empty.
std::vector<long> parse_integer_list(std::string_view text, std::string_view name, long min, long max);

}  // namespace weft::cli
