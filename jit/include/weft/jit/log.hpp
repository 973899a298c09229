// weft's logger, writing to stderr at the level WEFT_LOG_LEVEL names (trace, debug, info, warn,
// error, off); unset, warn: a healthy run says nothing, a problem the user can fix (a corrupt tuning
// database) is said. JIT events (what was generated, for which descriptor, how long it took) go
// to debug.
//
//   weft::log().debug("generated {} ({} bytes)", name, size);
#pragma once

#include <spdlog/logger.h>

namespace weft {

spdlog::logger& log();

}  // namespace weft
