#include "near_mapping.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <mutex>

namespace weft::jit::detail {
namespace {

std::size_t page_size() {
  static const auto size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

// How far from our code a mapping may land: well inside the +-2 GiB of a rel32 displacement.
constexpr std::uintptr_t kReach = std::uintptr_t{1} << 30;
// Where packing starts below our code, and how far to skip past a range someone else holds.
constexpr std::uintptr_t kSkip = std::uintptr_t{16} << 20;

std::uintptr_t anchor() { return reinterpret_cast<std::uintptr_t>(&map_near); }

}  // namespace

// Mappings are packed downwards from just below our code: each one ends where the previous one
// starts. A range that is taken is skipped. When the reach is used up, mappings go anywhere.
void* map_near(std::size_t bytes, int prot, int fd, std::uint64_t offset) {
  static std::mutex mutex;
  static std::uintptr_t cursor = (anchor() & ~(page_size() - 1)) - kSkip;
  const std::lock_guard lock(mutex);
  const auto file_offset = static_cast<off_t>(offset);
  const std::uintptr_t lowest = anchor() > kReach ? anchor() - kReach : 0;
  while (cursor > lowest + bytes) {
    const std::uintptr_t hint = cursor - bytes;
    void* p = ::mmap(reinterpret_cast<void*>(hint), bytes, prot, MAP_SHARED, fd, file_offset);
    if (p == MAP_FAILED) return nullptr;
    if (reinterpret_cast<std::uintptr_t>(p) == hint) {
      cursor = hint;
      return p;
    }
    ::munmap(p, bytes);  // the kernel put it elsewhere: [hint, cursor) overlaps a taken range
    cursor = hint > kSkip ? hint - kSkip : 0;
  }
  void* p = ::mmap(nullptr, bytes, prot, MAP_SHARED, fd, file_offset);
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace weft::jit::detail
