#include "weft/jit/log.hpp"

#include <cstdlib>
#include <memory>
#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace weft {
namespace {

spdlog::level::level_enum level_from_env() {
  const char* env = std::getenv("WEFT_LOG_LEVEL");
  // Warnings are about something the user can fix (a corrupt tuning database, a perf map that
  // cannot be written): shown unless asked not to. A healthy run logs nothing at that level.
  if (env == nullptr || *env == '\0') return spdlog::level::warn;
  const std::string name(env);
  if (name == "warn") return spdlog::level::warn;  // spdlog spells it "warning"
  const auto level = spdlog::level::from_str(name);
  // from_str answers "off" for names it does not know; say so rather than stay silently quiet.
  if (level == spdlog::level::off && name != "off") {
    std::fprintf(stderr, "weft: WEFT_LOG_LEVEL='%s' is not one of trace, debug, info, warn, error, off\n",
                 env);
  }
  return level;
}

std::shared_ptr<spdlog::logger> make_logger() {
  // Not registered globally: weft must not collide with an application's own "weft" logger.
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("weft", std::move(sink));
  logger->set_level(level_from_env());
  logger->set_pattern("[weft %L %t] %v");
  return logger;
}

}  // namespace

spdlog::logger& log() {
  static const std::shared_ptr<spdlog::logger> logger = make_logger();
  return *logger;
}

}  // namespace weft
