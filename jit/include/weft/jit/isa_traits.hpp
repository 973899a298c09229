// What each instruction set offers generated code, in one record per jit::Isa: vector width and
// lanes, architectural vector registers, how a partial vector (a tail) is loaded and stored, which
// FMA / dot instructions exist, and the BRGEMM planning defaults measured for it. Every layer asks
// this record instead of comparing Isa values, so that a new ISA states its facts once:
//
//   const weft::jit::IsaTraits& t = weft::jit::isa_traits(isa);
//   int lanes = t.lanes(sizeof(float));           // 8 on AVX2, 16 on AVX-512
//   if (t.tail == weft::jit::TailPolicy::opmask) { ... masked loads ... }
//
// Adding an ISA: add the enumerator to jit::Isa (cpu.hpp), then its record here and its case in
// isa_traits(). Until the case exists the build fails: isa_traits() switches over Isa without a
// default inside a region where -Wswitch is an error ("enumeration value 'amx' not handled in
// switch", GCC and clang alike), so a new ISA never silently gets another one's values.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "weft/jit/cpu.hpp"
#include "weft/jit/error.hpp"

namespace weft::jit {

// How generated code loads and stores the first r lanes of a vector without touching memory past
// them (the evidence behind each choice is in tpp/src/vec_traits.hpp).
enum class TailPolicy : std::uint8_t {
  none,       // no generated code (the reference ISA)
  opmask,     // masked moves under an opmask register: masked-off lanes never fault
  piecewise,  // 16-, 8- and 4-byte moves of the lanes that exist
  predicate,  // SVE: loads and stores under a predicate (whilelt): inactive lanes never fault
};

// BRGEMM register-blocking defaults, measured per ISA (bench/tpp/brgemm.cpp, WEFT_BENCH_PLAN).
struct BrgemmIsaDefaults {
  // Vectors per full row panel when the caller does not say. Four vectors with 3 columns (32 x 3
  // on AVX2, B broadcasts in registers, libxsmm's choice too) are best for 32x32x32 and 64x64x64
  // (Zen 3); on AVX-512 four zmm vectors (64 rows) with 6 columns fill 24 of 32 registers.
  int panel_vectors = 4;
  // Where panels of `panel_vectors` would leave a one-vector panel (5, 9, 13, ... vectors), panels
  // of one vector more instead. AVX-512: 80x80x80 ran 0.93x libxsmm as 4 + 1 and 0.997x as one
  // panel of 5 (5 x 5 tiles, 25 accumulators; Zen 4, hot, same run); 96 rows as 5 + 1 fell to
  // 0.94x, so other counts keep panels of four. AVX2 has no registers for a fifth vector.
  bool widen_to_avoid_single_vector_panel = false;
  // k steps per loop iteration. AVX2 (Zen 3): 8 keeps the loop body of even the widest tile within
  // the op cache, measured as fast as full unrolling for k = 32 and 64. AVX-512 (Zen 5): 2. With
  // operands streaming from L2/L3 (the seed contraction's loop of 32x32x32 batch-8 calls, same run
  // as libxsmm, three runs) the unroll decides: 32 ran at 0.88-0.91x libxsmm, 16 at 0.96x, 8 at
  // 0.99-1.00x, 2 at 1.00-1.02x; with hot operands all are within 1 % of each other.
  int k_unroll = 8;
  // Columns of a two-vector tile with A in registers; 0: as many as fit. AVX-512: 8, not the 11
  // that fit: 32x32x32 as 4 tiles of 8 columns (one loop body) instead of 11 + 11 + 10 ran
  // 1.01-1.03x faster streaming and 1.04x hot for a single call (Zen 5, same-run ratios to
  // libxsmm). Narrower panels keep their widest tiles: one vector with 8 columns lost 7-15 % on
  // m <= 16.
  int two_vector_max_cols = 0;
  // m = 1 as dot products along k (vectors of k, horizontal sums), which the emitter has for
  // 256-bit vectors only.
  bool dot_tiles = false;
};

struct IsaTraits {
  Isa isa = Isa::reference;
  int vector_bytes = 0;      // one vector register
  int vector_registers = 0;  // architectural vector registers (ymm0-15, zmm0-31)
  TailPolicy tail = TailPolicy::none;
  bool fma = false;       // vfmadd*ps / pd
  bool bf16_dot = false;  // bf16 dot-product instructions: vdpbf16ps (AVX512_BF16); bfmmla, bfdot (BF16)
  // Whether the bf16 BRGEMM gives brgemm_reference's bits. The reference models vdpbf16ps (each
  // product exact, the odd k added first, each sum rounded) and the widening paths; Arm's bfmmla /
  // bfdot (BFDotAdd) round to odd within a step and flush denormals: they keep the error bound of
  // docs/tpp_brgemm.md ("bf16 with bfdot and bfmmla") instead.
  bool bf16_bit_exact = true;
  // The ISA whose element-wise (unary, binary) kernels this one runs: itself, or another's.
  // sve128 / sve128_bf16 run Neon's (at 128 bits Neon is as fast: llvm-mca, Neoverse V2); sve256 /
  // sve512 (and _bf16) their own, which is faster on the memory-bound ops (1.3-1.5x on Neoverse
  // V1's model; docs/tpp_eltwise.md, "Element-wise kernels on SVE CPUs"); the ops and types the
  // SVE emitter lacks are planned again for Neon by the AArch64 dispatch.
  Isa elementwise = Isa::reference;
  // Some implementations run a vector instruction in passes over a narrower datapath: AVX-512 on
  // Zen 4 on 256-bit pipes (two passes per zmm FMA), AVX2 on Zen 1 on 128-bit ones. This is the
  // narrowest known; what this CPU has is CpuFeatures::vector_datapath_bytes (see datapath_bytes).
  int narrowest_datapath_bytes = 0;
  BrgemmIsaDefaults brgemm;

  // Elements of `element_bytes` bytes (4: fp32, 2: bf16, 8: fp64) per vector register.
  constexpr int lanes(int element_bytes) const { return vector_bytes / element_bytes; }
};

// The portable C++ code, as the compiler builds it for the x86-64 baseline: SSE2 (16-byte vectors,
// 16 registers), no FMA. Nothing is generated for it, so it has no tail policy and no BRGEMM plan;
// the cost model's peak for it (2 pipes x 4 lanes x 1 flop, a multiply or an add) is the
// "scalar-ish" guess it always made.
inline constexpr IsaTraits kReferenceTraits{
    .isa = Isa::reference, .vector_bytes = 16, .vector_registers = 16, .tail = TailPolicy::none, .fma = false,
    .bf16_dot = false, .elementwise = Isa::reference, .narrowest_datapath_bytes = 16, .brgemm = {}};

// Intel's SDM guarantees that vmaskmovps does not fault on masked-off lanes, AMD's APM leaves it
// implementation-dependent, and masked stores are microcoded on Zen: tails are piecewise.
inline constexpr IsaTraits kAvx2Traits{
    .isa = Isa::avx2, .vector_bytes = 32, .vector_registers = 16, .tail = TailPolicy::piecewise, .fma = true,
    .bf16_dot = false, .elementwise = Isa::avx2, .narrowest_datapath_bytes = 16,
    .brgemm = {.panel_vectors = 4, .widen_to_avoid_single_vector_panel = false, .k_unroll = 8,
               .two_vector_max_cols = 0, .dot_tiles = true}};

// AVX-512 F + BW + VL (what can_run() asks for).
inline constexpr IsaTraits kAvx512Traits{
    .isa = Isa::avx512, .vector_bytes = 64, .vector_registers = 32, .tail = TailPolicy::opmask, .fma = true,
    .bf16_dot = false, .elementwise = Isa::avx512, .narrowest_datapath_bytes = 32,
    .brgemm = {.panel_vectors = 4, .widen_to_avoid_single_vector_panel = true, .k_unroll = 2,
               .two_vector_max_cols = 8, .dot_tiles = false}};

// AVX-512 with AVX512_BF16: the same vectors, tails and BRGEMM defaults; bf16 kernels use the
// bf16 instructions.
inline constexpr IsaTraits kAvx512Bf16Traits = [] {
  IsaTraits t = kAvx512Traits;
  t.isa = Isa::avx512_bf16;
  t.bf16_dot = true;
  t.elementwise = Isa::avx512_bf16;
  return t;
}();

// AArch64 Advanced SIMD: 128-bit vectors, 32 registers. There are no masked loads, so tails are
// loaded and stored piecewise (ldr q/d/s and single lanes). BRGEMM: row panels of 4 vectors (16
// fp32 rows) with up to 6 columns fill 24 accumulators + 6 B + 2 A registers; k in groups of 4
// (one ldr q of B's column feeds the 4 by-element FMAs of a column).
inline constexpr IsaTraits kNeonTraits{
    .isa = Isa::neon, .vector_bytes = 16, .vector_registers = 32, .tail = TailPolicy::piecewise, .fma = true,
    .bf16_dot = false, .elementwise = Isa::neon, .narrowest_datapath_bytes = 16,
    .brgemm = {.panel_vectors = 4, .widen_to_avoid_single_vector_panel = false, .k_unroll = 4,
               .two_vector_max_cols = 0, .dot_tiles = false}};

// Neon with FEAT_BF16: the bf16 BRGEMM uses bfmmla / bfdot (their rounding contract is in
// docs/tpp_brgemm.md); everything else is Neon's. The element-wise kernels stay Neon's: bfcvtn
// rounds fp32 denormals differently from jit::to_bfloat16.
inline constexpr IsaTraits kNeonBf16Traits = [] {
  IsaTraits t = kNeonTraits;
  t.isa = Isa::neon_bf16;
  t.bf16_dot = true;
  t.bf16_bit_exact = false;
  return t;
}();

// SVE at one vector length (16, 32 or 64 bytes), with SVE's BF16 or without: 32 z registers,
// predicated tails. The BRGEMM defaults are Neon's (4-vector panels, k in groups of 4); its SVE
// emitter plans its own tiles per length (f32, f64; bf16 runs Neon's bfmmla kernel). Element-wise
// kernels (elementwise): Neon's at 128 bits, the ISA's own (SVE code) at 256 and 512.
constexpr IsaTraits sve_traits(Isa isa, int vector_bytes, bool bf16) {
  IsaTraits t = kNeonTraits;
  t.isa = isa;
  t.vector_bytes = vector_bytes;
  t.tail = TailPolicy::predicate;
  t.bf16_dot = bf16;
  t.bf16_bit_exact = !bf16;
  t.elementwise = vector_bytes > 16 ? isa : Isa::neon;
  return t;
}
inline constexpr IsaTraits kSve128Traits = sve_traits(Isa::sve128, 16, false);
inline constexpr IsaTraits kSve256Traits = sve_traits(Isa::sve256, 32, false);
inline constexpr IsaTraits kSve512Traits = sve_traits(Isa::sve512, 64, false);
inline constexpr IsaTraits kSve128Bf16Traits = sve_traits(Isa::sve128_bf16, 16, true);
inline constexpr IsaTraits kSve256Bf16Traits = sve_traits(Isa::sve256_bf16, 32, true);
inline constexpr IsaTraits kSve512Bf16Traits = sve_traits(Isa::sve512_bf16, 64, true);

#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"
// The record of `isa`. Throws weft::Error for a value that is no enumerator of Isa.
constexpr const IsaTraits& isa_traits(Isa isa) {
  switch (isa) {  // no default: a new enumerator without a case here does not compile
    case Isa::reference: return kReferenceTraits;
    case Isa::avx2: return kAvx2Traits;
    case Isa::avx512: return kAvx512Traits;
    case Isa::avx512_bf16: return kAvx512Bf16Traits;
    case Isa::neon: return kNeonTraits;
    case Isa::neon_bf16: return kNeonBf16Traits;
    case Isa::sve128: return kSve128Traits;
    case Isa::sve256: return kSve256Traits;
    case Isa::sve512: return kSve512Traits;
    case Isa::sve128_bf16: return kSve128Bf16Traits;
    case Isa::sve256_bf16: return kSve256Bf16Traits;
    case Isa::sve512_bf16: return kSve512Bf16Traits;
  }
  throw Error("isa_traits: " + std::to_string(static_cast<int>(isa)) + " is no jit::Isa");
}
#pragma GCC diagnostic pop

// Bytes of a vector `isa` code processes per pass on `cpu`: the vector, or less where the CPU is
// known to split it (CpuFeatures::vector_datapath_bytes).
inline int datapath_bytes(Isa isa, const CpuFeatures& cpu) {
  const int vector = isa_traits(isa).vector_bytes;
  return cpu.vector_datapath_bytes > 0 ? std::min(vector, cpu.vector_datapath_bytes) : vector;
}

}  // namespace weft::jit
