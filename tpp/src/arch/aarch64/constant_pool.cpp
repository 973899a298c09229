#include "constant_pool.hpp"

#include <bit>
#include <string>

#include "weft/jit/error.hpp"

namespace weft::tpp::neon {

std::int64_t ConstantPool::f32(float v) { return bits32(std::bit_cast<std::uint32_t>(v)); }

std::int64_t ConstantPool::f64(double v) { return bits64(std::bit_cast<std::uint64_t>(v)); }

std::int64_t ConstantPool::bits32(std::uint32_t v) { return offset_of({v, v, v, v}); }

std::int64_t ConstantPool::bits64(std::uint64_t v) {
  const auto low = static_cast<std::uint32_t>(v), high = static_cast<std::uint32_t>(v >> 32);
  return offset_of({low, high, low, high});
}

std::int64_t ConstantPool::offset_of(const Entry& entry) {
  if (emitted_) throw Error("neon constant pool: an entry is asked for after the pool was emitted");
  const auto found = offsets_.find(entry);
  if (found != offsets_.end()) return found->second;
  const auto offset = static_cast<std::int64_t>(entries_.size()) * 16;
  entries_.push_back(entry);
  offsets_.emplace(entry, offset);
  return offset;
}

void ConstantPool::load_base(jit::a64::Assembler& a, jit::a64::XReg base) { a.adr(base, label_); }

void ConstantPool::emit(jit::a64::Assembler& a) {
  if (emitted_) throw Error("neon constant pool: emitted twice");
  emitted_ = true;
  if (!entries_.empty()) a.align(16);
  a.bind(label_);
  for (const Entry& entry : entries_) {
    for (std::uint32_t word : entry) a.data(word);
  }
}

}  // namespace weft::tpp::neon
