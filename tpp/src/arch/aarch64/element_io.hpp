// Moves TPP operand elements between memory and Neon vectors of the compute type, for every Neon
// TPP emitter: f32 and f64 as they are, bf16 widened to f32 lanes on loads and rounded exactly as
// jit::to_bfloat16 on stores (or narrowed keeping the upper halves' bits). Loads and stores of
// 1..lanes elements touch only those elements' bytes (Neon has no masked accesses: a 3-element
// tail is a pair and a lane), at any byte offset from the base register:
//
//   ElementIo io(a, DataType::bf16, DataType::f32, x16, constants, scratch);
//   io.setup();                         // once, before the loops: the bf16 constants
//   io.load(v0, x1, 0, 4);              // 4 bf16 at [x1] -> 4 floats in v0
//   io.store(x3, 8, v0, 3);             // 3 floats of v0 -> 3 bf16 at [x3 + 8], rounded
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "weft/jit/aarch64/assembler.hpp"
#include "weft/jit/data_type.hpp"

namespace weft::tpp::neon {

// Lanes of a compute vector: 4 for f32 (also bf16 data, widened to f32), 2 for f64.
constexpr int lanes_of(jit::DataType compute) { return compute == jit::DataType::f64 ? 2 : 4; }

class ElementIo {
 public:
  // Vector registers a bf16 memory type needs: constants (set once by setup()) and scratch (stores).
  static int constant_vectors(jit::DataType memory);  // 0 for f32 / f64
  static int scratch_vectors(jit::DataType memory);   // 0 for f32 / f64
  // memory: f32, bf16 or f64 (the element type in memory); compute: f32 (f32/bf16 memory) or f64.
  // address: a general scratch register (offsets that do not encode, 3-element tails; setup()
  // uses it too). Throws weft::Error for another pair of types or too few registers.
  ElementIo(jit::a64::Assembler& a, jit::DataType memory, jit::DataType compute, jit::a64::XReg address,
            std::span<const jit::a64::VReg> constants, std::span<const jit::a64::VReg> scratch);
  void setup();  // emits the constants (call once, outside loops, before the first load/store)
  // count (1..lanes) elements at [base + offset_bytes] into v's first lanes (others: unspecified);
  // never reads memory past them. offset_bytes may be any value (non-encodable: via `address`).
  void load(jit::a64::VReg v, jit::a64::XReg base, std::int64_t offset_bytes, int count);
  // v's first count lanes to [base + offset_bytes], converted to `memory`: bf16 rounded exactly as
  // jit::to_bfloat16 (Bf16Store::round), or truncated to the upper 16 bits (Bf16Store::keep_bits:
  // for values that are bf16 inputs selected unchanged, so a signalling NaN keeps its bits, as the
  // x86 kernels and the references do for selects_input ops). v is not changed. v (of a load or
  // a store) must not be one of the constant or scratch registers (weft::Error).
  enum class Bf16Store { round, keep_bits };
  void store(jit::a64::XReg base, std::int64_t offset_bytes, jit::a64::VReg v, int count,
             Bf16Store mode = Bf16Store::round);
  // Bytes one element takes in memory.
  int element_bytes() const;

 private:
  int lanes() const { return lanes_of(compute_); }
  void check_operand(jit::a64::VReg v, int count, const char* what) const;
  // One scalar register's worth (2, 4, 8 or 16 bytes) between memory and vector reg.
  void access(bool load, unsigned bytes, unsigned reg, jit::a64::XReg base, std::int64_t offset);
  // `address` = base + offset.
  void address_of(jit::a64::XReg base, std::int64_t offset);
  // count elements of `bytes` each: the whole-register part and the 3-element pair-and-lane.
  void move_elements(bool load, unsigned element_bytes, unsigned reg, jit::a64::XReg base, std::int64_t offset,
                     int count);
  // scratch(0)'s low 4 halves = v's lanes rounded to bf16 (to_bfloat16).
  void round_to_bf16(jit::a64::VReg v);

  jit::a64::Assembler& a_;
  jit::DataType memory_, compute_;
  jit::a64::XReg address_;
  std::vector<jit::a64::VReg> constants_, scratch_;
};

}  // namespace weft::tpp::neon
