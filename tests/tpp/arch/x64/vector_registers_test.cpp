// x86-64 emitters choose their vector registers (Ymm, Zmm) from the ISA's traits record: width,
// tail policy and FMA must all match.
#include <gtest/gtest.h>

#include <string>

#include <xbyak/xbyak.h>

#include "kernel_frame.hpp"
#include "weft/jit/error.hpp"
#include "weft/jit/isa_traits.hpp"

namespace {

using weft::jit::Isa;
using weft::jit::isa_traits;
using weft::jit::IsaTraits;
using weft::jit::TailPolicy;

TEST(X64VectorRegisters, EmittersChooseTheirRegistersFromTheRecord) {
  using weft::tpp::detail::vector_registers_of;
  EXPECT_TRUE(vector_registers_of<Xbyak::Ymm>(isa_traits(Isa::avx2)));
  EXPECT_FALSE(vector_registers_of<Xbyak::Zmm>(isa_traits(Isa::avx2)));
  EXPECT_TRUE(vector_registers_of<Xbyak::Zmm>(isa_traits(Isa::avx512)));
  EXPECT_FALSE(vector_registers_of<Xbyak::Ymm>(isa_traits(Isa::avx512)));
  for (bool ymm : {false, true}) {
    EXPECT_FALSE(ymm ? vector_registers_of<Xbyak::Ymm>(isa_traits(Isa::reference))
                     : vector_registers_of<Xbyak::Zmm>(isa_traits(Isa::reference)));
  }
  // A 256-bit ISA with opmasks (AVX10/256-like) has no emitter until one is written for it.
  IsaTraits masked_ymm = isa_traits(Isa::avx2);
  masked_ymm.tail = TailPolicy::opmask;
  EXPECT_FALSE(vector_registers_of<Xbyak::Ymm>(masked_ymm));
  EXPECT_FALSE(vector_registers_of<Xbyak::Zmm>(masked_ymm));

  int bytes = 0;
  auto width = [&]<class Vmm>() { return bytes = weft::tpp::detail::VecTraits<Vmm>::bytes; };
  weft::tpp::detail::with_vector_registers(Isa::avx2, "test", width);
  EXPECT_EQ(bytes, 32);
  weft::tpp::detail::with_vector_registers(Isa::avx512, "test", width);
  EXPECT_EQ(bytes, 64);
  try {
    weft::tpp::detail::with_vector_registers(Isa::reference, "unary copy_m1", width);
    FAIL() << "no error";
  } catch (const weft::Error& e) {
    EXPECT_EQ(std::string(e.what()), "unary copy_m1: no code generator for ISA reference");
  }
}

}  // namespace
