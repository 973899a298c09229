#include "brgemm_frame.hpp"

#include <bit>
#include <cstddef>

namespace weft::tpp::a64_brgemm {

using namespace jit::a64;

namespace {
unsigned element_shift(int in_bytes) {
  return static_cast<unsigned>(std::countr_zero(static_cast<unsigned>(in_bytes)));
}
}  // namespace

void save_registers(CodeBuffer& code, bool calls) {
  if (calls) code.stp(x29, x30, pre_ptr(sp, -16));
  code.stp(x19, x20, pre_ptr(sp, -16));
  code.stp(x21, x22, pre_ptr(sp, -16));
  code.stp(x23, x24, pre_ptr(sp, -16));
  code.stp(x25, x26, pre_ptr(sp, -16));
  code.stp(x27, x28, pre_ptr(sp, -16));
  code.stp(d8, d9, pre_ptr(sp, -16));
  code.stp(d10, d11, pre_ptr(sp, -16));
  code.stp(d12, d13, pre_ptr(sp, -16));
  code.stp(d14, d15, pre_ptr(sp, -16));
}

void restore_registers(CodeBuffer& code, bool calls) {
  code.ldp(d14, d15, post_ptr(sp, 16));
  code.ldp(d12, d13, post_ptr(sp, 16));
  code.ldp(d10, d11, post_ptr(sp, 16));
  code.ldp(d8, d9, post_ptr(sp, 16));
  code.ldp(x27, x28, post_ptr(sp, 16));
  code.ldp(x25, x26, post_ptr(sp, 16));
  code.ldp(x23, x24, post_ptr(sp, 16));
  code.ldp(x21, x22, post_ptr(sp, 16));
  code.ldp(x19, x20, post_ptr(sp, 16));
  if (calls) code.ldp(x29, x30, post_ptr(sp, 16));
}

void load_args(CodeBuffer& code, BrgemmBatch batch, int in_bytes) {
  code.ldr(kA, ptr(kArgs, offsetof(BrgemmArgs, a)));
  code.ldr(kB, ptr(kArgs, offsetof(BrgemmArgs, b)));
  code.ldr(kC, ptr(kArgs, offsetof(BrgemmArgs, c)));
  code.ldr(kCount, ptr(kArgs, offsetof(BrgemmArgs, count)));
  switch (batch) {
    case BrgemmBatch::strided:
      code.ldr(kBatchA, ptr(kArgs, offsetof(BrgemmArgs, stride_a)));
      code.ldr(kBatchB, ptr(kArgs, offsetof(BrgemmArgs, stride_b)));
      code.lsl(kBatchA, kBatchA, element_shift(in_bytes));  // elements -> bytes
      code.lsl(kBatchB, kBatchB, element_shift(in_bytes));
      break;
    case BrgemmBatch::offsets:
      code.ldr(kBatchA, ptr(kArgs, offsetof(BrgemmArgs, offsets_a)));
      code.ldr(kBatchB, ptr(kArgs, offsetof(BrgemmArgs, offsets_b)));
      break;
    case BrgemmBatch::addresses:
      code.ldr(kBatchA, ptr(kArgs, offsetof(BrgemmArgs, addresses_a)));
      code.ldr(kBatchB, ptr(kArgs, offsetof(BrgemmArgs, addresses_b)));
      break;
  }
}

void begin_batch(CodeBuffer& code, BrgemmBatch batch, Label& empty) {
  // count 0 (or negative, as on x86): C stays (beta 1) or becomes 0 (beta 0).
  code.cmp(kCount, 0);
  code.b(Cond::le, empty);
  code.mov(kLeft, kCount);
  if (batch == BrgemmBatch::strided) {
    code.mov(kEntryA, kA);
    code.mov(kEntryB, kB);
  } else {
    code.mov(kEntryA, kBatchA);
    code.mov(kEntryB, kBatchB);
  }
}

void entry_pointers(CodeBuffer& code, BrgemmBatch batch, int in_bytes) {
  switch (batch) {
    case BrgemmBatch::strided:
      code.add(kAPtr, kEntryA, kRowOff);
      code.add(b_column(0), kEntryB, kColOff);
      code.add(kEntryA, kEntryA, kBatchA);
      code.add(kEntryB, kEntryB, kBatchB);
      break;
    case BrgemmBatch::offsets:
      code.ldr(kT0, post_ptr(kEntryA, 8));
      code.ldr(kT1, post_ptr(kEntryB, 8));
      code.add(kAPtr, kA, kT0, jit::a64::lsl(element_shift(in_bytes)));
      code.add(b_column(0), kB, kT1, jit::a64::lsl(element_shift(in_bytes)));
      code.add(kAPtr, kAPtr, kRowOff);
      code.add(b_column(0), b_column(0), kColOff);
      break;
    case BrgemmBatch::addresses:
      code.ldr(kT0, post_ptr(kEntryA, 8));
      code.ldr(kT1, post_ptr(kEntryB, 8));
      code.add(kAPtr, kT0, kRowOff);
      code.add(b_column(0), kT1, kColOff);
      break;
  }
}

}  // namespace weft::tpp::a64_brgemm
