#include "weft/cli/command_line.hpp"

#include <algorithm>
#include <functional>
#include <utility>

namespace weft::cli {
namespace {

// An option whose one value `read` turns into the target. Repetitions are kept (TakeLast) so that
// parse() can name them, instead of CLI11's "At Most 1 required but received 2".
CLI::Option* add_reader(CLI::App& app, const std::string& name, const std::string& description,
                        std::function<void(const std::string&)> read) {
  CLI::Option* option = app.add_option_function<std::string>(name, std::move(read), description);
  return option->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

// CLI11 2.1 takes the next argument as the value of "--name=" and of "--name" followed by another
// option ("--db --no-save" would write a file named --no-save), and reads "--flag=1" as a boolean.
// weft's programs refuse these rather than guess.
void check_option_values(const CLI::App& app, const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() <= 2 || arg.rfind("--", 0) != 0) continue;
    const std::size_t equals = arg.find('=');
    const std::string name = arg.substr(0, equals);
    const CLI::Option* option = app.get_option_no_throw(name);
    if (option == nullptr) continue;  // unknown: parse() names it
    if (option->get_items_expected_max() == 0) {
      if (equals != std::string::npos) throw UsageError(name + " takes no value, got '" + arg + "'");
      continue;
    }
    const bool missing = equals == std::string::npos
                             ? i + 1 == args.size() || args[i + 1].rfind("--", 0) == 0
                             : equals + 1 == arg.size();
    if (missing) throw UsageError("option " + name + " needs a value");
  }
}

}  // namespace

CLI::Option* add_integer(CLI::App& app, const std::string& name, std::int64_t& target, std::int64_t min,
                         std::int64_t max, const std::string& description) {
  return add_reader(app, name, description,
                    [&target, name, min, max](const std::string& text) { target = parse_integer(text, name, min, max); });
}

CLI::Option* add_number(CLI::App& app, const std::string& name, double& target, double min, double max,
                        const std::string& description) {
  return add_reader(app, name, description,
                    [&target, name, min, max](const std::string& text) { target = parse_number(text, name, min, max); });
}

CLI::Option* add_integer_list(CLI::App& app, const std::string& name, std::vector<long>& target, long min,
                              long max, const std::string& description) {
  return add_reader(app, name, description, [&target, name, min, max](const std::string& text) {
    target = parse_integer_list(text, name, min, max);
  });
}

CLI::Option* add_text(CLI::App& app, const std::string& name, std::string& target, const std::string& description) {
  return add_reader(app, name, description, [&target, name](const std::string& text) {
    if (text.empty()) throw UsageError("option " + name + " needs a value");
    target = text;
  });
}

CLI::Option* add_flag(CLI::App& app, const std::string& name, bool& target, const std::string& description) {
  return app.add_flag(name, target, description)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

CLI::Option* add_threads(CLI::App& app, int& threads, int min) {
  return add_reader(app, "--threads", "threads of the run", [&threads, min](const std::string& text) {
    threads = static_cast<int>(parse_integer(text, "--threads", min, kMaxThreads));
  });
}

bool given(const CLI::App& app, const std::string& name) { return app.count(name) > 0; }

void parse(CLI::App& app, int argc, char** argv, int first) {
  std::vector<std::string> args(argv + std::min(first, argc), argv + argc);
  check_option_values(app, args);
  app.allow_extras();
  std::reverse(args.begin(), args.end());  // CLI11 reads the vector from its end
  app.parse(args);
  for (const std::string& extra : app.remaining()) {
    if (extra.size() <= 1 || extra[0] != '-') throw UsageError("unexpected argument '" + extra + "'");
    // weft's options are long ones only: "-M" most likely meant "--M".
    const bool long_form = extra[1] != '-' && app.get_option_no_throw("-" + extra) != nullptr;
    throw UsageError("unknown option " + extra + (long_form ? " (did you mean -" + extra + "?)" : ""));
  }
  for (const CLI::Option* option : app.get_options()) {
    if (option->nonpositional() && option->get_items_expected_max() <= 1 && option->count() > 1)
      throw UsageError(option->get_name() + " is given twice");
  }
}

}  // namespace weft::cli
