#include <string>

#include "op_properties.hpp"
#include "weft/jit/error.hpp"
#include "weft/jit/isa_traits.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::tpp {
namespace {

using detail::unary_op_properties;

[[noreturn]] void fail(const UnaryDesc& d, const std::string& what) {
  throw weft::Error("unary TPP " + to_string(d) + ": " + what);
}

}  // namespace

bool is_elementwise(UnaryOp op) { return unary_op_properties(op).elementwise; }

namespace {

// Why no kernel exists for the op (and mask, transpose_out) of `d` in its data types, which
// why_unsupported_elementwise() accepted; "" when one does.
std::string why_no_kernel_in_types(const UnaryDesc& d) {
  using jit::DataType;
  const DataTypes& t = d.types;
  const std::string op = to_string(d.op), types = to_string(t);
  if (unary_op_properties(d.op).vnni) {
    const bool in_ok = t.in == DataType::bf16 || (d.op == UnaryOp::vnni2_pack && t.in == DataType::f32);
    if (t.out != DataType::bf16 || !in_ok)
      return "op " + op + " is not supported with data types " + types + ": VNNI-2 is a bf16 layout (" +
             (d.op == UnaryOp::vnni2_pack ? "out bf16, in bf16 or f32" : "in bf16 and out bf16") + ")";
    return {};
  }
  if (t.compute == DataType::f64) {
    if (!unary_op_properties(d.op).f64_kernel)
      return "op " + op + " is not supported with data types " + types +
             ": f64 kernels exist for zero, copy, relu, relu_bwd, square, reciprocal, sqrt, increment, decrement, "
             "scale, transpose and the four reductions (no transcendental)";
    if (d.mask == ReluMask::bitmask)
      return "op " + op + " with a ReLU bitmask is not supported with data types " + types +
             ": f64 kernels have no bitmask (relu_bwd reads the forward input in aux instead)";
  }
  return {};
}

}  // namespace

void validate(const UnaryDesc& d) {
  if (static_cast<int>(d.op) > static_cast<int>(UnaryOp::vnni2_unpack))
    fail(d, "op " + std::to_string(static_cast<int>(d.op)) + " is no UnaryOp (0.." +
                std::to_string(static_cast<int>(UnaryOp::vnni2_unpack)) + ")");
  if (static_cast<int>(d.mask) > static_cast<int>(ReluMask::bitmask))
    fail(d, "mask " + std::to_string(static_cast<int>(d.mask)) + " is no ReluMask (none or bitmask)");
  if (d.m < 1 || d.n < 1) fail(d, "m and n must be >= 1");
  // Offsets are emitted as 32-bit immediates; keep every matrix well inside that.
  constexpr std::int64_t kMaxElements = std::int64_t{1} << 28;
  if (d.m > kMaxElements || d.n > kMaxElements || d.m * d.n > kMaxElements) {
    fail(d, "more than 2^28 elements per call");
  }
  if (d.ld_in < 0 || d.ld_out < 0) fail(d, "leading dimensions must be >= 0 (0: given at call time)");
  if (d.ld_in != 0 && d.ld_in < d.m) fail(d, "ld_in < m");
  if (d.ld_in > kMaxElements || d.ld_out > kMaxElements) fail(d, "leading dimension above 2^28");
  if (d.transpose_out && !is_elementwise(d.op)) fail(d, "transpose_out needs an element-wise op");
  if (d.transpose_out && d.mask != ReluMask::none) fail(d, "transpose_out with a ReLU bitmask");
  if (d.op == UnaryOp::transpose || d.transpose_out) {
    if (d.ld_out != 0 && d.ld_out < d.n) fail(d, "ld_out < n for a transpose (B is n x m)");
  } else if (!unary_op_properties(d.op).reduction) {
    if (d.ld_out != 0 && d.ld_out < d.m) fail(d, "ld_out < m");
  }
  if (!unary_op_properties(d.op).takes_alpha && d.alpha != 0.0f) fail(d, "alpha given to an op that takes none");
  if (d.mask == ReluMask::bitmask && d.op != UnaryOp::relu && d.op != UnaryOp::relu_bwd) {
    fail(d, "a ReLU bitmask given to an op other than relu / relu_bwd");
  }
  if (unary_op_properties(d.op).vnni && d.n % 2 != 0)
    fail(d, "n = " + std::to_string(d.n) + " is odd: " + to_string(d.op) + " packs the columns in pairs");
  if (const std::string why = why_unsupported_elementwise(d.types); !why.empty()) fail(d, why);
  if (const std::string why = why_no_kernel_in_types(d); !why.empty()) fail(d, why);
}

UnaryPlan plan_unary(const UnaryDesc& d, weft::jit::Isa isa) {
  validate(d);
  UnaryPlan p;
  // An ISA may run another's element-wise kernels (sve128 runs Neon's: IsaTraits::elementwise).
  p.isa = weft::jit::isa_traits(isa).elementwise;
  p.lanes = weft::jit::isa_traits(p.isa).lanes(static_cast<int>(jit::size_of(d.types.compute)));
  p.scratch = is_elementwise(d.op) ? detail::activation_scratch(d.op) : 0;
  // Contiguous element-wise work is one long column: fewer loop exits, and eligible for streaming
  // stores. Mask-carrying ops keep their per-column mask layout.
  const bool elementwise = is_elementwise(d.op) || d.op == UnaryOp::zero;
  const bool contiguous = !d.transpose_out && (d.n == 1 || ((d.ld_in == d.m || d.op == UnaryOp::zero) && d.ld_out == d.m));
  p.flat = elementwise && d.mask == ReluMask::none && contiguous;
  p.rows = p.flat ? d.m * d.n : d.m;
  p.cols = p.flat ? 1 : unary_op_properties(d.op).vnni ? d.n / 2 : d.n;
  p.full_vectors = p.rows / p.lanes;
  p.tail = static_cast<int>(p.rows % p.lanes);
  // Four vectors per step: 128 (256) bytes in flight per stream hides load latency; the ops with
  // long dependency chains gain nothing from more.
  p.unroll = 4;
  p.nontemporal = p.flat && p.rows * static_cast<std::int64_t>(jit::size_of(d.types.out)) >= kNontemporalBytes;
  p.block = d.types.compute == jit::DataType::f64 ? 4 : 8;  // a ymm register of the compute type
  return p;
}

}  // namespace weft::tpp
