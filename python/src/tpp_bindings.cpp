// The TPPs on row-major (C-contiguous) arrays: BRGEMM, unary and binary kernels, from the library's
// kernel caches, run with the GIL released. weft's TPPs are column-major; a row-major R x C array
// is the column-major C x R matrix, so each call maps its arrays onto the transposed problem
// (python/weft/tpp.py documents the row-major meaning users see).
#include <pybind11/pybind11.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "bindings.hpp"
#include "buffers.hpp"
#include "weft/tpp/binary.hpp"
#include "weft/tpp/brgemm.hpp"
#include "weft/tpp/unary.hpp"

namespace weft::python {

namespace {

namespace py = pybind11;
using jit::DataType;

DataType compute_type(DataType in) { return in == DataType::f64 ? DataType::f64 : DataType::f32; }

void require_shape(const ArrayView& view, std::string_view name, const std::vector<std::int64_t>& expected) {
  if (view.shape != expected) {
    throw_value_error("argument '" + std::string(name) + "' has shape " + shape_text(view.shape) + ", expected " +
                      shape_text(expected));
  }
}

void require_same_dtype(const ArrayView& view, std::string_view name, const ArrayView& first, std::string_view first_name) {
  if (view.dtype != first.dtype) {
    throw_type_error("argument '" + std::string(name) + "' holds " + std::string(jit::to_string(view.dtype)) + ", but '" +
                     std::string(first_name) + "' holds " + std::string(jit::to_string(first.dtype)));
  }
}

Uint16As uint16_as(std::optional<DataType> declared) {
  return declared == DataType::bf16 ? Uint16As::bf16 : Uint16As::error;
}

// Row-major C(M, N) = beta * C + sum_i a[i](M, K) @ b[i](K, N) is, column-major, C^T = beta * C^T +
// sum_i b[i]^T a[i]^T: the library's A_i is b[i] (m = N rows, lda = N), its B_i is a[i] (k = K,
// ldb = K). In bf16 the library's A is VNNI-2, which for b means shape (K / 2, N, 2):
// b_vnni[k / 2, n, k % 2] = b[k, n] (weft.tpp.vnni2 packs it).
struct BrgemmCall {
  ArrayView a, b, c;  // held for the call
  tpp::Brgemm kernel;
  tpp::BrgemmArgs args;
};

BrgemmCall prepare_brgemm(py::handle a_obj, py::handle b_obj, py::handle c_obj, int beta, const std::string& activation,
                          py::handle dtype_obj) {
  const std::optional<DataType> declared = parse_dtype(dtype_obj);
  ArrayView a = view_array(a_obj, "a", Access::read, uint16_as(declared));
  ArrayView b = view_array(b_obj, "b", Access::read, uint16_as(declared));
  ArrayView c = view_array(c_obj, "c", Access::write, uint16_as(declared));
  require_dtype(a, "a", declared);
  require_same_dtype(b, "b", a, "a");
  if (a.shape.size() != 2 && a.shape.size() != 3) {
    throw_value_error("argument 'a' must be (count, M, K) or (M, K), got shape " + shape_text(a.shape));
  }
  const bool batched = a.shape.size() == 3;
  const std::int64_t count = batched ? a.shape[0] : 1;
  const std::int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back();
  const bool vnni = a.dtype == DataType::bf16;
  const std::size_t b_rank = a.shape.size() + (vnni ? 1 : 0);
  if (b.shape.size() != b_rank) {
    throw_value_error("argument 'b' must have " + std::to_string(b_rank) + " dimensions" +
                      (vnni ? " (bf16: VNNI-2, (count, K/2, N, 2); weft.tpp.vnni2 packs it)" : "") + ", got shape " +
                      shape_text(b.shape));
  }
  const std::int64_t n = vnni ? b.shape[b_rank - 2] : b.shape.back();
  std::vector<std::int64_t> b_expected = vnni ? std::vector<std::int64_t>{k / 2, n, 2} : std::vector<std::int64_t>{k, n};
  if (batched) b_expected.insert(b_expected.begin(), count);
  if (vnni && k % 2 != 0) throw_value_error("argument 'a': K = " + std::to_string(k) + " must be even in bf16");
  require_shape(b, "b", b_expected);
  require_shape(c, "c", {m, n});

  if (a.dtype != DataType::bf16) require_same_dtype(c, "c", a, "a");  // bf16 alone may write f32 or bf16
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) throw_value_error("M, N and K must each be below 2^31");
  tpp::BrgemmDesc desc{.m = static_cast<std::int32_t>(n), .n = static_cast<std::int32_t>(m), .k = static_cast<std::int32_t>(k),
                       .lda = n, .ldb = k, .ldc = n, .beta = beta};
  if (activation == "relu") {
    desc.activation = tpp::BrgemmActivation::relu;
  } else if (!activation.empty() && activation != "none") {
    throw_value_error("argument 'activation': '" + activation + "' is none of None, 'relu'");
  }
  desc.types = {.in = a.dtype, .out = c.dtype, .compute = compute_type(a.dtype)};
  const tpp::BrgemmArgs args{.a = b.data, .b = a.data, .c = c.data, .count = count, .stride_a = k * n, .stride_b = m * k};
  // The kernel validates the descriptor; it is generated once per descriptor, then from the cache.
  return BrgemmCall{std::move(a), std::move(b), std::move(c), tpp::Brgemm(desc), args};
}

void brgemm(py::handle a, py::handle b, py::handle c, int beta, const std::string& activation, py::handle dtype) {
  const BrgemmCall call = prepare_brgemm(a, b, c, beta, activation, dtype);
  py::gil_scoped_release release;
  call.kernel(call.args);
}

// Seconds per call of the C++ kernel alone, `calls` calls in a row: what bench/python subtracts
// from a Python call's time to find the binding's overhead.
double brgemm_kernel_seconds(py::handle a, py::handle b, py::handle c, int beta, std::int64_t calls) {
  if (calls < 1) throw_value_error("argument 'calls' must be >= 1");
  const BrgemmCall call = prepare_brgemm(a, b, c, beta, "none", py::none());
  py::gil_scoped_release release;
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t i = 0; i < calls; ++i) call.kernel(call.args);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / static_cast<double>(calls);
}

tpp::UnaryOp unary_op(const std::string& name) {
  for (int i = 0; i <= static_cast<int>(tpp::UnaryOp::vnni2_unpack); ++i) {
    const auto op = static_cast<tpp::UnaryOp>(i);
    if (tpp::to_string(op) != name) continue;
    const bool offered = tpp::is_elementwise(op) || op == tpp::UnaryOp::zero || op == tpp::UnaryOp::transpose ||
                         op == tpp::UnaryOp::reduce_rows_sum || op == tpp::UnaryOp::reduce_rows_max ||
                         op == tpp::UnaryOp::reduce_cols_sum || op == tpp::UnaryOp::reduce_cols_max;
    if (offered) return op;
    break;
  }
  throw_value_error("argument 'op': '" + name + "' is not a unary op of weft.tpp.unary (weft.tpp.UNARY_OPS lists them)");
}

// The shape op's output has for x: x's for element-wise ops; row-major, a transpose swaps the two
// dimensions, reduce_cols_* (the library's columns are x's rows) keeps one value per row of x
// (x.sum(axis=-1)) and reduce_rows_* one per column (x.sum(axis=0) of x seen as rows x cols).
std::vector<std::int64_t> unary_out_shape(tpp::UnaryOp op, const ArrayView& x) {
  switch (op) {
    case tpp::UnaryOp::transpose:
      if (x.shape.size() != 2) throw_value_error("argument 'x' of a transpose must be 2-D, got shape " + shape_text(x.shape));
      return {x.shape[1], x.shape[0]};
    case tpp::UnaryOp::reduce_rows_sum:
    case tpp::UnaryOp::reduce_rows_max:
      return {x.cols()};
    case tpp::UnaryOp::reduce_cols_sum:
    case tpp::UnaryOp::reduce_cols_max:
      return x.shape.empty() ? std::vector<std::int64_t>{1} : std::vector<std::int64_t>(x.shape.begin(), x.shape.end() - 1);
    default:
      return x.shape;
  }
}

void unary(const std::string& op_name, py::handle x_obj, py::handle out_obj, float alpha, py::handle dtype_obj) {
  const tpp::UnaryOp op = unary_op(op_name);
  const std::optional<DataType> declared = parse_dtype(dtype_obj);
  const ArrayView x = view_array(x_obj, "x", Access::read, uint16_as(declared));
  const ArrayView out = view_array(out_obj, "out", Access::write, uint16_as(declared));
  require_dtype(x, "x", declared);
  require_shape(out, "out", unary_out_shape(op, x));
  if (x.elements() == 0) {
    // A reduction over an empty axis: sums are zero (NumPy's answer), a maximum has none.
    if (out.elements() == 0) return;
    if (op == tpp::UnaryOp::reduce_rows_max || op == tpp::UnaryOp::reduce_cols_max) {
      throw_value_error("argument 'x' has shape " + shape_text(x.shape) + ": '" + op_name +
                        "' over an empty axis has no maximum");
    }
    std::memset(out.data, 0, out.bytes());  // +0 in f32, f64 and bf16
    return;
  }
  tpp::UnaryDesc desc{.op = op, .m = x.cols(), .n = x.rows(), .ld_in = x.cols(),
                      .ld_out = op == tpp::UnaryOp::transpose ? x.rows() : x.cols(), .alpha = alpha};
  desc.types = {.in = x.dtype, .out = out.dtype, .compute = compute_type(x.dtype)};
  const tpp::Unary kernel(desc);
  // An element-wise op may write over its input in place; any other overlap (out=x of a transpose
  // or a reduction) is computed into scratch and copied.
  const bool scratch = overlap(x, out) && !(tpp::is_elementwise(op) && x.data == out.data && x.dtype == out.dtype);
  std::vector<std::byte> copy(scratch ? out.bytes() : 0);
  const tpp::UnaryArgs args{.in = x.data, .out = scratch ? copy.data() : out.data};
  py::gil_scoped_release release;
  kernel(args);
  if (scratch) std::memcpy(out.data, copy.data(), copy.size());
}

tpp::BinaryOp binary_op(const std::string& name) {
  for (int i = 0; i <= static_cast<int>(tpp::BinaryOp::max); ++i) {
    const auto op = static_cast<tpp::BinaryOp>(i);
    if (tpp::to_string(op) == name) return op;
  }
  throw_value_error("argument 'op': '" + name + "' is none of add, sub, mul, div, min, max");
}

// Row-major names: "row" is one row of `cols` values repeated down the rows (the library's column
// broadcast, M x 1 with M = cols), "col" one column of `rows` values (the library's row broadcast).
tpp::Broadcast broadcast_of(const std::string& kind, std::string_view name, const ArrayView& input,
                            const ArrayView& out) {
  const auto require_elements = [&](std::int64_t expected) {
    if (input.elements() != expected) {
      throw_value_error("argument '" + std::string(name) + "' (broadcast '" + kind + "') has shape " +
                        shape_text(input.shape) + ": " + std::to_string(expected) + " elements expected for output shape " +
                        shape_text(out.shape));
    }
  };
  if (kind == "none") {
    require_shape(input, name, out.shape);
    return tpp::Broadcast::none;
  }
  if (kind == "row") {
    require_elements(out.cols());
    return tpp::Broadcast::col;
  }
  if (kind == "col") {
    require_elements(out.rows());
    return tpp::Broadcast::row;
  }
  if (kind == "scalar") {
    require_elements(1);
    return tpp::Broadcast::scalar;
  }
  throw_value_error("argument 'broadcast': '" + kind + "' is none of 'none', 'row', 'col', 'scalar'");
}

void binary(const std::string& op_name, py::handle a_obj, py::handle b_obj, py::handle out_obj,
            const std::string& broadcast_a, const std::string& broadcast_b, py::handle dtype_obj) {
  const tpp::BinaryOp op = binary_op(op_name);
  const std::optional<DataType> declared = parse_dtype(dtype_obj);
  const ArrayView a = view_array(a_obj, "a", Access::read, uint16_as(declared));
  const ArrayView b = view_array(b_obj, "b", Access::read, uint16_as(declared));
  const ArrayView out = view_array(out_obj, "out", Access::write, uint16_as(declared));
  require_dtype(a, "a", declared);
  require_same_dtype(b, "b", a, "a");
  tpp::BinaryDesc desc{.op = op, .m = out.cols(), .n = out.rows(), .ld_in0 = out.cols(), .ld_in1 = out.cols(),
                       .ld_out = out.cols(), .bcast0 = broadcast_of(broadcast_a, "a", a, out),
                       .bcast1 = broadcast_of(broadcast_b, "b", b, out)};
  if (out.elements() == 0) return;
  desc.types = {.in = a.dtype, .out = out.dtype, .compute = compute_type(a.dtype)};
  const tpp::Binary kernel(desc);
  // out may be an unbroadcast input itself (in place, element by element); any other overlap (a
  // broadcast input inside out, a shifted view) is computed into scratch and copied.
  const auto in_place_safe = [&](const ArrayView& in, tpp::Broadcast broadcast) {
    return !overlap(in, out) || (broadcast == tpp::Broadcast::none && in.data == out.data && in.dtype == out.dtype);
  };
  const bool scratch = !in_place_safe(a, desc.bcast0) || !in_place_safe(b, desc.bcast1);
  std::vector<std::byte> copy(scratch ? out.bytes() : 0);
  const tpp::BinaryArgs args{.in0 = a.data, .in1 = b.data, .out = scratch ? copy.data() : out.data};
  py::gil_scoped_release release;
  kernel(args);
  if (scratch) std::memcpy(out.data, copy.data(), copy.size());
}

}  // namespace

void bind_tpp(py::module_& m) {
  m.def("brgemm", &brgemm, py::arg("a"), py::arg("b"), py::arg("c"), py::arg("beta"), py::arg("activation"),
        py::arg("dtype"));
  m.def("brgemm_kernel_seconds", &brgemm_kernel_seconds, py::arg("a"), py::arg("b"), py::arg("c"), py::arg("beta"),
        py::arg("calls"));
  m.def("unary", &unary, py::arg("op"), py::arg("x"), py::arg("out"), py::arg("alpha"), py::arg("dtype"));
  m.def("binary", &binary, py::arg("op"), py::arg("a"), py::arg("b"), py::arg("out"), py::arg("broadcast_a"),
        py::arg("broadcast_b"), py::arg("dtype"));
}

}  // namespace weft::python
