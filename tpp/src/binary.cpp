// Binary TPPs: validation, plan, reference, functor and the process-wide kernel cache.
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "binary_emit.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/error.hpp"
#include "weft/jit/isa_traits.hpp"
#include "weft/jit/kernel_cache.hpp"
#include "weft/tpp/binary.hpp"

namespace weft::tpp {
namespace {

[[noreturn, gnu::cold, gnu::noinline]] void fail(const BinaryDesc& d, const std::string& what) {
  throw weft::Error("binary TPP " + to_string(d) + ": " + what);
}

struct Key {
  BinaryDesc desc;
  weft::jit::Isa isa;
  bool operator==(const Key&) const = default;
};

struct KeyHash {
  std::size_t operator()(const Key& k) const noexcept {
    std::size_t h = BinaryDescHash{}(k.desc);
    weft::jit::hash_combine(h, static_cast<int>(k.isa));
    return h;
  }
};

using Cache = weft::jit::KernelCache<Key, weft::jit::CodeBuffer, KeyHash>;

const weft::jit::CodeBuffer& code_for(const BinaryDesc& desc, weft::jit::Isa isa) {
  static Cache cache;
  if (isa == weft::jit::Isa::reference) throw weft::Error("binary TPP: no generated code for the reference ISA");
  return cache.get_or_create(Key{desc, isa}, [&] {
    auto code = detail::emit_binary(desc, plan_binary(desc, isa));
    code->finalize<BinaryKernelFn>("weft_binary_" + to_string(desc) + "_" + std::string(weft::jit::to_string(isa)));
    return code;
  });
}

// Element (i, j) of an input under its broadcast.
float element(const float* p, Broadcast b, std::int64_t ld, std::int64_t i, std::int64_t j) {
  switch (b) {
    case Broadcast::none: return p[i + j * ld];
    case Broadcast::row: return p[j];
    case Broadcast::col: return p[i];
    case Broadcast::scalar: return p[0];
  }
  return 0.0f;
}

}  // namespace

std::size_t BinaryDescHash::operator()(const BinaryDesc& d) const noexcept {
  std::size_t h = 0;
  weft::jit::hash_combine(h, static_cast<int>(d.op));
  weft::jit::hash_combine(h, d.m);
  weft::jit::hash_combine(h, d.n);
  weft::jit::hash_combine(h, d.ld_in0);
  weft::jit::hash_combine(h, d.ld_in1);
  weft::jit::hash_combine(h, d.ld_out);
  weft::jit::hash_combine(h, static_cast<int>(d.bcast0));
  weft::jit::hash_combine(h, static_cast<int>(d.bcast1));
  return h;
}

std::string to_string(BinaryOp op) {
  switch (op) {
    case BinaryOp::add: return "add";
    case BinaryOp::sub: return "sub";
    case BinaryOp::mul: return "mul";
    case BinaryOp::div: return "div";
    case BinaryOp::min: return "min";
    case BinaryOp::max: return "max";
  }
  return "op#" + std::to_string(static_cast<int>(op));
}

std::string to_string(Broadcast b) {
  switch (b) {
    case Broadcast::none: return "none";
    case Broadcast::row: return "row";
    case Broadcast::col: return "col";
    case Broadcast::scalar: return "scalar";
  }
  return "bcast#" + std::to_string(static_cast<int>(b));
}

std::string to_string(const BinaryDesc& d) {
  std::string s = to_string(d.op) + "_m" + std::to_string(d.m) + "_n" + std::to_string(d.n) + "_ld" +
                  std::to_string(d.ld_in0) + "_" + std::to_string(d.ld_in1) + "_" + std::to_string(d.ld_out);
  if (d.bcast0 != Broadcast::none) s += "_a" + to_string(d.bcast0);
  if (d.bcast1 != Broadcast::none) s += "_b" + to_string(d.bcast1);
  return s;
}

void validate(const BinaryDesc& d) {
  if (static_cast<int>(d.op) > static_cast<int>(BinaryOp::max))
    fail(d, "op " + std::to_string(static_cast<int>(d.op)) + " is no BinaryOp (add, sub, mul, div, min, max)");
  for (auto [b, name] : {std::pair{d.bcast0, "bcast0"}, std::pair{d.bcast1, "bcast1"}})
    if (static_cast<int>(b) > static_cast<int>(Broadcast::scalar))
      fail(d, std::string(name) + " " + std::to_string(static_cast<int>(b)) + " is no Broadcast (none, row, col, scalar)");
  if (d.m < 1 || d.n < 1) fail(d, "m and n must be >= 1");
  constexpr std::int64_t kMaxElements = std::int64_t{1} << 28;
  if (d.m > kMaxElements || d.n > kMaxElements || d.m * d.n > kMaxElements) fail(d, "more than 2^28 elements per call");
  if (d.ld_out < d.m) fail(d, "ld_out < m");
  if (d.bcast0 == Broadcast::none && d.ld_in0 < d.m) fail(d, "ld_in0 < m");
  if (d.bcast1 == Broadcast::none && d.ld_in1 < d.m) fail(d, "ld_in1 < m");
  if (d.ld_in0 > kMaxElements || d.ld_in1 > kMaxElements || d.ld_out > kMaxElements) fail(d, "leading dimension above 2^28");
}

BinaryPlan plan_binary(const BinaryDesc& d, weft::jit::Isa isa) {
  validate(d);
  BinaryPlan p;
  p.isa = isa;
  p.lanes = weft::jit::isa_traits(isa).lanes(sizeof(float));
  auto contiguous = [&](Broadcast b, std::int64_t ld) { return b == Broadcast::scalar || (b == Broadcast::none && ld == d.m); };
  p.flat = d.n == 1 ? (d.bcast0 != Broadcast::row && d.bcast1 != Broadcast::row)
                    : contiguous(d.bcast0, d.ld_in0) && contiguous(d.bcast1, d.ld_in1) && d.ld_out == d.m;
  // A single column with a row broadcast is the same as a scalar; keep the general path for it.
  p.rows = p.flat ? d.m * d.n : d.m;
  p.cols = p.flat ? 1 : d.n;
  p.full_vectors = p.rows / p.lanes;
  p.tail = static_cast<int>(p.rows % p.lanes);
  p.nontemporal = p.flat && d.bcast0 != Broadcast::col && d.bcast1 != Broadcast::col &&
                  p.rows * 4 >= kBinaryNontemporalBytes;
  // Vectors per step. The streaming sweep is memory-bound and does 8: fewer loop instructions per
  // byte. Measured over 8M floats on 1 thread, interleaved with our copy (15 runs each, this Zen 3):
  // add 1.064x / max 0.990x the copy's bandwidth with 8, 1.042x / 0.974x with 4, 1.032x / 0.967x
  // with 6. Software prefetch (prefetcht0 / nta / t2, 256 B to 2 KiB ahead on both inputs, 15
  // runs each) measured no gain: within noise at 256 B, 1-9 % slower from 512 B on.
  p.unroll = p.nontemporal ? 8 : 4;
  return p;
}

float binary_reference_value(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::add: return a + b;
    case BinaryOp::sub: return a - b;
    case BinaryOp::mul: return a * b;
    case BinaryOp::div: return a / b;
    case BinaryOp::min: return std::fmin(a, b);
    case BinaryOp::max: return std::fmax(a, b);
  }
  return std::nanf("");
}

namespace {

// Inlined into the functor's call: three predictable compares.
inline bool args_ok(const BinaryArgs& args) {
  return args.in0 != nullptr && args.in1 != nullptr && args.out != nullptr;
}

[[noreturn, gnu::cold, gnu::noinline]] void reject_args(const BinaryDesc& d, const BinaryArgs& args) {
  fail(d, std::string("BinaryArgs::") + (args.in0 == nullptr ? "in0" : args.in1 == nullptr ? "in1" : "out") +
              " is null");
}

}  // namespace

void check_args(const BinaryDesc& d, const BinaryArgs& args) {
  if (!args_ok(args)) [[unlikely]]
    reject_args(d, args);
}

void binary_reference(const BinaryDesc& d, const BinaryArgs& args) {
  validate(d);
  check_args(d, args);
  for (std::int64_t j = 0; j < d.n; ++j)
    for (std::int64_t i = 0; i < d.m; ++i)
      args.out[i + j * d.ld_out] = binary_reference_value(d.op, element(args.in0, d.bcast0, d.ld_in0, i, j),
                                                          element(args.in1, d.bcast1, d.ld_in1, i, j));
}

BinaryKernelFn binary_kernel(const BinaryDesc& desc, weft::jit::Isa isa) {
  return reinterpret_cast<BinaryKernelFn>(const_cast<void*>(static_cast<const void*>(code_for(desc, isa).getCode())));
}

std::size_t binary_code_size(const BinaryDesc& desc, weft::jit::Isa isa) { return code_for(desc, isa).getSize(); }

Binary::Binary(const BinaryDesc& desc) : desc_(desc) {
  validate(desc);
  const weft::jit::Isa isa = weft::jit::selected_isa();
  if (isa != weft::jit::Isa::reference) fn_ = binary_kernel(desc, isa);
}

void Binary::operator()(const BinaryArgs& args) const {
  if (!args_ok(args)) [[unlikely]]
    reject_args(desc_, args);
  if (fn_ != nullptr) {
    fn_(&args);
  } else {
    binary_reference(desc_, args);
  }
}

void Binary::operator()(const float* in0, const float* in1, float* out) const {
  (*this)(BinaryArgs{in0, in1, out});
}

}  // namespace weft::tpp
