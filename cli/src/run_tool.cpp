#include "weft/cli/run_tool.hpp"

#include <exception>

#include <CLI/CLI.hpp>

#include "weft/cli/values.hpp"

namespace weft::cli {
namespace {

int usage_error(const Tool& tool, const char* message) {
  std::fprintf(tool.err, "%s: %s\n%s", tool.name.c_str(), message, tool.usage.c_str());
  return 2;
}

}  // namespace

int run_tool(const Tool& tool, const std::function<int()>& body) {
  try {
    return body();
  } catch (const CLI::Success&) {  // --help
    std::fputs(tool.usage.c_str(), tool.out);
    return 0;
  } catch (const CLI::ParseError& e) {
    return usage_error(tool, e.what());
  } catch (const UsageError& e) {
    return usage_error(tool, e.what());
  } catch (const MemoryError& e) {
    // Sizes beyond the machine are bad arguments; a failed allocation that would have fit is not.
    std::fprintf(tool.err, "%s: %s\n", tool.name.c_str(), e.what());
    return e.reason() == MemoryError::Reason::allocation_failed ? 1 : 2;
  } catch (const Error& e) {
    std::fprintf(tool.err, "%s: %s\n", tool.name.c_str(), e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(tool.err, "%s: %s\n", tool.name.c_str(), e.what());
    return 1;
  }
}

}  // namespace weft::cli
