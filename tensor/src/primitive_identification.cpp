// Primitive identification: which dimensions the primitive covers. The BRGEMM TPP computes a
// column-major C(m x n) += sum_i A_i(m x k) * B_i(k x n): its M must be unit-stride in in0 and out,
// its K unit-stride in in1; N is free (its strides are ldb, ldc) and a second k dimension becomes the
// batch-reduce dim. Element-wise primitives cover the dim unit-stride in out plus one more.
#include <algorithm>
#include <limits>

#include "prim_dims.hpp"
#include "weft/tensor/passes.hpp"

namespace weft::tensor {

namespace {

constexpr std::size_t kNone = detail::kNoDim;

bool unit(std::int64_t stride) { return stride == 1; }

// The dim of `type` minimizing key(d) among those where ok(d); kNone if none.
template <class Ok, class Key>
std::size_t pick(const Contraction& op, dim_t type, Ok ok, Key key) {
  std::size_t best = kNone;
  for (std::size_t i = 0; i < op.dims.size(); ++i) {
    const Dim& d = op.dims[i];
    if (d.type != type || d.exec == exec_t::prim || d.last_block != 0 || !ok(d)) continue;
    if (best == kNone || key(d) < key(op.dims[best])) best = i;
  }
  return best;
}

// A GEMM without a dim of some type (an outer product has no k) gets one of size 1.
std::size_t synthesize(Contraction& op, dim_t type) {
  op.dims.push_back(Dim{type, exec_t::seq, 1, 0, 0, 0});
  return op.dims.size() - 1;
}

bool has_type(const Contraction& op, dim_t type) {
  return std::any_of(op.dims.begin(), op.dims.end(), [&](const Dim& d) { return d.type == type; });
}

void identify_gemm(Contraction& op, const PrimitiveOptions& options) {
  for (dim_t t : {dim_t::m, dim_t::n, dim_t::k})
    if (!has_type(op, t)) synthesize(op, t);
  const auto any = [](const Dim&) { return true; };
  // Among unit-stride candidates prefer the largest: it makes the longest vectors.
  std::size_t m = pick(op, dim_t::m, [](const Dim& d) { return unit(d.stride_in0) && unit(d.stride_out); },
                       [](const Dim& d) { return -d.size; });
  if (m == kNone) m = pick(op, dim_t::m, [](const Dim& d) { return d.size == 1; }, [](const Dim&) { return 0; });
  if (m == kNone) {
    if (!options.allow_generic_primitives)
      throw ConfigError(error_t::err_invalid_strides,
                        "no m dimension has stride 1 in both in0 and out, as the BRGEMM primitive "
                        "needs (column-major A and C)");
    m = pick(op, dim_t::m, any, [](const Dim& d) { return d.stride_in0 + d.stride_out; });
  }
  std::size_t k = pick(op, dim_t::k, [](const Dim& d) { return unit(d.stride_in1); },
                       [](const Dim& d) { return -d.size; });
  if (k == kNone) k = pick(op, dim_t::k, [](const Dim& d) { return d.size == 1; }, [](const Dim&) { return 0; });
  if (k == kNone) {
    if (!options.allow_generic_primitives)
      throw ConfigError(error_t::err_invalid_strides,
                        "no k dimension has stride 1 in in1, as the BRGEMM primitive needs "
                        "(column-major B)");
    k = pick(op, dim_t::k, any, [](const Dim& d) { return d.stride_in1; });
  }
  const std::size_t n = pick(op, dim_t::n, any, [](const Dim& d) { return d.stride_out; });
  op.dims[m].exec = op.dims[n].exec = op.dims[k].exec = exec_t::prim;
  op.main = prim_t::gemm;
  if (!options.use_brgemm) return;
  // The innermost remaining k dim (of size > 1) is reduced inside the BRGEMM's batch.
  for (std::size_t i = op.dims.size(); i-- > 0;) {
    Dim& d = op.dims[i];
    if (d.type == dim_t::k && d.exec != exec_t::prim && d.size > 1 && d.last_block == 0 &&
        !detail::is_ragged_partner(op, i) && batch_span_bytes(d, op.dtype) <= options.max_batch_span_bytes) {
      d.exec = exec_t::prim;
      op.main = prim_t::brgemm;
      return;
    }
  }
}

void identify_elementwise(Contraction& op, const PrimitiveOptions& options) {
  const auto any = [](const Dim&) { return true; };
  std::size_t rows = pick(op, dim_t::c, [](const Dim& d) { return unit(d.stride_out) && d.size > 1; },
                          [](const Dim& d) { return d.stride_in0; });
  if (rows == kNone) {
    if (!options.allow_generic_primitives &&
        std::any_of(op.dims.begin(), op.dims.end(), [](const Dim& d) { return d.size > 1; }))
      throw ConfigError(error_t::err_invalid_strides,
                        "no dimension has stride 1 in out, as the " + to_string(op.main) +
                            " primitive needs");
    rows = pick(op, dim_t::c, any, [](const Dim& d) { return d.stride_out; });
  }
  op.dims[rows].exec = exec_t::prim;
  const Dim r = op.dims[rows];
  // A unary op whose input is contiguous along another dim transposes the two (the unary TPPs'
  // transpose forms); zero reads no input.
  std::size_t cols = kNone;
  if (is_unary(op.main) && op.main != prim_t::zero && !unit(r.stride_in0))
    cols = pick(op, dim_t::c, [](const Dim& d) { return unit(d.stride_in0) && d.size > 1; },
                [](const Dim& d) { return d.stride_out; });
  if (cols == kNone) {
    // The next dim by output stride that keeps every leading dimension >= the rows.
    const bool binary = is_binary_elementwise(op.main);
    cols = pick(
        op, dim_t::c,
        [&](const Dim& d) {
          return d.stride_out >= r.size && (d.stride_in0 >= r.size || d.stride_in0 == 0) &&
                 (!binary || d.stride_in1 >= r.size || d.stride_in1 == 0);
        },
        [](const Dim& d) { return d.stride_out; });
  }
  if (cols != kNone) op.dims[cols].exec = exec_t::prim;
}

}  // namespace

std::int64_t batch_span_bytes(const Dim& d, dtype_t dtype) {
  return d.size * std::max(d.stride_in0, d.stride_in1) * static_cast<std::int64_t>(element_size(dtype));
}

void identify_primitives(Contraction& op, const PrimitiveOptions& options) {
  for (Dim& d : op.dims)
    if (d.exec == exec_t::prim) d.exec = exec_t::seq;
  if (is_gemm_like(op.main)) {
    identify_gemm(op, options);
  } else {
    identify_elementwise(op, options);
  }
}

}  // namespace weft::tensor
