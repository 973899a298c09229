// An AArch64 code buffer for one generated function: our A64 assembler plus installation in a
// CodeArena. Emitters derive from it and use the assembler's mnemonics:
//
//   struct AddOne : weft::jit::a64::CodeBuffer {
//     AddOne() { add(w0, w0, 1); ret(); }
//   };
//   AddOne code;
//   auto fn = code.finalize<int (*)(int)>("add_one");
//   fn(41);  // 42
//
// The assembler keeps the words in ordinary memory (never executable); finalize() copies them into
// the arena (read+execute, never writable; the arena synchronizes the instruction cache over the
// range) and returns where the code runs. The destructor gives the code back to the arena. A64
// branches are PC-relative and calls go through registers (blr), so the code runs anywhere.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "weft/jit/aarch64/assembler.hpp"
#include "weft/jit/code_arena.hpp"
#include "weft/jit/generated_code.hpp"

namespace weft::jit::a64 {

class CodeBuffer : public Assembler, public GeneratedCode {
 public:
  CodeBuffer() : CodeBuffer(default_code_arena()) {}
  explicit CodeBuffer(CodeArena& arena) : arena_(&arena) {}
  ~CodeBuffer() override;
  CodeBuffer(const CodeBuffer&) = delete;
  CodeBuffer& operator=(const CodeBuffer&) = delete;

  // Copies the code into the arena, registers it in the perf map and logs it at debug level.
  // Throws weft::Error naming `name` when a used label is unbound, when finalized twice, or when
  // the arena cannot take the code. Afterwards code_bytes() shows the installed code.
  const void* finalize_raw(std::string_view name) override;
  using GeneratedCode::finalize;

  std::span<const std::uint8_t> code_bytes() const override;

  bool finalized() const { return installed_ != nullptr; }
  const std::string& name() const { return name_; }

 private:
  CodeArena* arena_;
  std::chrono::steady_clock::time_point created_ = std::chrono::steady_clock::now();
  const void* installed_ = nullptr;
  std::size_t installed_size_ = 0;
  std::string name_;
};

}  // namespace weft::jit::a64
