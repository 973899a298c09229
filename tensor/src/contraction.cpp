#include "weft/tensor/contraction.hpp"

#include <algorithm>
#include <sstream>
#include <tuple>
#include <utility>

#include "prim_dims.hpp"
#include "weft/jit/checked_arithmetic.hpp"

namespace weft::tensor {

namespace {

bool valid_prim(prim_t p) { return is_unary(p) || is_binary_elementwise(p) || is_gemm_like(p) || p == prim_t::none; }
bool valid_dim_type(dim_t d) {
  return d == dim_t::c || d == dim_t::m || d == dim_t::n || d == dim_t::k;
}
bool valid_exec(exec_t e) { return e == exec_t::seq || e == exec_t::prim || e == exec_t::shared; }

[[noreturn]] void fail(error_t code, const std::string& message) { throw ConfigError(code, message); }

void check_lengths(std::size_t expected, std::size_t got, const char* what) {
  if (got != expected)
    fail(error_t::err_wrong_dimension, std::string(what) + " has " + std::to_string(got) +
                                           " entries but dim_types has " +
                                           std::to_string(expected));
}

void check_primitives(const Contraction& op) {
  const std::pair<prim_t, const char*> slots[] = {
      {op.first_touch, "prim_first_touch"}, {op.main, "prim_main"}, {op.last_touch, "prim_last_touch"}};
  for (auto [p, slot] : slots)
    if (!valid_prim(p))
      fail(error_t::err_wrong_primitive, std::string(slot) + " is " + to_string(p) +
                                             ", which is no primitive weft knows");
  if (op.first_touch != prim_t::none && !is_unary(op.first_touch))
    fail(error_t::err_wrong_first_touch_primitive,
         "prim_first_touch is " + to_string(op.first_touch) +
             ": a touch acts on the output alone, so it must be a unary primitive (zero, copy, "
             "relu, square, ...)");
  if (op.last_touch != prim_t::none && !is_unary(op.last_touch))
    fail(error_t::err_wrong_last_touch_primitive,
         "prim_last_touch is " + to_string(op.last_touch) +
             ": a touch acts on the output alone, so it must be a unary primitive (zero, copy, "
             "relu, square, ...)");
  if (op.main == prim_t::none)
    fail(error_t::err_wrong_main_primitive,
         "prim_main is none: give gemm, brgemm, a unary or a binary element-wise primitive");
}

// The unary TPPs compute transcendental functions in f32 only (polynomial approximations tuned
// to float accuracy); in fp64 they would need their own approximations, which do not exist.
// Refused here, before anything is built, rather than computed to float accuracy.
bool is_transcendental(prim_t p) {
  return p == prim_t::sigmoid || p == prim_t::exp || p == prim_t::tanh || p == prim_t::gelu;
}

// After check_primitives: the primitives are known ones.
void check_primitives_for_dtype(const Contraction& op) {
  if (op.dtype != dtype_t::fp64) return;
  const std::tuple<prim_t, const char*, error_t> slots[] = {
      {op.first_touch, "prim_first_touch", error_t::err_wrong_first_touch_primitive},
      {op.main, "prim_main", error_t::err_wrong_main_primitive},
      {op.last_touch, "prim_last_touch", error_t::err_wrong_last_touch_primitive}};
  for (auto [p, slot, code] : slots)
    if (is_transcendental(p))
      fail(code, std::string(slot) + " is " + to_string(p) +
                     ", which has no fp64 primitive: weft computes sigmoid, exp, tanh and gelu in "
                     "fp32 only");
}

void check_dimension(const Contraction& op, std::size_t i) {
  const Dim& d = op.dims[i];
  if (!valid_dim_type(d.type))
    fail(error_t::err_wrong_dimension, "dimension " + std::to_string(i) + " has type " +
                                           to_string(d.type) + "; expected c, m, n or k");
  if (!valid_exec(d.exec))
    fail(error_t::err_execution_type_not_supported,
         name_dimension(op, i) + " has execution type " + to_string(d.exec) +
             "; expected seq, shared or prim");
  if (d.size <= 0)
    fail(error_t::err_wrong_dimension, "dimension " + std::to_string(i) + " (" + to_string(d.type) +
                                           ") has size " + std::to_string(d.size) +
                                           "; sizes must be positive");
  if (d.size > (std::int64_t{1} << 31) - 1)
    fail(error_t::err_wrong_dimension,
         name_dimension(op, i) + " is larger than 2^31 - 1, the loop bound limit");
  const std::pair<std::int64_t, const char*> strides[] = {
      {d.stride_in0, "in0"}, {d.stride_in1, "in1"}, {d.stride_out, "out"}};
  for (auto [s, tensor] : strides)
    if (s < 0)
      fail(error_t::err_invalid_strides, name_dimension(op, i) + " has stride " +
                                             std::to_string(s) + " in " + tensor +
                                             "; strides must be >= 0");
}

// Every address of an element is the base plus sum(index x stride) x element bytes, which the
// lowering and the optimizer passes compute in int64 (loop steps, batch-reduce strides, block
// offsets; a split or fused dim's products are terms of the same sum): the sum over the whole
// size of every dim, one step past each end, must fit. After check_dimension: sizes and strides
// are positive or zero.
void check_byte_spans(const Contraction& op) {
  const auto bytes = static_cast<std::int64_t>(element_size(op.dtype));
  const std::pair<std::int64_t Dim::*, const char*> tensors[] = {
      {&Dim::stride_in0, "in0"}, {&Dim::stride_in1, "in1"}, {&Dim::stride_out, "out"}};
  for (const auto& named : tensors) {
    const auto stride = named.first;  // not a structured binding: lambdas capture it (clang 14)
    const char* const tensor = named.second;
    std::int64_t span = 0;
    for (std::size_t i = 0; i < op.dims.size(); ++i) {
      const Dim& d = op.dims[i];
      const auto what = [&] {
        return "the byte span of " + std::string(tensor) + " (size x stride x " + std::to_string(bytes) +
               " bytes, summed over the dimensions) at " + name_dimension(op, i) + " with stride " +
               std::to_string(d.*stride);
      };
      try {
        span = checked_add(span, checked_mul(checked_mul(d.size, d.*stride, what), bytes, what), what);
      } catch (const weft::Error& e) {
        fail(error_t::err_invalid_strides, e.what());
      }
    }
  }
}

void check_types_for_main(const Contraction& op) {
  for (std::size_t i = 0; i < op.dims.size(); ++i) {
    const Dim& d = op.dims[i];
    if (!is_gemm_like(op.main)) {
      if (d.type != dim_t::c)
        fail(error_t::err_wrong_dimension,
             name_dimension(op, i) + " is of type " + to_string(d.type) + ", but " +
                 to_string(op.main) + " is element-wise and takes only c dimensions");
      continue;
    }
    auto must_be_zero = [&](std::int64_t s, const char* tensor) {
      if (s != 0)
        fail(error_t::err_invalid_strides,
             name_dimension(op, i) + " has stride " + std::to_string(s) + " in " + tensor + ", but " +
                 to_string(d.type) + " dimensions do not index " + tensor + " (stride must be 0)");
    };
    if (d.type == dim_t::m) must_be_zero(d.stride_in1, "in1");
    if (d.type == dim_t::n) must_be_zero(d.stride_in0, "in0");
    if (d.type == dim_t::k) must_be_zero(d.stride_out, "out");
  }
}

// A remainder needs its partner (the inner block) among the prim dims of a GEMM, where tail
// kernels can run it; the batch-reduce dim of a brgemm cannot be one. Returns the partners, per
// dimension (kNoDim for dimensions without a remainder).
std::vector<std::size_t> check_ragged(const Contraction& op, bool check_primitives) {
  std::vector<std::size_t> partner(op.dims.size(), detail::kNoDim);
  for (std::size_t i = 0; i < op.dims.size(); ++i) {
    const Dim& d = op.dims[i];
    if (d.last_block == 0) continue;
    if (!is_gemm_like(op.main))
      fail(error_t::err_invalid_primitive_configuration,
           name_dimension(op, i) + " has a last block of " + std::to_string(d.last_block) +
               ", but only gemm/brgemm operations take remainders");
    if (d.exec == exec_t::prim)
      fail(error_t::err_invalid_primitive_configuration,
           name_dimension(op, i) + " has a last block but is prim; a remainder belongs to a loop");
    const std::size_t p = detail::ragged_partner(op, i);
    if (p == detail::kNoDim)
      fail(error_t::err_invalid_primitive_configuration,
           name_dimension(op, i) + " has a last block of " + std::to_string(d.last_block) +
               " but no single dimension of its type with strides = its strides / the block size "
               "(the inner block it was split from)");
    if (d.last_block < 0 || d.last_block >= op.dims[p].size)
      fail(error_t::err_wrong_dimension,
           name_dimension(op, i) + " has a last block of " + std::to_string(d.last_block) +
               "; it must lie in 1 .. " + std::to_string(op.dims[p].size - 1) + " (the size of " +
               name_dimension(op, p) + " minus one)");
    if (check_primitives && op.dims[p].exec != exec_t::prim)
      fail(error_t::err_invalid_primitive_configuration,
           name_dimension(op, i) + " has a last block, but its inner block " + name_dimension(op, p) +
               " is not prim: only primitives have tail kernels");
    partner[i] = p;
  }
  return partner;
}

void check_execution(const Contraction& op) {
  // Shared dims must form one run among the loops (prim dims do not take part in the loop order).
  const auto loops = detail::loop_dims(op);
  std::size_t first = detail::kNoDim, last = detail::kNoDim;
  for (std::size_t j = 0; j < loops.size(); ++j) {
    const std::size_t i = loops[j];
    if (op.dims[i].exec != exec_t::shared) continue;
    if (op.dims[i].type == dim_t::k && is_gemm_like(op.main))
      fail(error_t::err_k_dimension_must_not_be_shared,
           name_dimension(op, i) + " is shared, but k dimensions accumulate into the same output "
                                   "block: threads would race; make it seq");
    if (first == detail::kNoDim) first = j;
    if (last != detail::kNoDim && last + 1 != j)
      fail(error_t::err_invalid_execution_order,
           name_dimension(op, i) + " is shared but " + name_dimension(op, loops[last + 1]) +
               " between it and " + name_dimension(op, loops[last]) +
               " is not: the shared dimensions must be adjacent in the loop order");
    last = j;
  }
}

}  // namespace

Contraction Contraction::from_config(dtype_t dtype, prim_t prim_first_touch, prim_t prim_main,
                                     prim_t prim_last_touch, std::span<const dim_t> dim_types,
                                     std::span<const exec_t> exec_types,
                                     std::span<const std::int64_t> dim_sizes,
                                     std::span<const std::int64_t> strides_in0,
                                     std::span<const std::int64_t> strides_in1,
                                     std::span<const std::int64_t> strides_out) {
  const std::size_t n = dim_types.size();
  check_lengths(n, exec_types.size(), "exec_types");
  check_lengths(n, dim_sizes.size(), "dim_sizes");
  check_lengths(n, strides_in0.size(), "strides_in0");
  if (!strides_in1.empty()) check_lengths(n, strides_in1.size(), "strides_in1");
  check_lengths(n, strides_out.size(), "strides_out");
  Contraction op;
  op.dtype = dtype;
  op.first_touch = prim_first_touch;
  op.main = prim_main;
  op.last_touch = prim_last_touch;
  op.dims.resize(n);
  for (std::size_t i = 0; i < n; ++i)
    op.dims[i] = Dim{dim_types[i], exec_types[i], dim_sizes[i], strides_in0[i],
                     strides_in1.empty() ? 0 : strides_in1[i], strides_out[i]};
  return op;
}

double Contraction::flops() const {
  double points = 1.0;
  for (const Dim& d : dims) points *= static_cast<double>(d.size);
  return is_gemm_like(main) ? 2.0 * points : points;
}

std::string Contraction::describe() const {
  std::ostringstream s;
  s << to_string(dtype) << " first=" << to_string(first_touch) << " main=" << to_string(main)
    << " last=" << to_string(last_touch) << (pack_in0 ? " pack=in0" : "") << '\n';
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const Dim& d = dims[i];
    s << "  " << i << ": " << to_string(d.type) << ' ' << to_string(d.exec) << " size " << d.size
      << " strides (" << d.stride_in0 << ", " << d.stride_in1 << ", " << d.stride_out << ")";
    if (d.last_block != 0) s << " last block " << d.last_block;
    s << '\n';
  }
  return s.str();
}

std::string name_dimension(const Contraction& op, std::size_t index) {
  const Dim& d = op.dims[index];
  return "dimension " + std::to_string(index) + " (" + to_string(d.type) + ", size " +
         std::to_string(d.size) + ")";
}

namespace {

// Everything but the prim dims; returns the partners of the remainders. `prims_chosen`: whether
// the prim dims are there to check (false: the optimizer will choose them).
std::vector<std::size_t> check_all_but_prim_dims(const Contraction& op, bool prims_chosen) {
  if (element_size(op.dtype) == 0)
    fail(error_t::err_wrong_dtype,
         "dtype is " + to_string(op.dtype) + ", which is no data type weft knows (fp32 = 0, fp64 = 1)");
  check_primitives(op);
  check_primitives_for_dtype(op);
  if (op.dims.empty()) fail(error_t::err_wrong_dimension, "the operation has no dimensions");
  for (std::size_t i = 0; i < op.dims.size(); ++i) check_dimension(op, i);
  check_byte_spans(op);
  check_types_for_main(op);
  check_execution(op);
  return check_ragged(op, prims_chosen);
}

detail::OperandRoles check_prim_dims(const Contraction& op, const ValidationOptions& options,
                                     std::vector<std::size_t> partner) {
  detail::OperandRoles roles;
  roles.partner = std::move(partner);
  if (!is_gemm_like(op.main)) {
    roles.block = detail::find_elementwise_block(op);
    return roles;
  }
  const detail::GemmRoles& g = roles.gemm = detail::find_gemm_roles(op);
  if (g.br != detail::kNoDim &&
      std::find(roles.partner.begin(), roles.partner.end(), g.br) != roles.partner.end())
    fail(error_t::err_invalid_primitive_configuration,
         "the batch-reduce " + name_dimension(op, g.br) +
             " is the inner block of a remainder; a batch has the same blocks throughout");
  if (!detail::fits_brgemm(op, g) && !options.allow_generic_primitives) {
    const Dim& m = op.dims[g.m];
    if (m.stride_in0 != 1 || m.stride_out != 1)
      fail(error_t::err_invalid_strides,
           "prim " + name_dimension(op, g.m) + " has strides " + std::to_string(m.stride_in0) +
               " in in0 and " + std::to_string(m.stride_out) +
               " in out; the BRGEMM primitive needs 1 in both (column-major A and C)");
    fail(error_t::err_invalid_strides,
         "prim " + name_dimension(op, g.k) + " has stride " + std::to_string(op.dims[g.k].stride_in1) +
             " in in1; the BRGEMM primitive needs 1 (column-major B)");
  }
  return roles;
}

}  // namespace

void validate(const Contraction& op, const ValidationOptions& options) {
  std::vector<std::size_t> partner = check_all_but_prim_dims(op, options.check_primitives);
  if (options.check_primitives) (void)check_prim_dims(op, options, std::move(partner));
}

detail::OperandRoles detail::validated_roles(const Contraction& op, const ValidationOptions& options) {
  return check_prim_dims(op, options, check_all_but_prim_dims(op, true));
}

}  // namespace weft::tensor
