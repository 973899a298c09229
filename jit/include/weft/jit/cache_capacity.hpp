// The bound of a cache of generated code, read from an environment variable: the kernel caches
// (WEFT_KERNEL_CACHE_SIZE) and the loop-nest cache (WEFT_NEST_CACHE_SIZE) take the same kind of value.
//
//   const std::size_t nests = weft::jit::cache_capacity_from_env("WEFT_NEST_CACHE_SIZE", "loop nests", 4096);
#pragma once

#include <cstddef>

namespace weft::jit {

// The count in `variable` (decimal digits only, 0 allowed), or `fallback` when it is unset or empty.
// Throws weft::Error naming the variable, its value, what it counts (`what`) and the default.
std::size_t cache_capacity_from_env(const char* variable, const char* what, std::size_t fallback);

}  // namespace weft::jit
