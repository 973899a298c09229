// Turns an assembler's own exception into a weft::Error that names what was being generated:
//
//   auto code = weft::jit::emitting("brgemm m=64 n=6 k=64", [&] { return std::make_unique<Kernel>(plan); });
//
// An assembler error (code beyond the buffer's size, a label too far, an operand combination the
// ISA lacks) is a bug in an emitter or in its size bound; the message says which kernel or nest.
#pragma once

#include <exception>
#include <string_view>
#include <utility>

#include "weft/jit/error.hpp"

namespace weft::jit {

// Called inside a catch block: rethrows the exception in flight as a weft::Error naming `what`
// when it is the target architecture's assembler error, else rethrows it unchanged. One
// definition per architecture (jit/arch/<arch>/).
[[noreturn]] void rethrow_assembler_error(std::string_view what);

template <class Emit>
decltype(auto) emitting(std::string_view what, Emit&& emit) {
  try {
    return std::forward<Emit>(emit)();
  } catch (const Error&) {
    throw;
  } catch (...) {
    rethrow_assembler_error(what);
  }
}

}  // namespace weft::jit
