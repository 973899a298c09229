// One vector of elements of a jit::DataType moved between memory and a register of compute lanes
// (f32 lanes for f32 and bf16, f64 lanes for f64): what the element-wise emitters (unary, binary)
// load their inputs and store their outputs with, whole vectors or a tail of `count` lanes.
#pragma once

#include <vector>

#include <xbyak/xbyak.h>

#include "bf16_emit.hpp"
#include "vec_traits.hpp"
#include "weft/jit/data_type.hpp"

namespace weft::tpp::detail {

// `count` (1..lanes) elements of `type` at `at` into the lanes of v (bf16 widened to f32, exactly),
// the lanes past count zero. Opmask: a partial count needs tail_k() set; piecewise: `spare` is
// clobbered.
template <class Vmm>
void load_elements(Xbyak::CodeGenerator& g, Bf16Emitter<Vmm>& bf16, const Vmm& v, const Xbyak::RegExp& at, int count,
                   int lanes, jit::DataType type, const Vmm& spare) {
  using Xbyak::util::ptr;
  switch (type) {
    case jit::DataType::f32:
      if (count == lanes) {
        g.vmovups(v, ptr[at]);
      } else {
        load_partial(g, v, at, count, spare);
      }
      return;
    case jit::DataType::bf16: bf16.load(v, at, count, spare); return;
    case jit::DataType::f64:
      if (count == lanes) {
        g.vmovupd(v, ptr[at]);
      } else {
        load_partial_f64(g, v, at, count, spare);
      }
      return;
  }
}

// The bf16 bits in v's low half (Bf16Emitter::round's or narrow's result), as they are; `nt`: a
// streaming store (whole vectors only).
template <class Vmm>
void store_bf16_bits(Xbyak::CodeGenerator& g, Bf16Emitter<Vmm>& bf16, const Xbyak::RegExp& at, const Vmm& v, int count,
                     int lanes, bool nt) {
  if (nt && count == lanes) {
    g.vmovntdq(Xbyak::util::ptr[at], Half<Vmm>(v.getIdx()));
  } else {
    bf16.store_rounded(at, v, count);
  }
}

// The first `count` (1..lanes) lanes of v to `at` as `type`: bf16 rounded to nearest even, or with
// `keep_bits` narrowed (values that are bf16 already: a copy keeps a denormal or a signaling NaN);
// `nt`: a streaming store (whole vectors only). Opmask: a partial count needs tail_k() set. v and
// the rounding's scratch are clobbered.
template <class Vmm>
void store_elements(Xbyak::CodeGenerator& g, Bf16Emitter<Vmm>& bf16, const Xbyak::RegExp& at, const Vmm& v, int count,
                    int lanes, jit::DataType type, bool nt, bool keep_bits, const std::vector<Vmm>& rounding_scratch) {
  using Xbyak::util::ptr;
  switch (type) {
    case jit::DataType::f32:
      if (count < lanes) {
        store_partial(g, at, v, count, v);
      } else if (nt) {
        g.vmovntps(ptr[at], v);
      } else {
        g.vmovups(ptr[at], v);
      }
      return;
    case jit::DataType::bf16:
      if (keep_bits) {
        bf16.narrow(v);
      } else {
        bf16.round(v, rounding_scratch);
      }
      store_bf16_bits(g, bf16, at, v, count, lanes, nt);
      return;
    case jit::DataType::f64:
      if (count < lanes) {
        store_partial_f64(g, at, v, count, v);
      } else if (nt) {
        g.vmovntpd(ptr[at], v);
      } else {
        g.vmovupd(ptr[at], v);
      }
      return;
  }
}

// Lane 0 of x to `at` as `type`: bf16 rounded, or with `keep_bits` narrowed, as store_elements
// does, on ymm registers whatever the kernel's vectors (the same bits on every ISA). x and the
// rounding's scratch s0, s1 are clobbered.
inline void store_scalar(Xbyak::CodeGenerator& g, ConstantTable& consts, const Xbyak::RegExp& at, const Xbyak::Xmm& x,
                         jit::DataType type, bool keep_bits, const Xbyak::Ymm& s0, const Xbyak::Ymm& s1) {
  using namespace Xbyak::util;
  switch (type) {
    case jit::DataType::f32: g.vmovss(dword[at], x); return;
    case jit::DataType::f64: g.vmovsd(qword[at], x); return;
    case jit::DataType::bf16: {
      Bf16Emitter<Xbyak::Ymm> bf16(g, consts);
      if (keep_bits) {
        bf16.narrow(Xbyak::Ymm(x.getIdx()));
      } else {
        bf16.round(Xbyak::Ymm(x.getIdx()), {s0, s1});
      }
      g.vpextrw(word[at], x, 0);
      return;
    }
  }
}

}  // namespace weft::tpp::detail
