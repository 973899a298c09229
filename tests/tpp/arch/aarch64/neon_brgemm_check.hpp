// The Neon (and SVE) BRGEMM tests' common check: one descriptor run by the Neon emitter (or
// CheckOptions::emit) against brgemm_reference, whatever its data types, batch kind, bias and
// epilogue. Every operand (each batch entry of A and B, C, the bias) lies flush against a guard
// page, so that touching one element past it faults; the whole of C (its padding rows too) must
// equal the reference's bit for bit, or within `ulps` units in the last place of C's type for the
// transcendental epilogues.
//
//   neon_brgemm_test::check({.m = 7, .n = 5, .k = 3, .lda = 7, .ldb = 3, .ldc = 7}, /*count=*/2, /*seed=*/1);
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "weft/jit/generated_code.hpp"
#include "weft/tpp/brgemm.hpp"

namespace weft::tpp::neon_brgemm_test {

struct CheckOptions {
  // One input element in `special_every` (0: none) is a special value instead of a random one in
  // [-1, 1]: NaN, +-0, +-inf, a denormal, a large value, in turn.
  int special_every = 0;
  // Allowed distance from the reference in units in the last place of C's type (0: bit for bit).
  std::int64_t ulps = 0;
  // The guard page before the operands instead of after them (Flush::front).
  bool flush_front = false;
  // The kernel's generator (null: emit_neon). The SVE tests pass theirs.
  std::function<std::unique_ptr<jit::GeneratedCode>(const BrgemmDesc&)> emit = nullptr;
};

// The Neon kernel of d (through detail::emit_kernel and plan_brgemm, as the kernel cache does).
std::unique_ptr<jit::GeneratedCode> emit_neon(const BrgemmDesc& d);

// The batch fields of `args` for d's batch kind: the strides (in elements), the offsets or the
// addresses of the entries' A and B.
inline void set_batch(BrgemmArgs& args, BrgemmBatch batch, std::int64_t stride_a, std::int64_t stride_b,
                      const std::vector<std::int64_t>& offsets_a, const std::vector<std::int64_t>& offsets_b,
                      const std::vector<const void*>& addresses_a, const std::vector<const void*>& addresses_b) {
  switch (batch) {
    case BrgemmBatch::strided:
      args.stride_a = stride_a;
      args.stride_b = stride_b;
      break;
    case BrgemmBatch::offsets:
      args.offsets_a = offsets_a.data();
      args.offsets_b = offsets_b.data();
      break;
    case BrgemmBatch::addresses:
      args.addresses_a = addresses_a.data();
      args.addresses_b = addresses_b.data();
      break;
  }
}

// Adds a gtest failure (naming the first differing element) when the kernel and the reference differ.
void check(const BrgemmDesc& d, std::int64_t count, std::uint32_t seed, const CheckOptions& options = {});

}  // namespace weft::tpp::neon_brgemm_test
