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

}  // namespace weft::test
