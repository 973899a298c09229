// Executable memory shared by generated code: loop nests, TPP kernels and trampolines pack into
// a few large chunks instead of taking two mappings each, and freed code is reused. CodeBuffer
// uses the process-wide arena; tests and tools may make their own (with a small limit, say).
//
//   weft::jit::CodeArena arena({.chunk_bytes = 64 << 10, .max_bytes = 1 << 20});
//   const void* fn = arena.install(bytes.data(), bytes.size(), "my kernel");  // copied; runs there
//   ...
//   arena.release(fn);                     // the space goes back to the arena's free list
//
// How (docs/jit_engine.md, "Memory"):
// - An arena is one memfd, grown a chunk at a time. Each chunk is mapped once, read+execute,
//   within rel32 reach of weft's own code. Nothing is ever mapped writable: code goes into the
//   memfd with pwrite(), and the read+execute view shows it at once (they are the same pages). So
//   no mapping is writable and executable at once, and no writable alias of code exists at all:
//   better than a persistent read+write view (a stray store could change code through it) and
//   cheaper than a transient one (one system call instead of mmap + munmap, whose TLB shootdown
//   interrupts every core running the process).
// - Mappings = chunks <= max_bytes / chunk_bytes (a block larger than a chunk gets a chunk of its
//   own, as large as it needs).
// - Blocks start on kAlignment boundaries: code emitted at a kAlignment-aligned scratch address
//   has the same bytes there as here, alignment padding included.
// - Best fit over free blocks, coalesced with their neighbours on release; freed blocks are filled
//   with int3 (udf #0 on AArch64), so a call into freed code traps instead of running whatever
//   comes next. On AArch64 the instruction cache is synchronized after every write, and the pages
//   of a freed block are mapped again (same memfd pages, read+execute) for emulators such as
//   qemu-user, which would otherwise keep running the block's old code (code_arena.cpp says why).
// - After fork() the child gets a private copy of every arena (its own memfd), so neither process
//   can change code the other runs. The copy costs time in proportion to the code; posix_spawn and
//   vfork do not run fork handlers and copy nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace weft::jit {

struct CodeArenaLimits {
  std::size_t chunk_bytes = std::size_t{2} << 20;  // one growth step (rounded up to pages)
  std::size_t max_bytes = std::size_t{1} << 30;    // all chunks together; beyond: weft::Error
};

struct CodeArenaStats {
  std::size_t chunks = 0;        // mappings the arena holds
  std::size_t mapped_bytes = 0;  // their size
  std::size_t used_blocks = 0;   // installed, not yet released
  std::size_t used_bytes = 0;    // their size, rounded up to kAlignment each
  std::size_t largest_free = 0;  // the largest block an install could get without growing
};

namespace detail {
struct CodeArenaState;
}

class CodeArena {
 public:
  static constexpr std::size_t kAlignment = 64;

  explicit CodeArena(CodeArenaLimits limits = {});
  // Unmaps every chunk: code still installed must not run any more (a warning is logged).
  ~CodeArena();
  CodeArena(const CodeArena&) = delete;
  CodeArena& operator=(const CodeArena&) = delete;

  // Copies `size` bytes of position-independent code into the arena and returns where it runs.
  // Thread-safe. Throws weft::Error, naming `what`, when the arena cannot grow: its limit is
  // reached, or the system refuses a mapping (the message gives the process's mapping count and
  // vm.max_map_count) or memory.
  const void* install(const void* code, std::size_t size, std::string_view what);

  // Gives back the block install() returned. Nothing may run it any more. Thread-safe; nullptr
  // is ignored.
  void release(const void* code) noexcept;

  CodeArenaStats stats() const;
  const CodeArenaLimits& limits() const;

 private:
  std::unique_ptr<detail::CodeArenaState> state_;
};

// The arena of every CodeBuffer that is not given another. Never destroyed: code in static caches
// may be released during static destruction.
CodeArena& default_code_arena();

}  // namespace weft::jit
