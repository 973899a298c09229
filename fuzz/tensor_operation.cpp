// Fuzz target: einsum::backend::TensorOperation::setup (and setup_optimized, setup with options, a
// tuner's loop override, ragged splits) on arbitrary dimension types, execution types, sizes and
// strides; tiny operations that set up are executed and compared with the reference contraction.
//
// Input (text; lists are comma-separated integers, any length, so lengths may disagree):
//   dtype=0              0 fp32, 1 fp64       prims=99,3,99   first touch, main, last touch (raw enum values)
//   types=1,2,3          exec=1,1,1           sizes=8,4,2
//   s0=1,0,8             s1=0,2,1             so=1,8,0          (no s1 line: a unary operation)
//   ragged=0,0,0         optional: Dim::last_block per dimension (setup with a Contraction)
//   mode=0               0 setup, 1 setup_optimized, 2 setup(Contraction, Options), 3 + loop override
//   optimize=1 generic=0 threads=2            options of modes 2 and 3
//   blocks=4;2,1         block sizes per loop letter (mode 3)
//   loops=bA             the override's loop_string: everything after "loops=" to the end (mode 3)
//
// Properties: setup returns an error code (an exception, if any, is a weft::Error); input the
// documented checks reject (lengths, sizes, negative strides, dtype, main none, unknown enum values,
// transcendental primitives in fp64, byte spans beyond int64) never succeeds; a failed setup has a
// message and refuses to execute; a successful tiny one executes without touching memory outside
// the tensors and matches reference_contraction().
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "weft/tensor/reference.hpp"
#include "weft/tensor/tensor_operation.hpp"

namespace {

using einsum::backend::TensorOperation;
using weft::fuzz::check;
using weft::fuzz::fail;
using weft::tensor::Contraction;
using weft::tensor::dim_t;
using weft::tensor::dtype_t;
using weft::tensor::error_t;
using weft::tensor::exec_t;
using weft::tensor::prim_t;

constexpr std::int64_t kTinyPoints = 20000;     // iteration points (all dims) for execution
constexpr std::int64_t kTinyFootprint = 65536;  // elements per tensor for execution
constexpr std::size_t kMaxList = 64;

struct Case {
  std::uint32_t dtype = 0;
  std::uint32_t first = 99, main = 3, last = 99;
  std::vector<std::int64_t> types, exec, sizes, s0, s1, so, ragged;
  bool has_s1 = false;
  int mode = 0;
  bool optimize = false, generic = false;
  int threads = 1;
  std::vector<std::vector<long>> blocks;
  std::string loops;
};

std::vector<std::int64_t> list(const weft::fuzz::Fields& f, std::string_view key) {
  std::vector<std::int64_t> v = weft::fuzz::int_list(f.get(key));
  if (v.size() > kMaxList) v.resize(kMaxList);
  return v;
}

Case decode(std::string_view input) {
  const weft::fuzz::Fields f(input, "loops");
  Case c;
  c.dtype = static_cast<std::uint32_t>(weft::fuzz::first_int(f.get("dtype"), 0));
  const std::vector<std::int64_t> prims = list(f, "prims");
  if (prims.size() > 0) c.first = static_cast<std::uint32_t>(prims[0]);
  if (prims.size() > 1) c.main = static_cast<std::uint32_t>(prims[1]);
  if (prims.size() > 2) c.last = static_cast<std::uint32_t>(prims[2]);
  c.types = list(f, "types");
  c.exec = list(f, "exec");
  c.sizes = list(f, "sizes");
  c.s0 = list(f, "s0");
  c.s1 = list(f, "s1");
  c.has_s1 = f.has("s1");
  c.so = list(f, "so");
  c.ragged = list(f, "ragged");
  c.mode = static_cast<int>(static_cast<std::uint64_t>(weft::fuzz::first_int(f.get("mode"), 0)) % 4);
  c.optimize = weft::fuzz::first_int(f.get("optimize"), 0) != 0;
  c.generic = weft::fuzz::first_int(f.get("generic"), 0) != 0;
  c.threads = 1 + static_cast<int>((static_cast<std::uint64_t>(weft::fuzz::first_int(f.get("threads"), 1)) - 1) % 4);
  const std::string_view blocks = f.get("blocks");
  std::size_t pos = 0;
  while (pos <= blocks.size() && !blocks.empty() && c.blocks.size() < 26) {
    std::size_t end = blocks.find(';', pos);
    if (end == std::string_view::npos) end = blocks.size();
    std::vector<long> b;
    for (std::int64_t v : weft::fuzz::int_list(blocks.substr(pos, end - pos)))
      if (b.size() < 16) b.push_back(v);
    c.blocks.push_back(b);
    pos = end + 1;
  }
  c.loops = std::string(f.get("loops"));
  return c;
}

std::string join(const std::vector<std::int64_t>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

std::string describe(const Case& c) {
  std::string s = "dtype=" + std::to_string(c.dtype) + " prims=" + std::to_string(c.first) + "," + std::to_string(c.main) +
                  "," + std::to_string(c.last) + " types=" + join(c.types) + " exec=" + join(c.exec) + " sizes=" +
                  join(c.sizes) + " s0=" + join(c.s0) + (c.has_s1 ? " s1=" + join(c.s1) : std::string(" (no s1)")) +
                  " so=" + join(c.so) + " mode=" + std::to_string(c.mode);
  if (!c.ragged.empty()) s += " ragged=" + join(c.ragged);
  if (c.mode >= 2) s += std::string(" optimize=") + (c.optimize ? "1" : "0") + " generic=" + (c.generic ? "1" : "0");
  if (c.mode == 3) s += " loops=\"" + weft::fuzz::to_printable(c.loops) + "\"";
  return s;
}

template <class E>
std::vector<E> as_enums(const std::vector<std::int64_t>& v) {
  std::vector<E> out;
  for (std::int64_t x : v) out.push_back(static_cast<E>(static_cast<std::uint32_t>(x)));
  return out;
}

bool known_prim(std::uint32_t p) {
  const auto q = static_cast<prim_t>(p);
  return weft::tensor::is_unary(q) || weft::tensor::is_binary_elementwise(q) || weft::tensor::is_gemm_like(q) ||
         q == prim_t::none;
}

// Input the documented checks reject whatever the rest is.
bool surely_invalid(const Case& c) {
  const std::size_t n = c.types.size();
  if (c.exec.size() != n || c.sizes.size() != n || c.s0.size() != n || c.so.size() != n) return true;
  if (c.has_s1 && !c.s1.empty() && c.s1.size() != n) return true;
  if (n == 0 || c.dtype > 1 || static_cast<prim_t>(c.main) == prim_t::none) return true;
  // No transcendental primitive in fp64.
  const auto transcendental = [](std::uint32_t p) {
    const auto q = static_cast<prim_t>(p);
    return q == prim_t::sigmoid || q == prim_t::exp || q == prim_t::tanh || q == prim_t::gelu;
  };
  if (c.dtype == 1 && (transcendental(c.first) || transcendental(c.main) || transcendental(c.last))) return true;
  if (!known_prim(c.first) || !known_prim(c.main) || !known_prim(c.last)) return true;
  for (std::size_t i = 0; i < n; ++i) {
    // The enums take the low 32 bits, as as_enums() passes them.
    if (static_cast<std::uint32_t>(c.types[i]) > 3 || static_cast<std::uint32_t>(c.exec[i]) > 2) return true;
    if (c.sizes[i] <= 0 || c.sizes[i] > 2147483647) return true;
    if (c.s0[i] < 0 || c.so[i] < 0 || (c.has_s1 && !c.s1.empty() && c.s1[i] < 0)) return true;
  }
  return false;
}

// Largest element offset + 1 a tensor is read or written at; saturated.
std::int64_t footprint(const Contraction& op, int tensor) {
  std::int64_t f = 1;
  for (const auto& d : op.dims) {
    const std::int64_t s = tensor == 0 ? d.stride_in0 : tensor == 1 ? d.stride_in1 : d.stride_out;
    f = weft::fuzz::sat_add(f, weft::fuzz::sat_mul(d.size - 1, s));
  }
  return f;
}

// Whether every output element is written by one point (over the non-reduced dims): otherwise the
// result depends on the order of the writes and there is nothing to compare.
bool output_injective(const Contraction& op) {
  std::vector<const weft::tensor::Dim*> dims;
  for (const auto& d : op.dims)
    if (!(weft::tensor::is_gemm_like(op.main) && d.type == dim_t::k)) dims.push_back(&d);
  std::vector<std::int64_t> offsets{0};
  for (const auto* d : dims) {
    std::vector<std::int64_t> next;
    next.reserve(offsets.size() * static_cast<std::size_t>(d->size));
    for (std::int64_t o : offsets)
      for (std::int64_t i = 0; i < d->size; ++i) next.push_back(o + i * d->stride_out);
    offsets.swap(next);
  }
  std::sort(offsets.begin(), offsets.end());
  return std::adjacent_find(offsets.begin(), offsets.end()) == offsets.end();
}

bool any_of_prims(const Contraction& op, std::initializer_list<prim_t> prims) {
  for (prim_t p : prims)
    if (op.first_touch == p || op.main == p || op.last_touch == p) return true;
  return false;
}

// T: float for fp32 operations, double for fp64 ones. The bounds scale with T's precision (fp64
// has no transcendental primitives, so its results are sums and correctly rounded ops).
template <class T>
void execute_and_compare(const TensorOperation& top, const Contraction& op, const Case& c, std::uint64_t seed) {
  constexpr double rel = sizeof(T) == sizeof(double) ? 1e-12 : 1e-5;
  constexpr double abs_slack = sizeof(T) == sizeof(double) ? 1e-13 : 1e-6;
  std::int64_t points = 1;
  for (const auto& d : op.dims) points = weft::fuzz::sat_mul(points, d.size);
  const std::int64_t f0 = footprint(op, 0), f1 = footprint(op, 1), fo = footprint(op, 2);
  if (points > kTinyPoints || f0 > kTinyFootprint || f1 > kTinyFootprint || fo > kTinyFootprint) return;

  weft::fuzz::Rng rng(seed);
  // Positive data where a primitive is undefined for negative numbers or near zero.
  const bool positive = any_of_prims(op, {prim_t::sqrt, prim_t::reciprocal, prim_t::div});
  const auto value = [&] {
    const float v = 0.5f + static_cast<float>(rng.below(1000)) / 1000.0f;
    return positive || rng.chance(1, 2) ? v : -v;
  };
  weft::fuzz::Guarded<T> in0(static_cast<std::size_t>(f0)), in1(static_cast<std::size_t>(f1)),
      out(static_cast<std::size_t>(fo));
  std::vector<T> expected(static_cast<std::size_t>(fo));
  for (std::size_t i = 0; i < in0.size(); ++i) in0[i] = value();
  for (std::size_t i = 0; i < in1.size(); ++i) in1[i] = value();
  for (std::size_t i = 0; i < out.size(); ++i) expected[i] = out[i] = value();
  const std::vector<T> initial = expected;
  const bool binary = op.is_binary();

  omp_set_num_threads(c.threads);
  try {
    top.execute(in0.data(), binary ? in1.data() : nullptr, out.data());
  } catch (const std::exception& e) {
    fail("execute() threw after a successful setup: " + std::string(e.what()) + "\n" + describe(c));
  }
  check(in0.canary_intact() && in1.canary_intact() && out.canary_intact(),
        [&] { return "execute() wrote in front of a tensor: " + describe(c); });
  if (!output_injective(op)) return;

  weft::tensor::reference_contraction(op, in0.data(), binary ? in1.data() : nullptr, expected.data());
  // Error bound: float rounding of the sums (over absolute values) and 1e-6 relative accuracy of
  // the transcendental TPPs (fp64: double rounding of the sums), carried through the last touch by
  // evaluating it on both ends.
  std::vector<T> pre(initial);
  Contraction pre_op = op;
  pre_op.last_touch = prim_t::none;
  weft::tensor::reference_contraction(pre_op, in0.data(), binary ? in1.data() : nullptr, pre.data());
  std::vector<T> magnitude(initial.size(), T(0));
  if (weft::tensor::is_gemm_like(op.main)) {
    std::vector<T> abs0(in0.size()), abs1(in1.size());
    for (std::size_t i = 0; i < abs0.size(); ++i) abs0[i] = std::abs(in0[i]);
    for (std::size_t i = 0; i < abs1.size(); ++i) abs1[i] = std::abs(in1[i]);
    for (std::size_t i = 0; i < magnitude.size(); ++i)
      magnitude[i] = static_cast<T>(std::abs(weft::tensor::unary_value(op.first_touch, initial[i])));
    Contraction magnitude_op = pre_op;
    magnitude_op.first_touch = prim_t::none;
    weft::tensor::reference_contraction(magnitude_op, abs0.data(), abs1.data(), magnitude.data());
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double got = out[i], want = expected[i];
    if (std::isnan(want) || std::isinf(want)) {
      check(std::isnan(want) ? std::isnan(got) : got == want, [&] {
        return "element " + std::to_string(i) + " is " + std::to_string(got) + ", expected " + std::to_string(want) + ": " + describe(c);
      });
      continue;
    }
    const double v = pre[i];
    const double tol = rel * (std::abs(static_cast<double>(magnitude[i])) + std::abs(v)) + abs_slack;
    double lo = want, hi = want;
    for (const double x : {v - tol, v + tol}) {
      const double y = static_cast<T>(weft::tensor::unary_value(op.last_touch, x));
      lo = std::min(lo, y);
      hi = std::max(hi, y);
    }
    const double slack = rel * std::max(std::abs(lo), std::abs(hi)) + abs_slack;
    check(got >= lo - slack && got <= hi + slack, [&] {
      return "element " + std::to_string(i) + " is " + std::to_string(got) + ", expected " + std::to_string(want) +
             " (within [" + std::to_string(lo - slack) + ", " + std::to_string(hi + slack) + "]): " + describe(c) +
             "\n" + top.describe();
    });
  }
}

// lowering.hpp: "every letter of a k dimension stays lower case, and a dynamic/guided schedule may
// not sit inside a k loop (it would let two threads update one output block)". runtime and auto
// count as dynamic: OpenMP may resolve them to it (libgomp's default run-sched-var is dynamic).
// Returns what the accepted override breaks, or empty.
std::string override_race(const Contraction& lowered, const std::string& loops) {
  if (!weft::tensor::is_gemm_like(lowered.main)) return {};
  std::vector<bool> k_loop;
  for (const auto& d : lowered.dims)
    if (d.exec != exec_t::prim) k_loop.push_back(d.type == dim_t::k);
  bool k_outside_run = false, in_run = false;
  char closing = 0;
  std::size_t i = 0;
  for (; i < loops.size() && loops[i] != '@'; ++i) {
    const char ch = loops[i];
    if (closing != 0) {
      if (ch == closing) closing = 0;
      continue;
    }
    if (ch == '{') closing = '}';
    if (ch == '[') closing = ']';
    const bool upper = ch >= 'A' && ch <= 'Z';
    if (!upper && !(ch >= 'a' && ch <= 'z')) continue;
    const auto loop = static_cast<std::size_t>(upper ? ch - 'A' : ch - 'a');
    const bool k = loop < k_loop.size() && k_loop[loop];
    if (upper && k) return std::string("'") + ch + "' makes a k loop parallel";
    in_run = in_run || upper;
    if (!in_run) k_outside_run = k_outside_run || k;
  }
  const std::string clauses = loops.substr(std::min(i, loops.size()));
  if (k_outside_run)
    for (const char* kind : {"dynamic", "guided", "runtime", "auto"})
      if (clauses.find(kind) != std::string::npos)
        return std::string("a ") + kind + " schedule inside a k loop";
  return {};
}

// Whether the byte span of a tensor (size x stride x element bytes, summed over the dims)
// overflows int64 (docs/tensor.md, "Size limits").
bool byte_span_overflows(const Case& c) {
  const std::size_t n = std::min(c.sizes.size(), std::min(c.s0.size(), c.so.size()));
  const std::int64_t bytes = c.dtype == 1 ? 8 : 4;
  for (const auto* strides : {&c.s0, &c.s1, &c.so}) {
    if (strides == &c.s1 && !c.has_s1) continue;
    std::int64_t span = 0;
    for (std::size_t i = 0; i < n && i < strides->size(); ++i) {
      std::int64_t term = 0;
      if (__builtin_mul_overflow(c.sizes[i], (*strides)[i], &term) || __builtin_mul_overflow(term, bytes, &term) ||
          __builtin_add_overflow(span, term, &span))
        return true;
    }
  }
  return false;
}

void run_case(const Case& c, std::uint64_t seed) {
  TensorOperation top;
  const auto dims = as_enums<dim_t>(c.types);
  const auto exec = as_enums<exec_t>(c.exec);
  const std::vector<std::int64_t> no_s1;
  const std::vector<std::int64_t>& s1 = c.has_s1 ? c.s1 : no_s1;
  error_t result = error_t::success;
  std::optional<Contraction> op;  // what the user asked for, for the reference
  try {
    op = Contraction::from_config(static_cast<dtype_t>(c.dtype), static_cast<prim_t>(c.first), static_cast<prim_t>(c.main),
                                  static_cast<prim_t>(c.last), dims, exec, c.sizes, c.s0, s1, c.so);
    // Remainders exist only in the IR: the flat setup() entries have no way to pass them.
    for (std::size_t i = 0; c.mode >= 2 && i < c.ragged.size() && i < op->dims.size(); ++i)
      op->dims[i].last_block = c.ragged[i];
  } catch (const weft::Error&) {
  } catch (const std::exception& e) {
    fail("Contraction::from_config threw a non-weft exception: " + std::string(e.what()) + "\n" + describe(c));
  }
  try {
    if (c.mode == 0) {
      result = top.setup(static_cast<dtype_t>(c.dtype), static_cast<prim_t>(c.first), static_cast<prim_t>(c.main),
                         static_cast<prim_t>(c.last), dims, exec, c.sizes, c.s0, s1, c.so);
    } else if (c.mode == 1) {
      result = top.setup_optimized(static_cast<dtype_t>(c.dtype), static_cast<prim_t>(c.first), static_cast<prim_t>(c.main),
                                   static_cast<prim_t>(c.last), dims, exec, c.sizes, c.s0, s1, c.so);
    } else {
      if (!op) return;  // lengths disagree: from_config's error, checked above
      TensorOperation::Options options;
      options.optimize = c.optimize;
      options.optimizer.threads = c.threads;
      options.allow_generic_primitives = c.generic;
      if (c.mode == 3) options.loops = weft::tensor::LoweringOverride{c.loops, c.blocks};
      result = top.setup(*op, options);
    }
  } catch (const weft::Error&) {
    return;  // allowed by the target's contract, though setup's own is an error code
  } catch (const std::exception& e) {
    fail("setup threw a non-weft exception: " + std::string(e.what()) + "\n" + describe(c));
  }

  check(top.error() == result, [&] { return "error() differs from what setup returned: " + describe(c); });
  if (result != error_t::success) {
    check(!top.error_message().empty(), [&] { return "a failed setup without a message: " + describe(c); });
    check(!top.describe().empty(), [&] { return "describe() is empty: " + describe(c); });
    bool refused = false;
    try {
      top.execute(nullptr, nullptr, nullptr);
    } catch (const weft::Error&) {
      refused = true;
    }
    check(refused, [&] { return "execute() after a failed setup did not throw weft::Error: " + describe(c); });
    return;
  }
  check(!surely_invalid(c), [&] {
    return "setup succeeded on input the documented checks reject: " + describe(c);
  });
  check(!byte_span_overflows(c), [&] { return "setup succeeded on a tensor whose byte span overflows int64: " + describe(c); });
  check(top.error_message().empty(), [&] { return "a successful setup with an error message: " + describe(c); });
  if (c.mode == 3 && !c.loops.empty()) {
    const std::string race = override_race(top.operation(), c.loops);
    check(race.empty(), [&] {
      return "setup accepted a loop override where two threads would update one output block (" + race + "): " +
             describe(c) + "\n" + top.describe();
    });
  }
  check(!top.describe().empty(), [&] { return "describe() is empty: " + describe(c); });
  if (op && op->dtype == dtype_t::fp64) execute_and_compare<double>(top, *op, c, seed);
  else if (op) execute_and_compare<float>(top, *op, c, seed);
}

// ---------------------------------------------------------------------------------------------
// The structured generator: mostly operations that fit a primitive, with dense layouts.

using weft::fuzz::Rng;

struct GenDim {
  int type;  // dim_t
  int exec;  // exec_t
  std::int64_t size;
  int role = -1;            // gemm: 0 the prim m, 1 the prim n, 2 the prim k (unit-stride in in1)
  int ragged_partner = -1;  // the role of the prim dim this one is the outer part of
  std::int64_t last_block = 0;
  std::int64_t s[3] = {0, 0, 0};
};

template <class T>
void shuffle(std::vector<T>& v, Rng& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[static_cast<std::size_t>(rng.below(i))]);
}

int index_of_role(const std::vector<GenDim>& dims, int role) {
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (dims[i].role == role) return static_cast<int>(i);
  return -1;
}

// Dense strides for tensor t over the dims it has, `unit` innermost, a split's outer part right
// outside its partner.
void layout(std::vector<GenDim>& dims, int t, int unit, const std::vector<bool>& in_tensor, Rng& rng) {
  std::vector<int> order;
  for (int i = 0; i < static_cast<int>(dims.size()); ++i)
    if (in_tensor[static_cast<std::size_t>(i)] && i != unit && dims[static_cast<std::size_t>(i)].ragged_partner < 0) order.push_back(i);
  shuffle(order, rng);
  if (unit >= 0 && in_tensor[static_cast<std::size_t>(unit)]) order.insert(order.begin(), unit);
  for (int i = 0; i < static_cast<int>(dims.size()); ++i) {
    const GenDim& d = dims[static_cast<std::size_t>(i)];
    if (d.ragged_partner < 0 || !in_tensor[static_cast<std::size_t>(i)]) continue;
    const auto at = std::find(order.begin(), order.end(), index_of_role(dims, d.ragged_partner));
    order.insert(at == order.end() ? order.end() : at + 1, i);
  }
  std::int64_t stride = 1;
  for (int i : order) {
    dims[static_cast<std::size_t>(i)].s[t] = stride;
    stride *= dims[static_cast<std::size_t>(i)].size;
  }
}

std::string generate(Rng& rng) {
  static const int unary[] = {0, 1, 2, 10, 11, 12, 13, 14, 15, 16};
  static const int binary_ops[] = {30, 31, 32, 33, 34, 35};
  const auto touch = [&] { return rng.chance(2, 3) ? 99 : rng.chance(1, 20) ? 30 : rng.pick(unary); };
  const auto size = [&](std::int64_t hi) { return rng.range(1, hi); };
  std::vector<GenDim> dims;
  int first = touch(), main = 3, last = touch();
  const auto kind = rng.below(20);  // 0-8 gemm, 9-12 brgemm, 13-16 unary, 17-19 binary
  const bool gemm = kind <= 12;
  if (gemm) {
    main = kind <= 8 ? 3 : 4;
    dims.push_back({1, 1, size(16), 0});
    dims.push_back({2, 1, size(8), 1});
    dims.push_back({3, 1, size(16), 2});
    if (main == 4) dims.push_back({3, 1, size(4)});  // the batch-reduce dim
    const int outer = static_cast<int>(rng.below(4));
    for (int i = 0; i < outer; ++i) {
      const int type = static_cast<int>(rng.below(4));
      dims.push_back({type, type != 3 && rng.chance(1, 3) ? 2 : 0, size(4)});
    }
    if (rng.chance(1, 4)) {  // a ragged split of the prim m, n or k
      const int role = static_cast<int>(rng.below(3));
      const GenDim& partner = dims[static_cast<std::size_t>(role)];
      if (partner.size > 1) {
        GenDim d{partner.type, 0, size(3)};
        d.ragged_partner = role;
        d.last_block = rng.range(1, partner.size - 1);
        dims.push_back(d);
      }
    }
  } else {
    main = kind <= 16 ? rng.pick(unary) : rng.pick(binary_ops);
    const int count = 1 + static_cast<int>(rng.below(4));
    for (int i = 0; i < count; ++i) dims.push_back({0, i < 2 ? 1 : rng.chance(1, 3) ? 2 : 0, size(i < 2 ? 12 : 4), i});
  }
  shuffle(dims, rng);  // the order of prim dims does not matter, that of loops does
  for (int t = 0; t < 3; ++t) {
    std::vector<bool> in(dims.size(), false);
    for (std::size_t i = 0; i < dims.size(); ++i) {
      const int type = dims[i].type;
      in[i] = gemm ? type == 0 || (t == 0 && (type == 1 || type == 3)) || (t == 1 && (type == 2 || type == 3)) ||
                         (t == 2 && (type == 1 || type == 2))
                   : t != 1 || weft::tensor::is_binary_elementwise(static_cast<prim_t>(main));
    }
    // The BRGEMM TPP wants m unit-stride in in0 and out, k in in1; now and then a layout it cannot take.
    int unit = gemm ? index_of_role(dims, t == 1 ? 2 : 0) : index_of_role(dims, 0);
    if (rng.chance(1, 12)) unit = static_cast<int>(rng.below(dims.size()));
    layout(dims, t, unit, in, rng);
    if (t == 1 && weft::tensor::is_binary_elementwise(static_cast<prim_t>(main)) && rng.chance(1, 5))
      dims[static_cast<std::size_t>(rng.below(dims.size()))].s[1] = 0;  // broadcast
  }

  std::string types, exec, sizes, s[3], ragged;
  bool any_ragged = false;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::string sep = i ? "," : "";
    types += sep + std::to_string(dims[i].type);
    exec += sep + std::to_string(dims[i].exec);
    sizes += sep + std::to_string(dims[i].size);
    for (int t = 0; t < 3; ++t) s[t] += sep + std::to_string(dims[i].s[t]);
    ragged += sep + std::to_string(dims[i].last_block);
    any_ragged = any_ragged || dims[i].last_block != 0;
  }
  // Now and then, the numbers the checks exist for.
  if (rng.chance(1, 6)) {
    static const char* const odd[] = {"0", "-1", "-8", "2147483647", "2147483648", "4294967296", "9223372036854775807",
                                      "-9223372036854775808", "1", "3", "99", "4", "7"};
    std::string* lists[] = {&types, &exec, &sizes, &s[0], &s[1], &s[2]};
    std::string& target_list = *lists[rng.below(6)];
    const std::size_t comma = target_list.find(',');
    if (rng.chance(1, 2) && comma != std::string::npos) target_list = std::string(rng.pick(odd)) + target_list.substr(comma);
    else target_list += std::string(",") + rng.pick(odd);
  }
  if (rng.chance(1, 20)) first = static_cast<int>(rng.below(40));
  if (rng.chance(1, 20)) main = static_cast<int>(rng.below(40));
  // Mostly fp32, often fp64, now and then a value that is no dtype.
  const char* dtype = rng.chance(1, 40) ? "2" : rng.chance(1, 4) ? "1" : "0";
  std::string out = "dtype=" + std::string(dtype) + "\nprims=" + std::to_string(first) + "," +
                    std::to_string(main) + "," + std::to_string(last) + "\ntypes=" + types + "\nexec=" + exec +
                    "\nsizes=" + sizes + "\ns0=" + s[0] + "\n";
  if (weft::tensor::is_gemm_like(static_cast<prim_t>(main)) || weft::tensor::is_binary_elementwise(static_cast<prim_t>(main)) ||
      rng.chance(1, 10))
    out += "s1=" + s[1] + "\n";
  out += "so=" + s[2] + "\n";
  int mode = static_cast<int>(rng.below(4));
  if (any_ragged) mode = 2 + static_cast<int>(rng.below(2));
  if (mode >= 2 && any_ragged) out += "ragged=" + ragged + "\n";
  out += "mode=" + std::to_string(mode) + "\noptimize=" + std::to_string(rng.below(2)) + "\ngeneric=" +
         std::to_string(rng.chance(1, 4) ? 1 : 0) + "\nthreads=" + std::to_string(1 + rng.below(4)) + "\n";
  if (mode == 3) {
    // A loop_string over the loop dims (those not prim), sometimes blocked, sometimes parallel.
    int loops = 0;
    for (const GenDim& d : dims) loops += d.exec != 1;
    if (loops == 0) loops = 1;
    std::vector<int> letters;
    std::string blocks;
    for (int x = 0; x < loops; ++x) {
      const int occ = rng.chance(1, 4) ? 2 : 1;
      for (int j = 0; j < occ; ++j) letters.push_back(x);
      blocks += (x ? ";" : "") + std::string(occ == 2 ? std::to_string(rng.range(1, 3)) : "");
    }
    shuffle(letters, rng);
    std::string text;
    for (int x : letters) text += static_cast<char>((rng.chance(1, 3) ? 'A' : 'a') + x);
    if (rng.chance(1, 5)) text += rng.chance(1, 2) ? "@schedule(dynamic)" : "@schedule(static,1)";
    out += "blocks=" + blocks + "\nloops=" + text;
  }
  return out;
}

}  // namespace

namespace weft::fuzz {
const Target& target() {
  static const Target t{"tensor_operation", &::generate};
  return t;
}
}  // namespace weft::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  run_case(decode(std::string_view(reinterpret_cast<const char*>(data), size)), weft::fuzz::hash_bytes(data, size));
  return 0;
}
