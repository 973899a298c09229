// Declaring and reading a command line (cli/command_line.hpp): weft's rules on top of CLI11.
#include "weft/cli/command_line.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

using weft::cli::UsageError;

struct Line {
  CLI::App app;
  std::int64_t n = 5;
  double x = 0;
  std::vector<long> list{1};
  std::string text;
  bool flag = false;
  int threads = 0;

  Line() {
    weft::cli::add_integer(app, "--n", n, 0, 10, "");
    weft::cli::add_number(app, "--x", x, 0, 1, "");
    weft::cli::add_integer_list(app, "--list", list, 1, 64, "");
    weft::cli::add_text(app, "--text", text, "");
    weft::cli::add_flag(app, "--flag", flag, "");
    weft::cli::add_threads(app, threads, 1);
  }
  // "" when it parses, else the UsageError's message.
  std::string parse(std::vector<std::string> words) {
    std::vector<char*> argv{const_cast<char*>("tool"), const_cast<char*>("command")};
    for (auto& w : words) argv.push_back(w.data());
    try {
      weft::cli::parse(app, static_cast<int>(argv.size()), argv.data(), 2);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  }
};

TEST(CliCommandLine, OptionsInBothFormsAndFlags) {
  Line line;
  EXPECT_EQ(line.parse({"--n", "3", "--x=0.25", "--list", "4,2", "--text=--odd", "--flag", "--threads", "2"}), "");
  EXPECT_EQ(line.n, 3);
  EXPECT_EQ(line.x, 0.25);
  EXPECT_EQ(line.list, (std::vector<long>{4, 2}));
  EXPECT_EQ(line.text, "--odd");  // a value may start with "--" when written with '='
  EXPECT_TRUE(line.flag);
  EXPECT_EQ(line.threads, 2);
  EXPECT_TRUE(weft::cli::given(line.app, "--n"));
  Line defaults;
  EXPECT_EQ(defaults.parse({}), "");
  EXPECT_EQ(defaults.n, 5);
  EXPECT_FALSE(weft::cli::given(defaults.app, "--n"));
  EXPECT_EQ(Line().parse({"--n", "-0"}), "");  // negative-looking values are values
}

TEST(CliCommandLine, EveryBadArgumentIsNamed) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--n"}, "option --n needs a value"},
      {{"--n="}, "option --n needs a value"},
      {{"--n", "--flag"}, "option --n needs a value"},
      {{"--text", ""}, "option --text needs a value"},
      {{"--n", "11"}, "--n: 11 is outside [0, 10]"},
      {{"--n", "two"}, "--n: 'two' is not an integer"},
      {{"--x", "nan"}, "--x: 'nan' is not a number"},
      {{"--list", "4,,2"}, "--list: '4,,2' is not a list of integers separated by commas (e.g. 32,64)"},
      {{"--threads", "0"}, "--threads: 0 is outside [1, 4096]"},
      {{"--n", "1", "--n", "1"}, "--n is given twice"},
      {{"--flag", "--flag"}, "--flag is given twice"},
      {{"--flag=1"}, "--flag takes no value, got '--flag=1'"},
      {{"--bogus"}, "unknown option --bogus"},
      {{"--bogus=3"}, "unknown option --bogus=3"},
      {{"-n", "3"}, "unknown option -n (did you mean --n?)"},
      {{"-q"}, "unknown option -q"},
      {{"--"}, "unknown option --"},
      {{"extra"}, "unexpected argument 'extra'"},
  };
  for (const auto& [words, says] : cases) {
    Line line;
    std::string joined;
    for (const auto& w : words) joined += w + " ";
    EXPECT_EQ(line.parse(words), says) << joined;
  }
}

TEST(CliCommandLine, HelpEndsTheParse) {
  for (const char* help : {"--help", "-h"}) {
    Line line;
    std::vector<std::string> words{"--n", "3", help};
    std::vector<char*> argv{const_cast<char*>("tool")};
    for (auto& w : words) argv.push_back(w.data());
    EXPECT_THROW(weft::cli::parse(line.app, static_cast<int>(argv.size()), argv.data()), CLI::CallForHelp) << help;
  }
}

}  // namespace
