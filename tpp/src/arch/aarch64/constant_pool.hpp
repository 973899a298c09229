// The constants of one generated AArch64 kernel, as 16-byte entries (a value replicated over a q
// register) placed after the kernel's last instruction. A64 has no vector immediate for most
// floats, and a vector load from the code's own pages needs no general register beyond one base:
//
//   ConstantPool pool;
//   pool.load_base(a, x15);                       // adr x15, <pool>  (once, in the prologue)
//   const std::int64_t one = pool.f32(1.0f);      // byte offset of {1, 1, 1, 1}
//   a.ldr(q3, ptr(x15, one));                     // v3 = {1, 1, 1, 1}
//   ...
//   a.ret();
//   pool.emit(a);                                 // aligns to 16, writes the entries
//
// Entries are deduplicated by their bits (f32(1.0f) and bits32(0x3f800000) are one entry). The
// offsets are multiples of 16, as ldr q's unsigned offset needs (up to 65520: 4096 entries).
// emit() binds the pool's label even when the pool is empty (then it writes nothing), so load_base
// may come before the first entry is known; entries asked for after emit() throw weft::Error (they
// would never be written).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <vector>

#include "weft/jit/aarch64/assembler.hpp"

namespace weft::tpp::neon {

class ConstantPool {
 public:
  std::int64_t f32(float v);             // byte offset of the entry {v, v, v, v} (deduplicated by bits)
  std::int64_t f64(double v);            // {v, v}
  std::int64_t bits32(std::uint32_t v);  // {v, v, v, v}
  std::int64_t bits64(std::uint64_t v);  // {v, v}
  void load_base(jit::a64::Assembler& a, jit::a64::XReg base);  // adr base, <pool> (once, in the prologue)
  void emit(jit::a64::Assembler& a);  // after the last instruction: aligns to 16, writes the entries
  bool empty() const { return entries_.empty(); }

 private:
  using Entry = std::array<std::uint32_t, 4>;  // the 16 bytes, as the little-endian words written
  std::int64_t offset_of(const Entry& entry);

  std::vector<Entry> entries_;
  std::map<Entry, std::int64_t> offsets_;
  jit::a64::Label label_;
  bool emitted_ = false;
};

}  // namespace weft::tpp::neon
