// The one rule of min, max, ReLU and the max reductions (docs/tpp_eltwise.md, "NaN and signed
// zeros"): IEEE 754-2019 maximum / minimum. A NaN operand gives a quiet NaN, whichever operand it
// is; -0 orders below +0 in every operand order; relu(x) = x for x > 0 or NaN, else +0. Checked on
// every path of the TPP layer: the generated kernels on every ISA (one instance per ISA, skipped by
// name where the host cannot run it), the reference (Isa::reference), in f32, bf16 and f64, with
// the special values in every lane position (full vectors, tails, broadcast registers, the
// streaming sweep) and the fused ReLU epilogue of BRGEMM. The expected values are computed here
// from the rule, not by the library's reference.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "weft/jit/bfloat16.hpp"
#include "weft/jit/cpu.hpp"
#include "weft/jit/data_type.hpp"
#include "weft/tpp/binary.hpp"
#include "weft/tpp/brgemm.hpp"
#include "weft/tpp/unary.hpp"

namespace {

using namespace weft::tpp;
using weft::jit::DataType;
using weft::jit::Isa;

// A value of the test: a number, or a NaN of one kind (quiet, negative quiet with a payload,
// signaling), so that every type can encode it.
enum class Kind { number, quiet_nan, negative_nan, signaling_nan };
struct Value {
  Kind kind = Kind::number;
  double number = 0;
};
constexpr double kInf = HUGE_VAL;
const Value kQuietNan{Kind::quiet_nan}, kNegativeNan{Kind::negative_nan}, kSignalingNan{Kind::signaling_nan};
Value num(double x) { return {Kind::number, x}; }

// NaN, +-0, +-inf and a few numbers: every one of them is exact in bf16, f32 and f64.
const std::vector<Value> kSpecials = {kQuietNan, kNegativeNan, kSignalingNan, num(0.0),  num(-0.0), num(kInf),
                                      num(-kInf), num(1.0),    num(-1.0),     num(2.5),  num(-2.5)};

bool is_nan(const Value& v) { return v.kind != Kind::number; }

std::uint64_t bits_of(DataType type, const Value& v) {
  switch (type) {
    case DataType::bf16:
      switch (v.kind) {
        case Kind::quiet_nan: return 0x7fc0;
        case Kind::negative_nan: return 0xffc1;
        case Kind::signaling_nan: return 0x7f81;
        case Kind::number: return weft::jit::to_bfloat16(static_cast<float>(v.number)).bits;
      }
      break;
    case DataType::f32:
      switch (v.kind) {
        case Kind::quiet_nan: return 0x7fc00000u;
        case Kind::negative_nan: return 0xffc00001u;
        case Kind::signaling_nan: return 0x7fa00000u;
        case Kind::number: return std::bit_cast<std::uint32_t>(static_cast<float>(v.number));
      }
      break;
    case DataType::f64:
      switch (v.kind) {
        case Kind::quiet_nan: return 0x7ff8000000000000u;
        case Kind::negative_nan: return 0xfff8000000000001u;
        case Kind::signaling_nan: return 0x7ff4000000000000u;
        case Kind::number: return std::bit_cast<std::uint64_t>(v.number);
      }
      break;
  }
  return 0;
}

// The rule, on the test's values.
Value maximum(const Value& a, const Value& b) {
  if (is_nan(a) || is_nan(b)) return kQuietNan;
  if (a.number == b.number) return std::signbit(a.number) ? b : a;
  return a.number > b.number ? a : b;
}
Value minimum(const Value& a, const Value& b) {
  if (is_nan(a) || is_nan(b)) return kQuietNan;
  if (a.number == b.number) return std::signbit(a.number) ? a : b;
  return a.number < b.number ? a : b;
}
Value relu(const Value& x) { return is_nan(x) || x.number > 0 ? x : num(0.0); }

// A typed buffer of raw elements.
class Buffer {
 public:
  Buffer(DataType type, std::size_t count) : type_(type), bytes_(count * weft::jit::size_of(type)) {}
  void* data() { return bytes_.data(); }
  void set(std::size_t i, const Value& v) { set_bits(i, bits_of(type_, v)); }
  void set_bits(std::size_t i, std::uint64_t bits) {
    std::memcpy(bytes_.data() + i * weft::jit::size_of(type_), &bits, weft::jit::size_of(type_));
  }
  std::uint64_t bits(std::size_t i) const {
    std::uint64_t b = 0;
    std::memcpy(&b, bytes_.data() + i * weft::jit::size_of(type_), weft::jit::size_of(type_));
    return b;
  }

 private:
  DataType type_;
  std::vector<std::uint8_t> bytes_;
};

// Empty when `got` (bits of `type`) is what the rule wants, else why not. A NaN result may be any
// quiet NaN; a number must have the wanted bits (the sign of a zero included).
std::string mismatch(DataType type, const Value& want, std::uint64_t got) {
  const int bits = static_cast<int>(8 * weft::jit::size_of(type));
  const int mantissa = type == DataType::bf16 ? 7 : type == DataType::f32 ? 23 : 52;
  const std::uint64_t exponent = ((std::uint64_t{1} << (bits - 1 - mantissa)) - 1) << mantissa;
  const bool nan = (got & exponent) == exponent && (got & ((std::uint64_t{1} << mantissa) - 1)) != 0;
  const bool quiet = ((got >> (mantissa - 1)) & 1) != 0;
  std::ostringstream hex;
  hex << "0x" << std::hex << got;
  const std::string seen = hex.str();
  if (is_nan(want)) {
    if (!nan) return "want a NaN, got " + seen;
    if (!quiet) return "want a quiet NaN, got the signaling " + seen;
    return {};
  }
  if (got != bits_of(type, want)) return "want " + std::to_string(want.number) + (std::signbit(want.number) ? " (sign set)" : "") + ", got " + seen;
  return {};
}

std::string describe(const Value& v) {
  switch (v.kind) {
    case Kind::quiet_nan: return "NaN";
    case Kind::negative_nan: return "-NaN";
    case Kind::signaling_nan: return "sNaN";
    case Kind::number: return std::to_string(v.number);  // "-0.000000" for -0
  }
  return {};
}

struct Types {
  DataTypes types;
  const char* name;
};
const Types kTypes[] = {
    {{}, "f32"},
    {{.in = DataType::bf16, .out = DataType::bf16}, "bf16"},
    {{.in = DataType::f32, .out = DataType::bf16}, "f32 in, bf16 out"},
    {{.in = DataType::bf16, .out = DataType::f32}, "bf16 in, f32 out"},
    {{.in = DataType::f64, .out = DataType::f64, .compute = DataType::f64}, "f64"},
};

class NanRule : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!weft::jit::can_run(GetParam(), weft::jit::cpu_features()))
      GTEST_SKIP() << "this host cannot run " << weft::jit::to_string(GetParam()) << " code";
  }
  Isa isa() const { return GetParam(); }
};

// ---- binary min and max ----------------------------------------------------------------------------

// Every ordered pair of special values, element by element (each pair once with the NaN or zero
// first, once second), over columns with padded leading dimensions and contiguous (flat) ones.
TEST_P(NanRule, BinaryMinMaxEveryPairBothOrders) {
  const std::size_t s = kSpecials.size();
  for (const Types& t : kTypes)
    for (BinaryOp op : {BinaryOp::min, BinaryOp::max})
      for (std::int64_t pad : {0, 3}) {
        const std::int64_t m = static_cast<std::int64_t>(s * s) / 2 + 1, n = 2;
        const BinaryDesc d{.op = op, .m = m, .n = n, .ld_in0 = m + pad, .ld_in1 = m + pad, .ld_out = m + pad, .types = t.types};
        SCOPED_TRACE(to_string(d) + " (" + t.name + ")");
        const std::size_t count = static_cast<std::size_t>((m + pad) * n);
        Buffer a(t.types.in, count), b(t.types.in, count), c(t.types.out, count);
        std::vector<std::pair<std::size_t, std::size_t>> pairs(count);
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t i = 0; i < m; ++i) {
            const std::size_t at = static_cast<std::size_t>(i + j * (m + pad));
            const std::size_t p = static_cast<std::size_t>(i + j * m) % (s * s);
            pairs[at] = {p / s, p % s};
            a.set(at, kSpecials[p / s]);
            b.set(at, kSpecials[p % s]);
          }
        Binary(d, isa())(BinaryArgs{a.data(), b.data(), c.data()});
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t i = 0; i < m; ++i) {
            const std::size_t at = static_cast<std::size_t>(i + j * (m + pad));
            const Value& x = kSpecials[pairs[at].first];
            const Value& y = kSpecials[pairs[at].second];
            const Value want = op == BinaryOp::max ? maximum(x, y) : minimum(x, y);
            const std::string why = mismatch(t.types.out, want, c.bits(at));
            EXPECT_TRUE(why.empty()) << to_string(op) << "(" << describe(x) << ", " << describe(y) << "): " << why
                                     << " (row " << i << ", column " << j << ")";
          }
      }
}

// A broadcast operand (a register in the kernels) on either side: every special against every
// special as the broadcast scalar.
TEST_P(NanRule, BinaryMinMaxWithABroadcastOperand) {
  const std::int64_t m = static_cast<std::int64_t>(kSpecials.size()), n = 3;
  for (const Types& t : kTypes)
    for (BinaryOp op : {BinaryOp::min, BinaryOp::max})
      for (int scalar_side : {0, 1})
        for (const Value& s : kSpecials) {
          BinaryDesc d{.op = op, .m = m, .n = n, .ld_in0 = m, .ld_in1 = m, .ld_out = m, .types = t.types};
          (scalar_side == 0 ? d.bcast0 : d.bcast1) = Broadcast::scalar;
          SCOPED_TRACE(to_string(d) + " (" + t.name + "), scalar " + describe(s));
          Buffer full(t.types.in, static_cast<std::size_t>(m * n)), scalar(t.types.in, 1), c(t.types.out, static_cast<std::size_t>(m * n));
          scalar.set(0, s);
          for (std::int64_t e = 0; e < m * n; ++e) full.set(static_cast<std::size_t>(e), kSpecials[static_cast<std::size_t>(e % m)]);
          const BinaryArgs args = scalar_side == 0 ? BinaryArgs{scalar.data(), full.data(), c.data()}
                                                   : BinaryArgs{full.data(), scalar.data(), c.data()};
          Binary(d, isa())(args);
          for (std::int64_t e = 0; e < m * n; ++e) {
            const Value& v = kSpecials[static_cast<std::size_t>(e % m)];
            const Value& x = scalar_side == 0 ? s : v;
            const Value& y = scalar_side == 0 ? v : s;
            const Value want = op == BinaryOp::max ? maximum(x, y) : minimum(x, y);
            const std::string why = mismatch(t.types.out, want, c.bits(static_cast<std::size_t>(e)));
            EXPECT_TRUE(why.empty()) << to_string(op) << "(" << describe(x) << ", " << describe(y) << "): " << why;
          }
        }
}

// The streaming sweep (outputs of 8 MiB and more): the same rule on its fused loads.
TEST_P(NanRule, BinaryMinMaxStreaming) {
  const std::size_t s = kSpecials.size();
  const std::int64_t m = (kBinaryNontemporalBytes / 4) + 13;
  for (BinaryOp op : {BinaryOp::min, BinaryOp::max}) {
    const BinaryDesc d{.op = op, .m = m, .n = 1, .ld_in0 = m, .ld_in1 = m, .ld_out = m};
    ASSERT_TRUE(Binary(d, isa()).plan().nontemporal || isa() == Isa::reference);
    std::vector<float> a(static_cast<std::size_t>(m)), b(a.size()), c(a.size());
    auto value = [&](std::size_t e, bool second) { return kSpecials[second ? (e / s) % s : e % s]; };
    for (std::size_t e = 0; e < a.size(); ++e) {
      a[e] = std::bit_cast<float>(static_cast<std::uint32_t>(bits_of(DataType::f32, value(e, false))));
      b[e] = std::bit_cast<float>(static_cast<std::uint32_t>(bits_of(DataType::f32, value(e, true))));
    }
    Binary(d, isa())(BinaryArgs{a.data(), b.data(), c.data()});
    // Every element is checked against the rule, or found bit for bit equal to an output of the same
    // two inputs that was (the s x s pairs repeat every s^2 elements: the rule's check of every
    // element took most of the test's time under qemu).
    std::vector<std::optional<std::uint32_t>> checked(s * s);
    int failures = 0;
    for (std::size_t e = 0; e < a.size() && failures < 10; ++e) {
      const std::uint32_t got = std::bit_cast<std::uint32_t>(c[e]);
      std::optional<std::uint32_t>& pair = checked[e % (s * s)];
      if (pair == got) continue;
      const Value want = op == BinaryOp::max ? maximum(value(e, false), value(e, true)) : minimum(value(e, false), value(e, true));
      const std::string why = mismatch(DataType::f32, want, got);
      if (why.empty()) {
        pair = got;
        continue;
      }
      ++failures;
      ADD_FAILURE() << to_string(op) << "(" << describe(value(e, false)) << ", " << describe(value(e, true)) << ") at " << e << ": " << why;
    }
  }
}

// ---- max reductions ----------------------------------------------------------------------------

// The sets a reduction folds, each to be placed at every lane position by repetition with a shift.
struct Set {
  std::vector<Value> values;
};
std::vector<Set> reduction_sets() {
  std::vector<Set> sets = {
      {{num(1), kQuietNan, num(2)}},   {{kQuietNan}},           {{kNegativeNan, num(5)}},
      {{kSignalingNan, num(-1)}},      {{num(-0.0), num(0.0)}}, {{num(0.0), num(-0.0)}},
      {{num(-0.0)}},                   {{num(0.0)}},            {{num(-kInf)}},
      {{num(-kInf), num(-0.0)}},       {{num(kInf), kQuietNan}}, {{num(-1), num(-2.5)}},
      {{num(1), num(kInf)}},           {{num(-0.0), num(-1)}},   {{num(-kInf), kSignalingNan}},
  };
  return sets;
}

// A column (or row) of `length` elements: the set's values cyclically, from the one at `shift`.
std::vector<Value> lay_out(const Set& set, std::size_t length, std::size_t shift) {
  std::vector<Value> v(length);
  for (std::size_t i = 0; i < length; ++i) v[i] = set.values[(i + shift) % set.values.size()];
  return v;
}

Value fold_max(const std::vector<Value>& v) {
  Value acc = num(-kInf);
  for (const Value& x : v) acc = maximum(acc, x);
  return acc;
}

// The sets along every column (reduce_cols_max) or every row (reduce_rows_max), at every shift; and
// one NaN, +0 or -0 alone in a column of -1s (or of -0s) at each position, tails included.
TEST_P(NanRule, MaxReductions) {
  std::vector<std::vector<Value>> lines;  // what each output folds
  for (std::int64_t length : {1, 5, 37}) {
    lines.clear();
    const std::size_t len = static_cast<std::size_t>(length);
    for (const Set& set : reduction_sets())
      for (std::size_t shift = 0; shift < set.values.size(); ++shift) lines.push_back(lay_out(set, len, shift));
    for (const Value& lone : {kQuietNan, kSignalingNan, num(0.0), num(-0.0)})
      for (std::size_t at = 0; at < len; at += (len > 9 ? 7 : 1)) {
        // +0 among -0s; NaN and -0 among -1s.
        const bool plus_zero = lone.kind == Kind::number && !std::signbit(lone.number);
        std::vector<Value> line(len, plus_zero ? num(-0.0) : num(-1));
        line[at] = lone;
        lines.push_back(line);
      }
    const std::int64_t count = static_cast<std::int64_t>(lines.size());
    for (const Types& t : kTypes)
      for (UnaryOp op : {UnaryOp::reduce_cols_max, UnaryOp::reduce_rows_max})
        for (std::int64_t pad : {0, 2}) {
          // reduce_cols_max: a column per line (m = length); reduce_rows_max: a row per line.
          const bool by_cols = op == UnaryOp::reduce_cols_max;
          const std::int64_t m = by_cols ? length : count, n = by_cols ? count : length;
          const UnaryDesc d{.op = op, .m = m, .n = n, .ld_in = m + pad, .ld_out = m, .types = t.types};
          SCOPED_TRACE(to_string(d) + " (" + t.name + ")");
          Buffer a(t.types.in, static_cast<std::size_t>((m + pad) * n)), b(t.types.out, static_cast<std::size_t>(count));
          for (std::int64_t l = 0; l < count; ++l)
            for (std::int64_t e = 0; e < length; ++e) {
              const std::int64_t i = by_cols ? e : l, j = by_cols ? l : e;
              a.set(static_cast<std::size_t>(i + j * (m + pad)), lines[static_cast<std::size_t>(l)][static_cast<std::size_t>(e)]);
            }
          Unary(d, isa())(UnaryArgs{.in = a.data(), .out = b.data()});
          for (std::int64_t l = 0; l < count; ++l) {
            const std::vector<Value>& line = lines[static_cast<std::size_t>(l)];
            const std::string why = mismatch(t.types.out, fold_max(line), b.bits(static_cast<std::size_t>(l)));
            std::string seen;
            for (const Value& v : line) seen += describe(v) + " ";
            EXPECT_TRUE(why.empty()) << "max of " << seen << ": " << why;
          }
        }
  }
}

// ---- ReLU: the unary op and the BRGEMM epilogue --------------------------------------------------

TEST_P(NanRule, UnaryRelu) {
  const std::int64_t m = static_cast<std::int64_t>(kSpecials.size()), n = 3;
  for (const Types& t : kTypes) {
    const UnaryDesc d{.op = UnaryOp::relu, .m = m, .n = n, .ld_in = m, .ld_out = m, .types = t.types};
    SCOPED_TRACE(to_string(d) + " (" + t.name + ")");
    Buffer a(t.types.in, static_cast<std::size_t>(m * n)), b(t.types.out, static_cast<std::size_t>(m * n));
    for (std::int64_t e = 0; e < m * n; ++e) a.set(static_cast<std::size_t>(e), kSpecials[static_cast<std::size_t>((e + e / m) % m)]);
    Unary(d, isa())(UnaryArgs{.in = a.data(), .out = b.data()});
    for (std::int64_t e = 0; e < m * n; ++e) {
      const Value& x = kSpecials[static_cast<std::size_t>((e + e / m) % m)];
      // relu keeps a NaN's bits (a signaling one too): it moves its input or writes +0.
      if (is_nan(x) && t.types.in == t.types.out) {
        EXPECT_EQ(b.bits(static_cast<std::size_t>(e)), bits_of(t.types.out, x)) << "relu(" << describe(x) << ")";
        continue;
      }
      const std::string why = is_nan(x) ? (mismatch(t.types.out, kQuietNan, b.bits(static_cast<std::size_t>(e))).find("want a NaN") == 0 ? "not a NaN" : "")
                                         : mismatch(t.types.out, relu(x), b.bits(static_cast<std::size_t>(e)));
      EXPECT_TRUE(why.empty()) << "relu(" << describe(x) << "): " << why;
    }
  }
}

// C = relu(C) through the epilogue: an empty batch (count 0) with beta = 1 leaves C's values. m = 11
// runs the ISA's own tiles, m = 5 on AVX-512 the AVX2 code of narrow f32 / f64 kernels.
TEST_P(NanRule, BrgemmReluEpilogue) {
  const DataTypes kinds[] = {{}, {.in = DataType::bf16, .out = DataType::bf16}, {.in = DataType::bf16, .out = DataType::f32},
                             {.in = DataType::f64, .out = DataType::f64, .compute = DataType::f64}};
  for (const DataTypes& types : kinds)
    for (const int m : {static_cast<int>(kSpecials.size()), 5})
      for (int cols : {1, 3}) {
        const BrgemmDesc d{.m = m, .n = cols, .k = 2, .lda = m, .ldb = 2, .ldc = m, .beta = 1,
                           .activation = BrgemmActivation::relu, .types = types};
        SCOPED_TRACE(to_string(d));
        Buffer a(types.in, static_cast<std::size_t>(2 * m)), b(types.in, static_cast<std::size_t>(2 * cols)),
            c(types.out, static_cast<std::size_t>(m * cols));
        // Column j holds the specials from the j-th on, so that each lands in several rows.
        auto special = [&](int e) { return kSpecials[static_cast<std::size_t>((e % m + e / m) % static_cast<int>(kSpecials.size()))]; };
        for (int e = 0; e < m * cols; ++e) c.set(static_cast<std::size_t>(e), special(e));
        Brgemm(d, isa())(BrgemmArgs{.a = a.data(), .b = b.data(), .c = c.data(), .count = 0});
        for (int e = 0; e < m * cols; ++e) {
          const Value& x = special(e);
          const std::uint64_t got = c.bits(static_cast<std::size_t>(e));
          const std::string why = is_nan(x) ? (mismatch(types.out, kQuietNan, got).find("want a NaN") == 0 ? "not a NaN" : "")
                                             : mismatch(types.out, relu(x), got);
          EXPECT_TRUE(why.empty()) << "relu(" << describe(x) << "): " << why;
        }
      }
}

INSTANTIATE_TEST_SUITE_P(Isas, NanRule, ::testing::Values(Isa::reference, Isa::avx2, Isa::avx512, Isa::avx512_bf16,
                                                          Isa::neon, Isa::sve256, Isa::sve512),
                         [](const ::testing::TestParamInfo<Isa>& p) { return std::string(weft::jit::to_string(p.param)); });

}  // namespace
