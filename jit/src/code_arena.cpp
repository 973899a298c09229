#include "weft/jit/code_arena.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "near_mapping.hpp"
#include "weft/jit/error.hpp"
#include "weft/jit/log.hpp"

namespace weft::jit {
namespace detail {

struct CodeArenaState {
  struct Chunk {
    std::uintptr_t begin = 0;
    std::size_t bytes = 0;
    std::uint64_t offset = 0;      // in the memfd
    std::size_t high_water = 0;    // bytes from begin ever handed out: what a fork copies
  };

  CodeArenaLimits limits;
  std::mutex mutex;
  int fd = -1;
  std::uint64_t file_bytes = 0;
  std::vector<Chunk> chunks;
  std::map<std::uintptr_t, std::size_t> chunk_at;  // begin -> index in chunks
  std::map<std::uintptr_t, std::size_t> free_at;   // free block -> size; never spans two chunks
  std::set<std::pair<std::size_t, std::uintptr_t>> free_by_size;
  std::unordered_map<std::uintptr_t, std::size_t> used;  // installed block -> size
  std::size_t used_bytes = 0;
  std::size_t mapped_bytes = 0;
  // Between fork()'s prepare and parent/child handlers: the copy the child is to map.
  int child_fd = -1;
  // Set in a forked child whose private copy failed: its chunks may still be shared with the
  // parent, so nothing may be written into them.
  bool unusable_after_fork = false;
};

}  // namespace detail

namespace {

using detail::CodeArenaState;
using Chunk = CodeArenaState::Chunk;

std::size_t page_size() {
  static const auto size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// Linux 6.3+ may make memfds non-executable unless asked (vm.memfd_noexec); older kernels reject
// the flag with EINVAL and make every memfd executable.
constexpr unsigned kMfdExec = 0x0010U;

int create_code_file() {
  int fd = ::memfd_create("weft-jit-code", MFD_CLOEXEC | kMfdExec);
  if (fd < 0 && errno == EINVAL) fd = ::memfd_create("weft-jit-code", MFD_CLOEXEC);
  return fd;
}

bool write_all(int fd, const void* data, std::size_t size, std::uint64_t offset) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  while (size > 0) {
    const ssize_t n = ::pwrite(fd, p, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    size -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
  return true;
}

// ---- what differs between architectures ------------------------------------------------------
//
// kTrapByte: released blocks are filled with it, so that a stale call into one traps at once.
// code_written(): after install() wrote code into the memfd, before it hands the address out.
// code_released(): after release() filled a block with traps.
//
// Neither hardware needs more than that from the arena; what the AArch64 version does on top is for
// emulators (qemu-user, which runs the tests on x86 hosts): they run translations of the guest's
// code and notice that the code changed only when the guest writes to it through a mapping (they
// write-protect pages they translated code from) or changes its mappings. Code written with pwrite()
// is stored by the kernel, unseen, so qemu-aarch64 7.2 runs the code that was in a reused block
// before, however the cache is flushed; mmap, munmap and mprotect without PROT_EXEC make it drop
// the translations of the pages concerned (docs/jit_engine.md, "Memory", has the experiment).
#if defined(__x86_64__)

constexpr std::uint8_t kTrapByte = 0xCC;  // int3

// x86 keeps instruction fetch coherent with these stores (the same physical pages), and a block
// is only rewritten once released, when nothing runs it: a thread that gets the address after
// install() returns (through whatever synchronization handed it over) runs the new code.
void code_written(std::uintptr_t, std::size_t) {}

void code_released(const CodeArenaState&, const Chunk&, std::uintptr_t, std::size_t) {}

#elif defined(__aarch64__)

constexpr std::uint8_t kTrapByte = 0x00;  // the word 0x00000000 is udf #0 (permanently undefined)

// The kernel stored the code through its own mapping: clean the data cache to the point of
// unification and invalidate the instruction cache over the addresses it runs at (libgcc's
// __aarch64_sync_cache_range: dc cvau and ic ivau by virtual address, which need the range
// readable only, then dsb ish and isb). ic ivau is broadcast to every core of the inner shareable
// domain, and nothing ran the block since it was released (or ever), so no core holds its old
// instructions in flight.
void code_written(std::uintptr_t at, std::size_t size) {
  __builtin___clear_cache(reinterpret_cast<char*>(at), reinterpret_cast<char*>(at + size));
}

// The traps must reach instruction fetch as new code does. Then the pages the block lies on are
// mapped again, in place, from the same memfd pages, read+execute as before: under qemu-user this
// drops every translation made from them, so the next code installed in the block runs (without it,
// qemu keeps running the block's old code). The rest of those pages keeps working throughout: other
// threads may run live code on them while this happens (the kernel replaces the mapping under its
// mmap lock, and a thread that faults meanwhile waits for it; qemu retranslates). On hardware it
// costs a system call and a minor fault at the next call into those pages; the pages' mapping count
// is unchanged (the kernel merges the mapping with its neighbours again). Not mprotect: dropping
// PROT_EXEC for a moment would kill a thread running a neighbour on the same page.
void code_released(const CodeArenaState& s, const Chunk& chunk, std::uintptr_t at, std::size_t size) {
  code_written(at, size);
  const std::uintptr_t begin = at / page_size() * page_size();
  const std::uintptr_t end = round_up(at + size, page_size());
  const auto offset = static_cast<off_t>(chunk.offset + (begin - chunk.begin));
  void* const p = ::mmap(reinterpret_cast<void*>(begin), end - begin, PROT_READ | PROT_EXEC,
                         MAP_SHARED | MAP_FIXED, s.fd, offset);
  if (p == MAP_FAILED) {
    log().error("jit: code arena: mapping {} bytes at {} again failed ({}): under an emulator, code "
                "installed there later may not run",
                end - begin, reinterpret_cast<const void*>(begin), std::strerror(errno));
  }
}

#else
#error "weft's code arena knows x86-64 and AArch64 only: say how freed code traps and new code is seen"
#endif

// Constant-initialized and never destroyed: code in static caches is released during static
// destruction, in any order.
constexpr auto kTraps = [] {
  std::array<std::uint8_t, 4096> bytes{};
  for (auto& b : bytes) b = kTrapByte;
  return bytes;
}();

// Traps over a released block (int3, udf #0): a stale call into it traps at once.
void fill_with_traps(int fd, std::uint64_t offset, std::size_t size) {
  const auto& traps = kTraps;
  while (size > 0) {
    const std::size_t n = std::min(size, traps.size());
    if (!write_all(fd, traps.data(), n, offset)) return;  // best effort: the block is free anyway
    offset += n;
    size -= n;
  }
}

// "the process has 65530 mappings; vm.max_map_count is 65530": the usual reason mmap says ENOMEM.
std::string mapping_census() {
  std::size_t mappings = 0;
  {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) ++mappings;
  }
  std::string limit = "unknown";
  std::ifstream("/proc/sys/vm/max_map_count") >> limit;
  return "the process has " + std::to_string(mappings) + " mappings; vm.max_map_count is " + limit;
}

std::string describe(const CodeArenaState& s) {
  return std::to_string(s.chunks.size()) + " mappings of " + std::to_string(s.mapped_bytes) +
         " bytes in all, " + std::to_string(s.used_bytes) + " bytes in " +
         std::to_string(s.used.size()) + " live blocks";
}

const Chunk& chunk_of(const CodeArenaState& s, std::uintptr_t address) {
  return s.chunks[std::prev(s.chunk_at.upper_bound(address))->second];
}

bool same_chunk(const CodeArenaState& s, std::uintptr_t a, std::uintptr_t b) {
  return &chunk_of(s, a) == &chunk_of(s, b);
}

void erase_free(CodeArenaState& s, std::map<std::uintptr_t, std::size_t>::iterator it) {
  s.free_by_size.erase({it->second, it->first});
  s.free_at.erase(it);
}

// Adds [at, at + size) to the free blocks, merged with free neighbours in the same chunk (chunks
// may be adjacent in memory, but a block must lie in one chunk: it is written at one file offset).
void add_free(CodeArenaState& s, std::uintptr_t at, std::size_t size) {
  auto next = s.free_at.lower_bound(at);
  if (next != s.free_at.end() && next->first == at + size && same_chunk(s, at, next->first)) {
    size += next->second;
    auto after = std::next(next);
    erase_free(s, next);
    next = after;
  }
  if (next != s.free_at.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == at && same_chunk(s, prev->first, at)) {
      at = prev->first;
      size += prev->second;
      erase_free(s, prev);
    }
  }
  s.free_at.emplace(at, size);
  s.free_by_size.emplace(size, at);
}

// The smallest free block that fits (lowest address among equals), split; 0 when none fits.
std::uintptr_t take_free(CodeArenaState& s, std::size_t size) {
  const auto best = s.free_by_size.lower_bound({size, 0});
  if (best == s.free_by_size.end()) return 0;
  const auto [block_size, at] = *best;
  erase_free(s, s.free_at.find(at));
  if (block_size > size) {
    s.free_at.emplace(at + size, block_size - size);
    s.free_by_size.emplace(block_size - size, at + size);
  }
  return at;
}

// Maps one more chunk, large enough for `size`.
void grow(CodeArenaState& s, std::size_t size, std::string_view what) {
  const std::size_t bytes = std::max(round_up(s.limits.chunk_bytes, page_size()), round_up(size, page_size()));
  const auto fail = [&](const std::string& why) {
    return Error("jit code arena: cannot make room for " + std::string(what) + " (" +
                 std::to_string(size) + " bytes): " + why + "; the arena holds " + describe(s));
  };
  if (s.mapped_bytes + bytes > s.limits.max_bytes) {
    throw fail("another " + std::to_string(bytes) + " bytes would exceed its limit of " +
               std::to_string(s.limits.max_bytes) +
               " bytes. Generated code is kept by the caches that made it (bounded by "
               "WEFT_NEST_CACHE_SIZE and WEFT_KERNEL_CACHE_SIZE) and by live loops and kernels");
  }
  if (s.fd < 0) {
    s.fd = create_code_file();
    if (s.fd < 0) throw fail(std::string("memfd_create failed: ") + std::strerror(errno));
  }
  if (::ftruncate(s.fd, static_cast<off_t>(s.file_bytes + bytes)) != 0) {
    throw fail("growing its memfd to " + std::to_string(s.file_bytes + bytes) +
               " bytes failed: " + std::strerror(errno));
  }
  void* p = detail::map_near(bytes, PROT_READ | PROT_EXEC, s.fd, s.file_bytes);
  if (p == nullptr) {
    const int err = errno;
    [[maybe_unused]] const int ignored = ::ftruncate(s.fd, static_cast<off_t>(s.file_bytes));
    throw fail("mapping " + std::to_string(bytes) + " more bytes read+execute failed: " +
               std::strerror(err) + " (" + mapping_census() + ")");
  }
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  s.chunks.push_back(Chunk{begin, bytes, s.file_bytes, 0});
  s.chunk_at.emplace(begin, s.chunks.size() - 1);
  s.file_bytes += bytes;
  s.mapped_bytes += bytes;
  add_free(s, begin, bytes);
  log().debug("jit: code arena grew to {}", describe(s));
}

// ---- fork: parent and child must not share the pages they write code into --------------------

std::mutex& registry_mutex() {
  static auto* const mutex = new std::mutex;  // never destroyed: fork handlers outlive statics
  return *mutex;
}

std::vector<CodeArenaState*>& registry() {
  static auto* const arenas = new std::vector<CodeArenaState*>;
  return *arenas;
}

// The child's chunks would still show the parent's memfd, so a later install or release in either
// process would change code the other one runs. Each arena is copied into a new memfd before the
// fork, while its lock holds off every change; the child maps the copy over the same addresses
// (so every code pointer stays valid) and keeps it, the parent closes it. The copy cannot be made
// in the child: the parent may change the shared pages as soon as fork() returns.
void copy_for_child(CodeArenaState& s) {
  s.child_fd = -1;
  if (s.fd < 0) return;
  const int fd = create_code_file();
  bool ok = fd >= 0 && ::ftruncate(fd, static_cast<off_t>(s.file_bytes)) == 0;
  for (const Chunk& c : s.chunks) {
    ok = ok && write_all(fd, reinterpret_cast<const void*>(c.begin), c.high_water, c.offset);
  }
  if (ok) {
    s.child_fd = fd;
  } else if (fd >= 0) {
    ::close(fd);
  }
}

// Only system calls here: the child of a multithreaded process may not allocate.
void adopt_copy_in_child(CodeArenaState& s) {
  if (s.fd < 0) return;
  bool ok = s.child_fd >= 0;
  for (const Chunk& c : s.chunks) {
    ok = ok && ::mmap(reinterpret_cast<void*>(c.begin), c.bytes, PROT_READ | PROT_EXEC,
                      MAP_SHARED | MAP_FIXED, s.child_fd, static_cast<off_t>(c.offset)) != MAP_FAILED;
  }
  ::close(s.fd);
  if (ok) {
    s.fd = s.child_fd;
  } else {
    if (s.child_fd >= 0) ::close(s.child_fd);
    s.fd = -1;
    s.unusable_after_fork = true;
  }
  s.child_fd = -1;
}

// Holding every arena's lock across fork() means no install is half done in the copy.
void before_fork() {
  registry_mutex().lock();
  for (CodeArenaState* s : registry()) {
    s->mutex.lock();
    copy_for_child(*s);
  }
}

void after_fork_in_parent() {
  for (CodeArenaState* s : registry()) {
    if (s->child_fd >= 0) ::close(s->child_fd);
    s->child_fd = -1;
    s->mutex.unlock();
  }
  registry_mutex().unlock();
}

void after_fork_in_child() {
  for (CodeArenaState* s : registry()) {
    adopt_copy_in_child(*s);
    s->mutex.unlock();
  }
  registry_mutex().unlock();
}

void register_arena(CodeArenaState* s) {
  static std::once_flag handlers;
  std::call_once(handlers, [] { ::pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child); });
  const std::lock_guard lock(registry_mutex());
  registry().push_back(s);
}

void unregister_arena(CodeArenaState* s) {
  const std::lock_guard lock(registry_mutex());
  auto& arenas = registry();
  arenas.erase(std::remove(arenas.begin(), arenas.end(), s), arenas.end());
}

}  // namespace

CodeArena::CodeArena(CodeArenaLimits limits) : state_(std::make_unique<detail::CodeArenaState>()) {
  if (limits.chunk_bytes == 0) throw Error("jit code arena: chunk_bytes must be positive");
  state_->limits = limits;
  register_arena(state_.get());
}

CodeArena::~CodeArena() {
  unregister_arena(state_.get());
  CodeArenaState& s = *state_;
  if (!s.used.empty()) {
    log().warn("jit: code arena destroyed with {} blocks ({} bytes) still installed", s.used.size(),
               s.used_bytes);
  }
  for (const Chunk& c : s.chunks) ::munmap(reinterpret_cast<void*>(c.begin), c.bytes);
  if (s.fd >= 0) ::close(s.fd);
}

const void* CodeArena::install(const void* code, std::size_t size, std::string_view what) {
  CodeArenaState& s = *state_;
  const std::size_t bytes = round_up(std::max<std::size_t>(size, 1), kAlignment);
  const std::lock_guard lock(s.mutex);
  if (s.unusable_after_fork) {
    throw Error("jit code arena: cannot install " + std::string(what) +
                ": this process is a fork() child and making a private copy of the parent's "
                "code failed, so no code can be generated here");
  }
  std::uintptr_t at = take_free(s, bytes);
  if (at == 0) {
    grow(s, bytes, what);
    at = take_free(s, bytes);
  }
  Chunk& chunk = s.chunks[std::prev(s.chunk_at.upper_bound(at))->second];
  if (!write_all(s.fd, code, size, chunk.offset + (at - chunk.begin))) {
    const int err = errno;
    add_free(s, at, bytes);
    throw Error("jit code arena: writing " + std::to_string(size) + " bytes of " + std::string(what) +
                " failed: " + std::strerror(err) + "; the arena holds " + describe(s));
  }
  code_written(at, size);
  chunk.high_water = std::max(chunk.high_water, at - chunk.begin + bytes);
  s.used.emplace(at, bytes);
  s.used_bytes += bytes;
  return reinterpret_cast<const void*>(at);
}

void CodeArena::release(const void* code) noexcept {
  if (code == nullptr) return;
  CodeArenaState& s = *state_;
  const auto at = reinterpret_cast<std::uintptr_t>(code);
  const std::lock_guard lock(s.mutex);
  const auto it = s.used.find(at);
  if (it == s.used.end()) {
    log().error("jit: code arena: release of {} which it did not install (or released twice)", code);
    return;
  }
  const std::size_t bytes = it->second;
  s.used.erase(it);
  s.used_bytes -= bytes;
  if (s.unusable_after_fork) return;  // the pages may be the parent's: leave them alone
  const Chunk& chunk = chunk_of(s, at);
  fill_with_traps(s.fd, chunk.offset + (at - chunk.begin), bytes);
  code_released(s, chunk, at, bytes);
  add_free(s, at, bytes);
}

CodeArenaStats CodeArena::stats() const {
  const CodeArenaState& s = *state_;
  const std::lock_guard lock(state_->mutex);
  CodeArenaStats stats;
  stats.chunks = s.chunks.size();
  stats.mapped_bytes = s.mapped_bytes;
  stats.used_blocks = s.used.size();
  stats.used_bytes = s.used_bytes;
  stats.largest_free = s.free_by_size.empty() ? 0 : s.free_by_size.rbegin()->first;
  return stats;
}

const CodeArenaLimits& CodeArena::limits() const { return state_->limits; }

CodeArena& default_code_arena() {
  static CodeArena* const arena = new CodeArena;
  return *arena;
}

}  // namespace weft::jit
