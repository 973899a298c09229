// vnni2_pack and vnni2_unpack on Neon (unary_transpose_emit.hpp): a loop over column pairs, in each
// a loop over steps of rows, then the row tail moved piecewise.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "element_io.hpp"
#include "raw_moves.hpp"
#include "unary_frame_emit.hpp"
#include "unary_transpose_emit.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/jit/error.hpp"

namespace weft::tpp::neon {
namespace {

using namespace jit::a64;
using jit::DataType;

// General registers: x0 args; x1 A's current pair (pack: its first column), x2 B's; x3 ld_in bytes,
// x4 ld_out bytes; pack: x5, x7 the pair's two columns of A, x6 the pair in B; unpack: x5 the pair in
// A, x6, x7 the two columns of B; x8 row steps left, x9 pairs left, x10 ElementIo's address scratch.
// Vector registers: v0, v1 the two columns (or the pair's two halves), v2, v3 the result, v24 the
// spare of piecewise moves; from f32, ElementIo's registers from v16.
constexpr XReg kArgs = x0, kA = x1, kB = x2, kLda = x3, kLdb = x4, kFirst = x5, kPair = x6, kSecond = x7,
               kSteps = x8, kPairs = x9, kIoAddress = x10;
constexpr VReg kSpare = v24;

[[noreturn]] void fail(const UnaryDesc& d, const std::string& what) {
  throw Error("neon unary vnni2 " + to_string(d) + ": " + what);
}

class Vnni2Kernel {
 public:
  Vnni2Kernel(CodeBuffer& a, const UnaryDesc& d) : a_(a), d_(d) {
    in_bytes_ = static_cast<int>(jit::size_of(d.types.in));
  }

  void emit() {
    a_.ldr(kA, ptr(kArgs, offsetof(UnaryArgs, in)));
    a_.ldr(kB, ptr(kArgs, offsetof(UnaryArgs, out)));
    load_leading_dimension(a_, kLda, kArgs, d_.ld_in, offsetof(UnaryArgs, ld_in), in_bytes_);
    load_leading_dimension(a_, kLdb, kArgs, d_.ld_out, offsetof(UnaryArgs, ld_out), 2);
    const bool pack = d_.op == UnaryOp::vnni2_pack;
    if (d_.types.in == DataType::f32) setup_rounding();
    repeat(a_, d_.n / 2, kPairs, [&] {
      if (!pack) {
        unpack_pair();
      } else if (d_.types.in == DataType::f32) {
        pack_pair_rounded();
      } else {
        pack_pair();
      }
      // The next pair: two columns further in the column-major operand, 2 * ld rows in the VNNI-2 one.
      a_.add(kA, kA, kLda, lsl(1));
      a_.add(kB, kB, kLdb, lsl(1));
    });
    a_.ret();
  }

 private:
  // bf16 columns x5 and x7 into the pair at x6, 8 rows per step: zip1 / zip2 interleave rows 0-3 and
  // 4-7 of the two columns.
  void pack_pair() {
    a_.mov(kFirst, kA);
    a_.add(kSecond, kA, kLda);
    a_.mov(kPair, kB);
    repeat(a_, d_.m / 8, kSteps, [&] {
      a_.ldr(q0, post_ptr(kFirst, 16));
      a_.ldr(q1, post_ptr(kSecond, 16));
      a_.zip1(v2.h8(), v0.h8(), v1.h8());
      a_.zip2(v3.h8(), v0.h8(), v1.h8());
      a_.stp(q2, q3, post_ptr(kPair, 32));
    });
    if (const int tail = static_cast<int>(d_.m % 8); tail > 0) {
      raw_load(a_, v0, kFirst, 2 * tail, kSpare);
      raw_load(a_, v1, kSecond, 2 * tail, kSpare);
      a_.zip1(v2.h8(), v0.h8(), v1.h8());
      a_.zip2(v3.h8(), v0.h8(), v1.h8());
      store_pairs(2 * tail);
    }
  }

  // f32 loads as they are, bf16 stores rounded as to_bfloat16 (ElementIo), on v16 and up.
  void setup_rounding() {
    const int constants = ElementIo::constant_vectors(DataType::bf16);
    const int scratch = ElementIo::scratch_vectors(DataType::bf16);
    std::vector<VReg> regs;
    for (int r = 0; r < constants + scratch; ++r) regs.push_back(VReg(16 + static_cast<unsigned>(r)));
    const std::span<const VReg> all(regs);
    f32_.emplace(a_, DataType::f32, DataType::f32, kIoAddress, std::span<const VReg>{}, std::span<const VReg>{});
    bf16_.emplace(a_, DataType::bf16, DataType::f32, kIoAddress, all.first(static_cast<std::size_t>(constants)),
                  all.subspan(static_cast<std::size_t>(constants)));
    bf16_->setup();
  }

  // f32 columns x5 and x7 into the bf16 pair at x6, 4 rows per step: zip1 / zip2 on .4s interleave
  // rows 0-1 and 2-3 of the two columns as floats, rounded to bf16 as they are stored (rounding
  // commutes with the interleave).
  void pack_pair_rounded() {
    a_.mov(kFirst, kA);
    a_.add(kSecond, kA, kLda);
    a_.mov(kPair, kB);
    repeat(a_, d_.m / 4, kSteps, [&] {
      a_.ldr(q0, post_ptr(kFirst, 16));
      a_.ldr(q1, post_ptr(kSecond, 16));
      a_.zip1(v2.s4(), v0.s4(), v1.s4());
      a_.zip2(v3.s4(), v0.s4(), v1.s4());
      bf16_->store(kPair, 0, v2, 4);
      bf16_->store(kPair, 8, v3, 4);
      a_.add(kPair, kPair, 16);
    });
    if (const int tail = static_cast<int>(d_.m % 4); tail > 0) {
      f32_->load(v0, kFirst, 0, tail);
      f32_->load(v1, kSecond, 0, tail);
      a_.zip1(v2.s4(), v0.s4(), v1.s4());
      a_.zip2(v3.s4(), v0.s4(), v1.s4());
      const int words = 2 * tail;
      bf16_->store(kPair, 0, v2, words < 4 ? words : 4);
      if (words > 4) bf16_->store(kPair, 8, v3, words - 4);
    }
  }

  // `words` (2..16) 16-bit elements of v2:v3 to x6.
  void store_pairs(int words) {
    if (words <= 8) {
      raw_store(a_, kPair, v2, 2 * words, kSpare);
      return;
    }
    a_.str(q2, ptr(kPair));
    raw_store(a_, kPair, v3, 2 * (words - 8), kSpare, 16);
  }

  // The pair at x5 into bf16 columns x6 and x7, 8 rows per step: uzp1 / uzp2 take the even (first
  // column) and odd (second column) elements of 16.
  void unpack_pair() {
    a_.mov(kFirst, kA);
    a_.mov(kPair, kB);
    a_.add(kSecond, kB, kLdb);
    repeat(a_, d_.m / 8, kSteps, [&] {
      a_.ldp(q0, q1, post_ptr(kFirst, 32));
      a_.uzp1(v2.h8(), v0.h8(), v1.h8());
      a_.uzp2(v3.h8(), v0.h8(), v1.h8());
      a_.str(q2, post_ptr(kPair, 16));
      a_.str(q3, post_ptr(kSecond, 16));
    });
    if (const int tail = static_cast<int>(d_.m % 8); tail > 0) {
      const int words = 2 * tail;
      if (words <= 8) {
        raw_load(a_, v0, kFirst, 2 * words, kSpare);
      } else {
        a_.ldr(q0, ptr(kFirst));
        raw_load(a_, v1, kFirst, 2 * (words - 8), kSpare, 16);
      }
      a_.uzp1(v2.h8(), v0.h8(), v1.h8());
      a_.uzp2(v3.h8(), v0.h8(), v1.h8());
      raw_store(a_, kPair, v2, 2 * tail, kSpare);
      raw_store(a_, kSecond, v3, 2 * tail, kSpare);
    }
  }

  CodeBuffer& a_;
  UnaryDesc d_;
  int in_bytes_ = 2;
  std::optional<ElementIo> f32_, bf16_;  // vnni2_pack from f32: A's loads, B's rounding stores
};

}  // namespace

std::unique_ptr<CodeBuffer> emit_unary_vnni2(const UnaryDesc& desc, const UnaryPlan& plan) {
  validate(desc);
  if (plan.isa != jit::Isa::neon)
    fail(desc, "the plan is for ISA " + std::string(jit::to_string(plan.isa)) + ", not neon");
  if (desc.op != UnaryOp::vnni2_pack && desc.op != UnaryOp::vnni2_unpack)
    fail(desc, "the op is no vnni2_pack / vnni2_unpack (emit_unary has the other kernels)");
  auto code = std::make_unique<CodeBuffer>();
  Vnni2Kernel(*code, desc).emit();
  return code;
}

}  // namespace weft::tpp::neon
