// An x86-64 code buffer for one generated function. Emitters derive from it and use Xbyak's mnemonics:
//
//   struct AddOne : weft::jit::x64::CodeBuffer {
//     AddOne() { mov(eax, edi); add(eax, 1); ret(); }
//   };
//   AddOne code;
//   auto fn = code.finalize<int (*)(int)>("add_one");
//   fn(41);  // 42
//
// The code is emitted into a private scratch buffer (heap memory: read+write, never executable);
// finalize() copies it into a CodeArena (read+execute, never writable), frees the scratch buffer
// and returns where the code runs. The destructor gives the code back to the arena.
//
// Because the code runs elsewhere than where it was emitted, it must not depend on its own
// address: labels within the buffer (jumps, calls, rip-relative data) are fine; calls and jumps
// to absolute addresses (rel32 from the scratch buffer) and absolute label addresses are not, and
// are compile errors here. Call other code through a register: mov(rax, fn); call(rax).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <xbyak/xbyak.h>

#include "weft/jit/code_arena.hpp"
#include "weft/jit/error.hpp"
#include "weft/jit/generated_code.hpp"

namespace weft::jit::x64 {

class CodeBuffer : public Xbyak::CodeGenerator, public GeneratedCode {
 public:
  static constexpr std::size_t kDefaultSize = 64 * 1024;

  // max_size bounds the code (Xbyak throws when emission exceeds it); the scratch buffer lives
  // only until finalize().
  explicit CodeBuffer(std::size_t max_size = kDefaultSize);
  CodeBuffer(std::size_t max_size, CodeArena& arena);
  ~CodeBuffer() override;

  // Copies the code into the arena, registers it in the perf map and logs it (with the time since
  // construction, i.e. the emission time) at debug level. Returns the entry point. Throws
  // weft::Error naming `name` when the arena cannot take the code or a label is left undefined.
  // Afterwards getCode()/getSize() describe the installed code, and emitting more is an error.
  const void* finalize_raw(std::string_view name) override;
  using GeneratedCode::finalize;

  std::span<const std::uint8_t> code_bytes() const override { return {getCode(), getSize()}; }

  bool finalized() const { return finalized_; }
  const std::string& name() const { return name_; }

  // Forms whose bytes depend on where the code is emitted (see above).
  using Xbyak::CodeGenerator::call;
  using Xbyak::CodeGenerator::jmp;
  using Xbyak::CodeGenerator::mov;
  void call(const void* address) = delete;
  template <class Ret, class... Params>
  void call(Ret (*function)(Params...)) = delete;
  void jmp(const void* address, LabelType type = T_AUTO) = delete;
  void mov(const Xbyak::Reg64& reg, const Xbyak::Label& label) = delete;
  void putL(const Xbyak::Label& label) = delete;
  void putL(std::string label) = delete;

  // Arena blocks start on CodeArena::kAlignment boundaries, and so do scratch buffers: a larger
  // alignment would pad differently here and there. Throws weft::Error for x > kAlignment.
  void align(std::size_t x = 16, bool use_multi_byte_nop = true);

 private:
  CodeArena* arena_;
  std::chrono::steady_clock::time_point created_ = std::chrono::steady_clock::now();
  bool finalized_ = false;
  std::string name_;
};

}  // namespace weft::jit::x64
