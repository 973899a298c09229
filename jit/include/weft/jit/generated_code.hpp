// Generated machine code as the ISA-neutral layers see it: an emitter of any architecture builds one
// (an x64::CodeBuffer, an A64 code buffer, ...), finalize() installs it in a CodeArena, and the
// owner keeps it until nothing runs it any more:
//
//   std::unique_ptr<weft::jit::GeneratedCode> code = emit_something(desc);  // an architecture's emitter
//   auto fn = code->finalize<void (*)(const Args*)>("my kernel");          // runs from the arena
//   std::span<const std::uint8_t> bytes = code->code_bytes();             // e.g. to disassemble
//
// The destructor gives the installed code back to its arena. Caches hold these, so they need
// neither Xbyak nor our A64 encoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace weft::jit {

class GeneratedCode {
 public:
  virtual ~GeneratedCode() = default;

  // Copies the code into its arena and returns the entry point; emitting more afterwards is an
  // error. Throws weft::Error naming `name` when the code cannot be installed (an undefined label,
  // a full arena).
  virtual const void* finalize_raw(std::string_view name) = 0;

  template <class Fn>
  Fn finalize(std::string_view name) {
    return reinterpret_cast<Fn>(const_cast<void*>(finalize_raw(name)));
  }

  // The code: as emitted so far before finalize(), as installed after.
  virtual std::span<const std::uint8_t> code_bytes() const = 0;
};

}  // namespace weft::jit
