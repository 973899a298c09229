// ISA helpers shared by the TPP emitters (unary, binary, BRGEMM and its epilogues): what a vector
// register type is (lanes, bytes, tail policy), a constant table emitted after the code and reached
// rip-relative, and the one way a partial vector (the M tail) is loaded and stored.
//
//   struct K : weft::jit::x64::CodeBuffer {
//     ConstantTable consts{VecTraits<Ymm>::bytes};
//     K() {
//       vaddps(ymm0, ymm0, consts.splat(1.0f));           // a full vector of 1.0f, read from memory
//       load_tail(*this, ymm1, rsi, 5, ymm2);            // rsi[0..4], lanes 5-7 zero; ymm2 clobbered
//       ...; ret();
//       consts.emit(*this);                               // after the code
//     }
//   };
//
// Tails never touch memory past the last element: a tail can end right before an unmapped page.
// - AVX-512 (jit::TailPolicy::opmask): moves under the opmask tail_k() (k1). Masked-off lanes never
//   fault (fault suppression is part of the EVEX masking architecture, on every vendor).
// - AVX2 (jit::TailPolicy::piecewise): 16-, 8- and 4-byte moves of the lanes that exist, for loads
//   and stores alike; never vmaskmovps. Why:
//   * Loads. Intel's SDM (VMASKMOV) guarantees that a lane whose mask bit is 0 raises no fault.
//     AMD's APM vol. 4 (VMASKMOVPS) does not: exception and trap behaviour for elements not
//     selected is implementation dependent, and an implementation may signal a page fault for a
//     masked-off element. Zen 3 and Zen 4 happen not to fault (checked by hand: 3 lanes before a
//     PROT_NONE page, and every lane masked off inside one), but that is no contract, and a kernel
//     that faults on some AMD part in a tail that ends before a guard page is a crash in the
//     user's program. The piecewise load is safe by construction on every x86-64 CPU.
//   * Stores. vmaskmovps stores are microcoded on AMD Zen. Measured on Zen 4 (EPYC, family 0x19
//     model 0x11; a loop of 16 independent moves to L1-resident lines, median of 15 runs): a 3-,
//     5- or 7-lane vmaskmovps store took 7.9-8.8 ns, the piecewise sequence 0.72-0.96 ns.
//   * Loads. The same loop: vmaskmovps 0.17-0.20 ns (mask already in a register), piecewise
//     0.36 / 0.47 / 0.65 ns for 3 / 5 / 7 lanes. So a partial vector is loaded piecewise only where
//     a whole vector would leave the matrix: a whole-vector load of a column's tail reads past the
//     column but stays inside the matrix while a later column follows within reach. BRGEMM loads
//     A's tail piecewise only in the last k steps (brgemm_emit.cpp); the unary and binary column
//     sweeps only in the last columns (whole_tail_columns, emit_column_runs; reductions load every
//     tail piecewise), the transpose only in
//     the last columns of A; the lanes read past the column are computed on and never stored.
//     Measured with the tail benchmarks (bench/tpp/eltwise.cpp, tail/*: 256 columns of 3 to 15
//     rows; copy, relu, exp, reduce_rows_max, transpose, add; per-call minimum, median of 5
//     repetitions, 8 rounds alternating with the vmaskmovps build; Zen 4, WEFT_ISA=avx2): the
//     kernels took 0.94x the old time (median over 30 shapes; 0.76-1.03x, none slower beyond
//     noise; issue 13).
//   Covered by the guard-page tests: tests/tpp/{unary,binary,brgemm}_test.cpp put every matrix
//   flush against an inaccessible page and run each kernel on every ISA the host runs, and
//   tests/tpp/tail_guard_page_test.cpp runs AVX2 unary and binary tails right before one.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <vector>

#include <xbyak/xbyak.h>

#include "weft/jit/isa_traits.hpp"

namespace weft::tpp::detail {

template <class Vmm>
struct VecTraits;

template <>
struct VecTraits<Xbyak::Xmm> {  // scalar and 4-lane work inside AVX2/AVX-512 kernels
  static constexpr int lanes = 4;
  static constexpr int bytes = 16;
  static constexpr bool is_zmm = false;
};

template <>
struct VecTraits<Xbyak::Ymm> {
  static constexpr int lanes = 8;
  static constexpr int bytes = 32;
  static constexpr bool is_zmm = false;
  static constexpr weft::jit::TailPolicy tail = weft::jit::TailPolicy::piecewise;
};

template <>
struct VecTraits<Xbyak::Zmm> {
  static constexpr int lanes = 16;
  static constexpr int bytes = 64;
  static constexpr bool is_zmm = true;
  static constexpr weft::jit::TailPolicy tail = weft::jit::TailPolicy::opmask;
};

template <class Vmm>
constexpr bool kOpmaskTails = VecTraits<Vmm>::tail == weft::jit::TailPolicy::opmask;

// The opmask the tail helpers use on AVX-512; the activation emitter uses k7 (see there).
inline const Xbyak::Opmask& tail_k() {
  static const Xbyak::Opmask k(1);
  return k;
}

// 32-bit constants, each replicated to a full vector so that any AVX2 instruction can take it as a
// memory operand, emitted once after the code. Equal constants share one slot.
class ConstantTable {
 public:
  explicit ConstantTable(int vector_bytes) : vector_bytes_(vector_bytes) {}

  // A vector whose every lane holds `bits`.
  Xbyak::Address splat_bits(std::uint32_t bits) { return at(splat_offset(bits)); }
  Xbyak::Address splat(float value) { return splat_bits(std::bit_cast<std::uint32_t>(value)); }
  Xbyak::Address splat_int(std::int32_t value) { return splat_bits(static_cast<std::uint32_t>(value)); }

  // A vector whose every 64-bit lane holds `bits` (f64 kernels' constants).
  Xbyak::Address splat_bits64(std::uint64_t bits) {
    auto [it, fresh] = splat64_slot_.try_emplace(bits, static_cast<int>(words_.size()));
    if (fresh) {
      for (int i = 0; i < lanes() / 2; ++i) {
        words_.push_back(static_cast<std::uint32_t>(bits));
        words_.push_back(static_cast<std::uint32_t>(bits >> 32));
      }
    }
    return at(it->second * 4);
  }
  Xbyak::Address splat_f64(double value) { return splat_bits64(std::bit_cast<std::uint64_t>(value)); }

  // A scalar float (for vbroadcastss and scalar ops): the first lane of its splat.
  Xbyak::Address scalar(float value) {
    return Xbyak::util::dword[Xbyak::util::rip + label_ + splat_offset(std::bit_cast<std::uint32_t>(value))];
  }

  // Arbitrary words (a vector of per-lane constants), stored as given. Equal lists share one slot.
  Xbyak::Address words(const std::vector<std::uint32_t>& w) {
    auto [it, fresh] = words_slot_.try_emplace(w, static_cast<int>(words_.size()));
    if (fresh) {
      words_.insert(words_.end(), w.begin(), w.end());
      // Keep every slot vector-aligned: splats are read with vmovaps.
      while (words_.size() % static_cast<std::size_t>(lanes()) != 0) words_.push_back(0);
    }
    return at(it->second * 4);
  }

  // Emits the table (call once, after the code: the table is data, never executed).
  void emit(Xbyak::CodeGenerator& gen) {
    if (words_.empty()) return;
    gen.align(static_cast<std::size_t>(vector_bytes_));
    gen.L(label_);
    for (std::uint32_t w : words_) gen.dd(w);
  }

  bool empty() const { return words_.empty(); }

 private:
  int lanes() const { return vector_bytes_ / 4; }
  int splat_offset(std::uint32_t bits) {
    auto [it, fresh] = splat_slot_.try_emplace(bits, static_cast<int>(words_.size()));
    if (fresh) words_.insert(words_.end(), static_cast<std::size_t>(lanes()), bits);
    return it->second * 4;
  }
  Xbyak::Address at(int byte_offset) { return Xbyak::util::ptr[Xbyak::util::rip + label_ + byte_offset]; }

  int vector_bytes_;
  Xbyak::Label label_;
  std::vector<std::uint32_t> words_;
  std::map<std::uint32_t, int> splat_slot_;
  std::map<std::uint64_t, int> splat64_slot_;
  std::map<std::vector<std::uint32_t>, int> words_slot_;
};

// ---- the piecewise policy (AVX2): 16-, 8- and 4-byte moves ---------------------------------------

// The first `lanes` (1..3) floats at `at` into the low lanes of x, zeroing the rest of the register.
inline void load_small(Xbyak::CodeGenerator& g, const Xbyak::Xmm& x, const Xbyak::RegExp& at, int lanes) {
  using Xbyak::util::ptr;
  if (lanes == 1) {
    g.vmovss(x, ptr[at]);
  } else {
    g.vmovsd(x, ptr[at]);
    if (lanes == 3) g.vinsertps(x, x, ptr[at + 8], 0x20);
  }
}

// The first `lanes` (1..8) floats at `at` into the low lanes of y, zeroing the others; `high` (not
// y's register) is clobbered when lanes > 4.
inline void load_lanes(Xbyak::CodeGenerator& g, const Xbyak::Ymm& y, const Xbyak::RegExp& at, int lanes,
                       const Xbyak::Xmm& high) {
  using Xbyak::util::ptr;
  const Xbyak::Xmm low(y.getIdx());
  if (lanes == 8) {
    g.vmovups(y, ptr[at]);
  } else if (lanes >= 4) {
    g.vmovups(low, ptr[at]);
    if (lanes > 4) {
      load_small(g, high, at + 16, lanes - 4);
      g.vinsertf128(y, y, high, 1);
    }
  } else {
    load_small(g, low, at, lanes);
  }
}

// The low `lanes` (1..3) floats of x to `at`.
inline void store_small(Xbyak::CodeGenerator& g, const Xbyak::RegExp& at, const Xbyak::Xmm& x, int lanes) {
  using Xbyak::util::ptr;
  if (lanes == 1) {
    g.vmovss(ptr[at], x);
  } else {
    g.vmovsd(ptr[at], x);
    if (lanes == 3) g.vextractps(ptr[at + 8], x, 2);
  }
}

// The low `lanes` (1..8) floats of y to `at`; `high` is clobbered when lanes > 4 (it may be y's own
// register when y is not needed afterwards).
inline void store_lanes(Xbyak::CodeGenerator& g, const Xbyak::RegExp& at, const Xbyak::Ymm& y, int lanes,
                        const Xbyak::Xmm& high) {
  using Xbyak::util::ptr;
  const Xbyak::Xmm low(y.getIdx());
  if (lanes == 8) {
    g.vmovups(ptr[at], y);
  } else if (lanes >= 4) {
    g.vmovups(ptr[at], low);
    if (lanes > 4) {
      g.vextractf128(high, y, 1);
      store_small(g, at + 16, high, lanes - 4);
    }
  } else {
    store_small(g, at, low, lanes);
  }
}

// ---- partial vectors under the policy of the register type ---------------------------------------

// Opmask policy: sets tail_k() to the first r lanes, through `scratch`. Piecewise: nothing.
template <class Vmm>
void set_tail_mask(Xbyak::CodeGenerator& g, int r, const Xbyak::Reg32& scratch) {
  if constexpr (kOpmaskTails<Vmm>) {
    g.mov(scratch, (1u << r) - 1u);
    g.kmovw(tail_k(), scratch);
  } else {
    (void)g, (void)r, (void)scratch;
  }
}

// The first r (0 < r < lanes) elements at `at` into v, the other lanes zero. Opmask: needs
// tail_k() set for r (set_tail_mask); piecewise: clobbers `spare` (not v).
template <class Vmm>
void load_partial(Xbyak::CodeGenerator& g, const Vmm& v, const Xbyak::RegExp& at, int r, const Vmm& spare) {
  if constexpr (kOpmaskTails<Vmm>) {
    (void)spare;
    g.vmovups(v | tail_k() | Xbyak::util::T_z, Xbyak::util::ptr[at]);
  } else {
    load_lanes(g, Xbyak::Ymm(v.getIdx()), at, r, Xbyak::Xmm(spare.getIdx()));
  }
}

// The first r (0 < r < lanes) lanes of v to `at`. Opmask: needs tail_k() set for r; piecewise:
// clobbers `spare` (which may be v itself when v is not needed afterwards).
template <class Vmm>
void store_partial(Xbyak::CodeGenerator& g, const Xbyak::RegExp& at, const Vmm& v, int r, const Vmm& spare) {
  if constexpr (kOpmaskTails<Vmm>) {
    (void)spare;
    g.vmovups(Xbyak::util::ptr[at] | tail_k(), v);
  } else {
    store_lanes(g, at, Xbyak::Ymm(v.getIdx()), r, Xbyak::Xmm(spare.getIdx()));
  }
}

// The first r (0 < r < lanes / 2) doubles at `at` into v, the other lanes zero: under tail_k() set
// for r (set_tail_mask: the same r bits select r doubles), or piecewise as 2r floats (`spare` clobbered).
template <class Vmm>
void load_partial_f64(Xbyak::CodeGenerator& g, const Vmm& v, const Xbyak::RegExp& at, int r, const Vmm& spare) {
  if constexpr (kOpmaskTails<Vmm>) {
    (void)spare;
    g.vmovupd(v | tail_k() | Xbyak::util::T_z, Xbyak::util::ptr[at]);
  } else {
    load_lanes(g, Xbyak::Ymm(v.getIdx()), at, 2 * r, Xbyak::Xmm(spare.getIdx()));
  }
}

// The first r (0 < r < lanes / 2) doubles of v to `at` (as load_partial_f64; `spare` may be v).
template <class Vmm>
void store_partial_f64(Xbyak::CodeGenerator& g, const Xbyak::RegExp& at, const Vmm& v, int r, const Vmm& spare) {
  if constexpr (kOpmaskTails<Vmm>) {
    (void)spare;
    g.vmovupd(Xbyak::util::ptr[at] | tail_k(), v);
  } else {
    store_lanes(g, at, Xbyak::Ymm(v.getIdx()), 2 * r, Xbyak::Xmm(spare.getIdx()));
  }
}

// load_partial with the mask set first (opmask: clobbers eax).
template <class Vmm>
void load_tail(Xbyak::CodeGenerator& g, const Vmm& v, const Xbyak::RegExp& at, int r, const Vmm& spare) {
  set_tail_mask<Vmm>(g, r, g.eax);
  load_partial(g, v, at, r, spare);
}

// store_partial with the mask set first (opmask: clobbers eax); piecewise clobbers v.
template <class Vmm>
void store_tail(Xbyak::CodeGenerator& g, const Xbyak::RegExp& at, const Vmm& v, int r) {
  set_tail_mask<Vmm>(g, r, g.eax);
  store_partial(g, at, v, r, v);
}

// Emits the sweep over one column of `full_vectors` whole vectors plus a partial vector of `tail`
// lanes: groups of `unroll` vectors (in a counted loop on `counter` when there is more than one
// group), then the remaining whole vectors, then the tail. group(count, tail_lanes) emits the work
// on `count` vectors (or one vector of tail_lanes lanes); advance(count) moves the pointers past
// `count` vectors. The pointers end past the last whole vector.
template <class Group, class Advance>
void emit_column_sweep(Xbyak::CodeGenerator& g, const Xbyak::Reg64& counter,
                       std::int64_t full_vectors, int unroll, int tail, Group group,
                       Advance advance) {
  const std::int64_t blocks = full_vectors / unroll;
  const int rem = static_cast<int>(full_vectors % unroll);
  if (blocks > 1) {
    Xbyak::Label loop;
    g.mov(counter, blocks);
    g.L(loop);
    group(unroll, 0);
    advance(unroll);
    g.dec(counter);
    g.jnz(loop, Xbyak::CodeGenerator::T_NEAR);
  } else if (blocks == 1) {
    group(unroll, 0);
    advance(unroll);
  }
  if (rem > 0) {
    group(rem, 0);
    advance(rem);
  }
  if (tail > 0) group(1, tail);
}

// Columns, from the first, whose partial vector may be loaded as a whole vector: the `lanes - tail`
// elements it reads past the column stay inside the matrix (of `cols` columns `ld` elements apart)
// when a later column follows within reach, i.e. (cols - 1 - j) * ld >= lanes - tail for column j.
// 0 without a tail. The lanes read past the column are computed on and never stored.
inline std::int64_t whole_tail_columns(std::int64_t cols, int lanes, int tail, std::int64_t ld) {
  if (tail == 0) return 0;
  return std::max<std::int64_t>(0, cols - (lanes - tail + ld - 1) / ld);
}

// Emits the loop over `cols` columns in two runs, each a counted loop on `counter` when it has
// more than one column: the first `whole_tail` columns as column(true) (their partial vectors may
// be loaded whole, see whole_tail_columns), the others as column(false). column(...) emits one
// column and moves the pointers on to the next.
template <class Column>
void emit_column_runs(Xbyak::CodeGenerator& g, const Xbyak::Reg64& counter, std::int64_t cols,
                      std::int64_t whole_tail, Column column) {
  auto run = [&](std::int64_t count, bool whole) {
    if (count <= 0) return;
    Xbyak::Label loop;
    if (count > 1) {
      g.mov(counter, count);
      g.L(loop);
    }
    column(whole);
    if (count > 1) {
      g.dec(counter);
      g.jnz(loop, Xbyak::CodeGenerator::T_NEAR);
    }
  };
  run(whole_tail, true);
  run(cols - whole_tail, false);
}

// Emits the sweep over `rows` contiguous elements written with streaming stores: scalar elements
// until the output (whose address is in the 64-bit register of `out`) is aligned to `align_bytes`
// (what the widest streaming store of a group writes: a vector's worth of output elements, or two
// for bf16 pairs), or all of them when it is not even aligned to its element size
// (`out_element_bytes`); then groups of `unroll` vectors, single vectors, and scalar elements for
// the rest. Counts down in `counter`. Ends with sfence: streaming
// stores are weakly ordered, so they are published before the kernel returns.
// scalar() emits one element and moves the pointers past it; group(count) emits `count` whole
// vectors; advance(count) moves the pointers past them.
template <class Scalar, class Group, class Advance>
void emit_streaming_sweep(Xbyak::CodeGenerator& g, const Xbyak::Reg64& counter,
                          const Xbyak::Reg32& out, std::int64_t rows, int unroll, int lanes,
                          int out_element_bytes, int align_bytes, Scalar scalar, Group group, Advance advance) {
  using G = Xbyak::CodeGenerator;
  Xbyak::Label head, body, one, rest, done;
  g.mov(counter, rows);
  g.L(head);
  g.test(counter, counter);
  g.jz(done, G::T_NEAR);
  g.test(out, align_bytes - 1);
  g.jz(body, G::T_NEAR);
  g.test(out, out_element_bytes - 1);
  g.jnz(rest, G::T_NEAR);
  scalar();
  g.dec(counter);
  g.jmp(head, G::T_NEAR);
  g.L(body);
  g.cmp(counter, unroll * lanes);
  g.jb(one, G::T_NEAR);
  group(unroll);
  advance(unroll);
  g.sub(counter, unroll * lanes);
  g.jmp(body, G::T_NEAR);
  g.L(one);
  g.cmp(counter, lanes);
  g.jb(rest, G::T_NEAR);
  group(1);
  advance(1);
  g.sub(counter, lanes);
  g.jmp(one, G::T_NEAR);
  g.L(rest);
  g.test(counter, counter);
  g.jz(done, G::T_NEAR);
  scalar();
  g.dec(counter);
  g.jmp(rest, G::T_NEAR);
  g.L(done);
  g.sfence();
}

}  // namespace weft::tpp::detail
