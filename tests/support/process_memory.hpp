// What the process holds, as the kernel counts it: for tests that check that something stays
// bounded.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <fstream>
#include <string>

namespace weft::test {

// Lines of /proc/self/maps: the count vm.max_map_count limits.
inline std::size_t mapping_count() {
  std::ifstream maps("/proc/self/maps");
  std::size_t lines = 0;
  for (std::string line; std::getline(maps, line);) ++lines;
  return lines;
}

// Resident memory in bytes (/proc/self/statm, second field).
inline std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

// What resident memory may grow by beyond `program_bytes` for reasons of the build, not of the
// code under test: under the address sanitizer, freed blocks wait in its quarantine (256 MiB by
// default, ASAN_OPTIONS=quarantine_size_mb) before they are reused, so a process that frees as
// much as it allocates still grows by up to that much.
inline std::size_t resident_slack(std::size_t program_bytes) {
#if defined(__SANITIZE_ADDRESS__)
  constexpr bool address_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  constexpr bool address_sanitizer = true;
#else
  constexpr bool address_sanitizer = false;
#endif
#else
  constexpr bool address_sanitizer = false;
#endif
  return program_bytes + (address_sanitizer ? std::size_t{256} << 20 : 0);
}

}  // namespace weft::test
