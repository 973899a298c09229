// WEFT_ENGINE picks the engine of ThreadedLoops built without an explicit EngineKind.
#include <cstdlib>
#include <string>
#include <string_view>

#include "weft/jit/error.hpp"
#include "weft/parlooper/engine.hpp"

namespace weft::parlooper {

EngineKind default_engine_kind() {
  const char* env = std::getenv("WEFT_ENGINE");
  const std::string_view name = env != nullptr ? env : "";
  if (name == "jit") return EngineKind::jit;
  if (name == "reference") return EngineKind::reference;
  if (!name.empty())
    throw weft::Error("WEFT_ENGINE=" + std::string(name) + " is not an engine; use jit or reference");
  return EngineKind::jit;  // every architecture weft builds for has a nest emitter
}

}  // namespace weft::parlooper
