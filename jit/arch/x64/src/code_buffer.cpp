#include "weft/jit/x64/code_buffer.hpp"

#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include "weft/jit/x64/code_buffer_testing.hpp"
#include "weft/jit/error.hpp"
#include "weft/jit/log.hpp"
#include "weft/jit/perf_map.hpp"

namespace weft::jit::x64 {
namespace {

thread_local std::size_t t_scratch_shift = 0;
thread_local testing::FinalizedCodeLog* t_finalized_log = nullptr;

// Scratch buffers for emission: heap memory, never executable. Xbyak allocates the buffer through
// this allocator in its own constructor, before the emitter's, which is what its user-buffer mode
// cannot offer a base class; with useProtect() false it never touches the protection.
class ScratchAllocator final : public Xbyak::Allocator {
 public:
  // The block starts kAlignment-aligned, like arena blocks, so that align() pads alike in both;
  // the bytes before it hold the address to free. Aligned by hand: glibc's aligned allocation
  // splits chunks in a way that, with a transient scratch buffer per generated nest, left the
  // heap at 4x its live size after 40,000 nests.
  std::uint8_t* alloc(std::size_t size) override {
    const std::size_t shift = t_scratch_shift;
    auto* base = static_cast<std::uint8_t*>(::operator new(2 * kHeader + shift + size));
    std::uint8_t* scratch = reinterpret_cast<std::uint8_t*>(
        (reinterpret_cast<std::uintptr_t>(base) + 2 * kHeader - 1) / kHeader * kHeader) + shift;
    std::memcpy(scratch - sizeof base, &base, sizeof base);
    return scratch;
  }

  void free(std::uint8_t* scratch) override {
    if (scratch == nullptr) return;
    std::uint8_t* base = nullptr;
    std::memcpy(&base, scratch - sizeof base, sizeof base);
    ::operator delete(base);
  }

  bool useProtect() const override { return false; }

 private:
  static constexpr std::size_t kHeader = CodeArena::kAlignment;
};

// One for the process and never destroyed: Xbyak frees through it from the base-class destructor,
// after the derived CodeBuffer's members are gone.
ScratchAllocator& scratch_allocator() {
  static auto* const allocator = new ScratchAllocator;
  return *allocator;
}

}  // namespace

CodeBuffer::CodeBuffer(std::size_t max_size) : CodeBuffer(max_size, default_code_arena()) {}

CodeBuffer::CodeBuffer(std::size_t max_size, CodeArena& arena)
    // DontSetProtectRWE: Xbyak would otherwise try to make the buffer writable and executable.
    : Xbyak::CodeGenerator(max_size, Xbyak::DontSetProtectRWE, &scratch_allocator()), arena_(&arena) {}

CodeBuffer::~CodeBuffer() {
  if (finalized_) {
    arena_->release(top_);
    top_ = nullptr;  // Xbyak's destructor frees top_ through the scratch allocator: nothing now
  }
}

const void* CodeBuffer::finalize_raw(std::string_view name) {
  if (finalized_) throw Error("code buffer '" + name_ + "' finalized twice");
  try {
    ready();  // checks that every label is defined; a fixed-size buffer resolves them as it goes
  } catch (const Xbyak::Error& e) {
    throw Error("jit: " + std::string(name) + ": " + e.what());
  }
  std::uint8_t* const scratch = top_;
  const std::size_t scratch_bytes = maxSize_;
  const std::size_t size = getSize();
  const void* code = arena_->install(scratch, size, name);
  if (t_finalized_log != nullptr) {
    t_finalized_log->append(testing::FinalizedCode{std::string(name), reinterpret_cast<std::uintptr_t>(scratch),
                                                   scratch_bytes, code, {scratch, scratch + size}});
  }
  scratch_allocator().free(scratch);
  // From here Xbyak's buffer is the installed code: getCode() and getSize() describe it, and
  // emitting more throws (the buffer is full) instead of writing anywhere.
  top_ = static_cast<std::uint8_t*>(const_cast<void*>(code));
  maxSize_ = size;
  finalized_ = true;
  name_ = std::string(name);
  perf_map_register(code, size, name_);
  const auto elapsed = std::chrono::steady_clock::now() - created_;
  log().debug("jit: {} at {} ({} bytes, {:.1f} us)", name_, code, size,
              std::chrono::duration<double, std::micro>(elapsed).count());
  return code;
}

void CodeBuffer::align(std::size_t x, bool use_multi_byte_nop) {
  if (x > CodeArena::kAlignment) {
    throw Error("jit: align(" + std::to_string(x) + ") exceeds the " + std::to_string(CodeArena::kAlignment) +
                "-byte alignment of code in the arena");
  }
  Xbyak::CodeGenerator::align(x, use_multi_byte_nop);
}

namespace testing {

FinalizedCodeLog::FinalizedCodeLog() : previous_(t_finalized_log) { t_finalized_log = this; }
FinalizedCodeLog::~FinalizedCodeLog() { t_finalized_log = previous_; }

ScratchShift::ScratchShift(std::size_t bytes) : previous_(t_scratch_shift) {
  if (bytes % CodeArena::kAlignment != 0)
    throw Error("ScratchShift: " + std::to_string(bytes) + " is not a multiple of " +
                std::to_string(CodeArena::kAlignment));
  t_scratch_shift = bytes;
}
ScratchShift::~ScratchShift() { t_scratch_shift = previous_; }

}  // namespace testing
}  // namespace weft::jit::x64
