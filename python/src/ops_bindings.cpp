// weft._weft's operators: prepare_gemm / prepare_conv make a PreparedOp (ops_factories.hpp), and
// its methods run it on plain arrays (converted into blocked scratch the op keeps) or on blocked
// ones, check every array first (type, shape, contiguity: errors naming the argument), and run
// with the GIL released. python/weft/ops.py caches prepared ops and offers the functions.
#include <omp.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "buffers.hpp"
#include "op_config.hpp"
#include "ops_factories.hpp"
#include "weft/ops/vnni2_pairs.hpp"

namespace weft::python {

namespace {

namespace py = pybind11;
using jit::DataType;

// Blocked scratch on 64-byte boundaries (the kernels' vector loads), kept between calls.
struct AlignedBuffer {
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> data;
  std::size_t bytes = 0;

  void* reserve(std::size_t needed) {
    if (needed > bytes) {
      data.reset(std::aligned_alloc(64, (needed + 63) / 64 * 64));
      if (!data) throw std::bad_alloc();
      bytes = needed;
    }
    return data.get();
  }
};

// A PreparedOp and the blocked copies its plain calls convert into (guarded by its run_lock).
struct BoundOp {
  std::shared_ptr<PreparedOp> op;
  mutable std::vector<AlignedBuffer> scratch;
  std::vector<std::string> config_keys;  // what config= takes for this operator
};

// The GEMM operators compute in float32, bfloat16 and float64; the convolutions in the first two.
enum class OpFamily { gemm, conv };

DataType op_dtype(py::handle dtype, OpFamily family) {
  const std::optional<DataType> parsed = parse_dtype(dtype);
  if (parsed == DataType::f64 && family == OpFamily::conv) {
    throw_type_error("argument 'dtype': weft.ops' convolutions compute in float32 and bfloat16, not float64 (the "
                     "GEMM operators take float64)");
  }
  return parsed.value_or(DataType::f32);
}

std::string dtype_words(DataType dtype) {
  if (dtype == DataType::f64) return "float64";
  return dtype == DataType::bf16 ? "bfloat16" : "float32";
}

// `array`, given as argument `name`, holding operand `o` plain (its shape) or blocked (its element
// count).
enum class Form { plain, blocked };

// A bf16 operator's blocked output may hold f32 where the operator writes one (writes_f32_output).
enum class Output { in_dtype, f32_too };

ArrayView checked_view(const PreparedOp& op, py::handle array, const std::string& name, Access access, const Operand& o,
                       Form form, Output output = Output::in_dtype) {
  ArrayView view = view_array(array, name, access, op.dtype() == DataType::bf16 ? Uint16As::bf16 : Uint16As::error);
  const bool f32_allowed = output == Output::f32_too && o.output && op.writes_f32_output();
  if (view.dtype != op.dtype() && !(f32_allowed && view.dtype == DataType::f32)) {
    throw_type_error("argument '" + name + "' holds " + std::string(jit::to_string(view.dtype)) +
                     ", but the operator computes in " + dtype_words(op.dtype()) +
                     (f32_allowed ? " (its blocked output may be float32 too)" : ""));
  }
  if (form == Form::plain && view.shape != o.shape) {
    throw_value_error("argument '" + name + "' has shape " + shape_text(view.shape) + ", expected " + shape_text(o.shape));
  }
  // A blocked copy is flat: a plain array of the same element count (a 2-D weight) would be read
  // as blocked without a word.
  if (form == Form::blocked && view.shape.size() != 1) {
    throw_value_error("argument '" + name + "' has shape " + shape_text(view.shape) + ": a blocked array is flat (1-D, " +
                      std::to_string(o.blocked_elements) + " elements: op.blocked_size('" + o.name +
                      "')); convert a plain one with op.to_blocked('" + o.name + "', ...)");
  }
  if (form == Form::blocked && view.elements() != o.blocked_elements) {
    throw_value_error("argument '" + name + "' has " + std::to_string(view.elements()) + " elements, the blocked layout" +
                      (name == o.name ? "" : " of '" + o.name + "'") + " holds " + std::to_string(o.blocked_elements) +
                      " (op.blocked_size('" + o.name + "'))");
  }
  return view;
}

std::size_t operand_index(const PreparedOp& op, const std::string& name) {
  for (std::size_t i = 0; i < op.operands().size(); ++i) {
    if (op.operands()[i].name == name) return i;
  }
  std::string names;
  for (const Operand& o : op.operands()) names += (names.empty() ? "" : ", ") + o.name;
  throw_value_error("argument 'name': the operator has no operand '" + name + "' (it has " + names + ")");
}

// Whether output operand i's view overlaps an input's (out= aliasing an input: the kernels would
// read what they already wrote).
bool overlaps_an_input(const std::vector<Operand>& operands, const std::vector<ArrayView>& views, std::size_t i) {
  for (std::size_t j = 0; j < operands.size(); ++j) {
    if (!operands[j].output && overlap(views[i], views[j])) return true;
  }
  return false;
}

// inputs: the plain input arrays in operand order; out: the plain output.
void run_plain(const BoundOp& bound, const py::sequence& inputs, py::handle out) {
  const PreparedOp& op = *bound.op;
  const std::vector<Operand>& operands = op.operands();
  std::vector<ArrayView> views;
  std::size_t next_input = 0;
  for (const Operand& o : operands) {
    if (o.output) {
      views.push_back(checked_view(op, out, "out", Access::write, o, Form::plain));
    } else {
      if (next_input >= inputs.size()) throw_value_error("argument '" + o.name + "' is missing");
      views.push_back(checked_view(op, inputs[next_input++], o.name, Access::read, o, Form::plain));
    }
  }
  if (next_input != inputs.size()) {
    throw_value_error("the operator takes " + std::to_string(next_input) + " arrays, " + std::to_string(inputs.size()) +
                      " were given");
  }
  // Operands whose layout is their plain one are used in place, except an output that shares
  // memory with an input (out=x): it is written to scratch and copied after the run.
  std::vector<bool> in_place(operands.size());
  for (std::size_t i = 0; i < operands.size(); ++i) {
    in_place[i] = operands[i].plain && !(operands[i].output && overlaps_an_input(operands, views, i));
  }
  py::gil_scoped_release release;
  std::lock_guard lock(op.run_lock());
  omp_set_num_threads(op.threads());
  bound.scratch.resize(operands.size());
  std::vector<void*> blocked;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (in_place[i]) {
      blocked.push_back(views[i].data);
      continue;
    }
    blocked.push_back(bound.scratch[i].reserve(static_cast<std::size_t>(operands[i].blocked_elements) *
                                               jit::size_of(op.dtype())));
    if (!operands[i].output) op.to_blocked(i, views[i].data, blocked[i]);
  }
  op.run(blocked);
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (operands[i].output && !in_place[i]) op.from_blocked(i, blocked[i], views[i].data);
  }
}

// arrays: one blocked array per operand, the output's included, in operand order.
// column_major: a float32 output in the f32 layout's column-major tiles (writes_f32_column_major).
void run_blocked(const BoundOp& bound, const py::sequence& arrays, bool column_major) {
  const PreparedOp& op = *bound.op;
  const std::vector<Operand>& operands = op.operands();
  if (arrays.size() != operands.size()) {
    throw_value_error("the operator takes " + std::to_string(operands.size()) + " blocked arrays, " +
                      std::to_string(arrays.size()) + " were given");
  }
  std::vector<ArrayView> views;
  std::vector<void*> blocked;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const Operand& o = operands[i];
    // The output is the Python call's `out=`.
    views.push_back(checked_view(op, arrays[i], o.output ? "out" : o.name, o.output ? Access::write : Access::read, o,
                                 Form::blocked, Output::f32_too));
    blocked.push_back(views.back().data);
  }
  const bool f32_output = op.dtype() != DataType::f32 && std::any_of(operands.begin(), operands.end(), [&](const Operand& o) {
    return o.output && views[static_cast<std::size_t>(&o - operands.data())].dtype == DataType::f32;
  });
  if (column_major && !(f32_output && op.writes_f32_column_major())) {
    throw_value_error(op.writes_f32_column_major()
                          ? "argument 'dw_order': 'column_major' needs a float32 out"
                          : "argument 'dw_order': 'column_major' is for a bf16 GemmBackwardWeights writing float32");
  }
  py::gil_scoped_release release;
  std::lock_guard lock(op.run_lock());
  omp_set_num_threads(op.threads());
  // An out= that shares memory with an input (out=x) is written to scratch and copied after the
  // run, as in run_plain.
  bound.scratch.resize(operands.size());
  std::vector<std::size_t> aliased;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (!operands[i].output || !overlaps_an_input(operands, views, i)) continue;
    aliased.push_back(i);
    blocked[i] = bound.scratch[i].reserve(views[i].bytes());
  }
  if (column_major) {
    op.run_f32_column_major(blocked);
  } else if (f32_output) {
    op.run_f32_output(blocked);
  } else {
    op.run(blocked);
  }
  for (const std::size_t i : aliased) {
    std::memcpy(views[i].data, blocked[i], views[i].bytes());
  }
}

// A conversion moves elements between layouts: into memory it still reads, it would read what it
// already wrote.
void refuse_in_place(const ArrayView& source, const std::string& name, const ArrayView& target) {
  if (overlap(source, target)) {
    throw_value_error("argument 'out' shares memory with '" + name + "': a conversion between layouts cannot run in "
                      "place; give another out (or none)");
  }
}

void convert(const BoundOp& bound, const std::string& name, py::handle from, py::handle to, bool into_blocked) {
  const PreparedOp& op = *bound.op;
  const std::size_t i = operand_index(op, name);
  const Operand& o = op.operands()[i];
  const Form from_form = into_blocked ? Form::plain : Form::blocked;
  const Form to_form = into_blocked ? Form::blocked : Form::plain;
  const ArrayView source = checked_view(op, from, name, Access::read, o, from_form);
  const ArrayView target = checked_view(op, to, "out", Access::write, o, to_form);
  refuse_in_place(source, name, target);
  py::gil_scoped_release release;
  if (into_blocked) {
    op.to_blocked(i, source.data, target.data);
  } else {
    op.from_blocked(i, source.data, target.data);
  }
}

// to_blocked of a gradient through a ReLU (PreparedOp::to_blocked_relu_backward): `forward_out`
// checked as `plain` is (type, shape).
void convert_relu_backward(const BoundOp& bound, const std::string& name, py::handle plain, py::handle forward_out,
                           py::handle to) {
  const PreparedOp& op = *bound.op;
  const std::size_t i = operand_index(op, name);
  const Operand& o = op.operands()[i];
  const ArrayView source = checked_view(op, plain, name, Access::read, o, Form::plain);
  const ArrayView mask = checked_view(op, forward_out, "relu_of", Access::read, o, Form::plain);
  const ArrayView target = checked_view(op, to, "out", Access::write, o, Form::blocked);
  refuse_in_place(source, name, target);
  refuse_in_place(mask, "relu_of", target);
  py::gil_scoped_release release;
  op.to_blocked_relu_backward(i, source.data, mask.data, target.data);
}

// PreparedOp::channel_sums of a blocked array into `out` (one value per output feature or channel:
// the plain shape's second dimension; float32, float64 for an f64 operator).
void channel_sums(const BoundOp& bound, const std::string& name, py::handle blocked, py::handle out) {
  const PreparedOp& op = *bound.op;
  const std::size_t i = operand_index(op, name);
  const Operand& o = op.operands()[i];
  const ArrayView source = checked_view(op, blocked, name, Access::read, o, Form::blocked);
  const ArrayView target = view_array(out, "out", Access::write, Uint16As::error);
  const DataType sum = op.dtype() == DataType::f64 ? DataType::f64 : DataType::f32;
  const std::int64_t channels = o.shape.size() >= 2 ? o.shape[1] : 0;
  if (target.dtype != sum || target.shape != std::vector<std::int64_t>{channels}) {
    throw_type_error("argument 'out' must be " + std::to_string(channels) + " " + std::string(jit::to_string(sum)) +
                     " values (shape (" + std::to_string(channels) + ",), one per channel of '" + name + "'), got shape " +
                     shape_text(target.shape) + " of " + std::string(jit::to_string(target.dtype)));
  }
  py::gil_scoped_release release;
  op.channel_sums(i, source.data, target.data);
}

// vnni2_pack / vnni2_unpack (ops/vnni2_pairs.hpp) on flat arrays of rows x (elements / rows)
// column-major values: `in` float32 (the pairs, for the unpack), `out` bfloat16 (the pack) or
// float32 (the unpack), the same element count.
void vnni2_pairs(py::handle in, py::handle out, std::int64_t rows, bool pack) {
  const ArrayView source = view_array(in, "in", Access::read, Uint16As::error);
  const ArrayView target = view_array(out, "out", Access::write, pack ? Uint16As::bf16 : Uint16As::error);
  const DataType out_type = pack ? DataType::bf16 : DataType::f32;
  if (source.dtype != DataType::f32 || target.dtype != out_type)
    throw_type_error("arguments 'in' and 'out' must hold float32 and " + std::string(jit::to_string(out_type)) +
                     ", got " + std::string(jit::to_string(source.dtype)) + " and " +
                     std::string(jit::to_string(target.dtype)));
  const std::int64_t elements = source.elements();
  // rows > elements first: 2 rows would overflow for rows near 2^63.
  if (rows < 1 || rows > elements || target.elements() != elements || elements % rows != 0 || (elements / rows) % 2 != 0)
    throw_value_error("argument 'rows' (" + std::to_string(rows) + ") must divide 'in' (" + std::to_string(elements) +
                      " elements) into an even number of columns, and 'out' must hold as many (" +
                      std::to_string(target.elements()) + ")");
  py::gil_scoped_release release;
  if (pack) {
    ops::pack_vnni2(static_cast<const float*>(source.data), rows, elements / rows,
                    static_cast<jit::bfloat16*>(target.data));
  } else {
    ops::unpack_vnni2(static_cast<const float*>(source.data), rows, elements / rows, static_cast<float*>(target.data));
  }
}

template <class Prepare>
std::shared_ptr<BoundOp> prepared(Prepare&& prepare, const std::vector<std::string>& knob_names) {
  std::vector<std::string> keys{"loop_string", "blocks"};
  keys.insert(keys.end(), knob_names.begin(), knob_names.end());
  py::gil_scoped_release release;  // generating the kernels takes a while
  return std::make_shared<BoundOp>(BoundOp{prepare(), {}, std::move(keys)});
}

std::shared_ptr<BoundOp> prepare_gemm(const std::string& pass_name, std::int64_t M, std::int64_t N, std::int64_t K, py::handle dtype,
                     int layers, bool bias, bool relu, py::handle config, py::handle threads, bool plain_dy) {
  const ops::GemmPassKind pass = ops::parse_gemm_pass(pass_name);
  const ops::GemmDesc desc{.M = M, .N = N, .K = K, .dtype = op_dtype(dtype, OpFamily::gemm), .layers = layers,
                           .bias = bias, .relu = relu};
  const std::vector<std::string> knobs = gemm_knob_names(pass);
  const OpConfig request = parse_op_config(config, knobs, {"bm", "bn", "bk"});
  const int t = threads_argument(threads);
  return prepared([&] { return make_gemm_op(pass, desc, request, t, plain_dy); }, knobs);
}

std::shared_ptr<BoundOp> prepare_conv(const std::string& pass_name, const std::vector<std::int64_t>& sizes, py::handle dtype,
                     bool bias, bool relu, py::handle config, py::handle threads,
                     const std::vector<std::int64_t>& dy_rim) {
  const ops::ConvPassKind pass = ops::parse_conv_pass(pass_name);
  if (sizes.size() != 11) throw_value_error("prepare_conv: sizes are N H W C K R S stride_h stride_w pad_h pad_w");
  if (dy_rim.size() != 2) throw_value_error("prepare_conv: dy_rim is (h, w)");
  if (dy_rim[0] < 0 || dy_rim[1] < 0) {
    throw_value_error("argument 'dy_rim' must be >= 0 (the rims around dy's images), got (" +
                      std::to_string(dy_rim[0]) + ", " + std::to_string(dy_rim[1]) + ")");
  }
  if (pass != ops::ConvPassKind::upd && (dy_rim[0] != 0 || dy_rim[1] != 0)) {
    throw_value_error("argument 'dy_rim' is the backward-by-weights pass's: the " + pass_name +
                      " pass lays its operands out itself");
  }
  const ops::ConvShape shape{.N = sizes[0], .H = sizes[1], .W = sizes[2], .C = sizes[3], .K = sizes[4], .R = sizes[5],
                             .S = sizes[6], .stride_h = sizes[7], .stride_w = sizes[8], .pad_h = sizes[9], .pad_w = sizes[10]};
  const ops::ConvDesc desc{.shape = shape, .dtype = op_dtype(dtype, OpFamily::conv), .bias = bias, .relu = relu,
                           .grad_output_pad_h = dy_rim[0], .grad_output_pad_w = dy_rim[1]};
  shape.validate();  // before the knob names, which are computed from the shape
  const std::vector<std::string> knobs = conv_knob_names(pass, desc);
  const OpConfig request = parse_op_config(config, knobs, {"bc", "bk"});
  const int t = threads_argument(threads);
  return prepared([&] { return make_conv_op(pass, desc, request, t); }, knobs);
}

}  // namespace

void bind_ops(py::module_& m) {
  py::class_<BoundOp, std::shared_ptr<BoundOp>>(m, "PreparedOp", "A weft::ops operator, prepared once (kernels generated) and run many times.")
      .def_property_readonly("operands", [](const BoundOp& b) {
        py::list list;
        for (const Operand& o : b.op->operands()) {
          list.append(py::dict(py::arg("name") = o.name, py::arg("shape") = py::tuple(py::cast(o.shape)),
                               py::arg("blocked_size") = o.blocked_elements, py::arg("output") = o.output,
                               py::arg("plain") = o.plain,
                               py::arg("rim") = o.rim.empty() ? py::object(py::none()) : py::object(py::tuple(py::cast(o.rim)))));
        }
        return list;
      })
      .def_property_readonly("dtype", [](const BoundOp& b) { return std::string(jit::to_string(b.op->dtype())); })
      .def_property_readonly("source", [](const BoundOp& b) { return b.op->source(); })
      .def_property_readonly("description", [](const BoundOp& b) { return b.op->description(); })
      .def_property_readonly("threads", [](const BoundOp& b) { return b.op->threads(); })
      .def_property_readonly("writes_f32_output", [](const BoundOp& b) { return b.op->writes_f32_output(); })
      .def_property_readonly("writes_f32_column_major", [](const BoundOp& b) { return b.op->writes_f32_column_major(); })
      .def_property_readonly("config_keys", [](const BoundOp& b) { return b.config_keys; })
      .def("run_plain", &run_plain, py::arg("inputs"), py::arg("out"))
      .def("run_blocked", &run_blocked, py::arg("arrays"), py::arg("column_major") = false)
      .def("to_blocked", [](const BoundOp& b, const std::string& name, py::handle plain, py::handle out) {
        convert(b, name, plain, out, true);
      }, py::arg("name"), py::arg("plain"), py::arg("out"))
      .def("to_blocked_relu_backward", &convert_relu_backward, py::arg("name"), py::arg("plain"),
           py::arg("forward_out"), py::arg("out"))
      .def("channel_sums", &channel_sums, py::arg("name"), py::arg("blocked"), py::arg("out"))
      .def("from_blocked", [](const BoundOp& b, const std::string& name, py::handle blocked, py::handle out) {
        convert(b, name, blocked, out, false);
      }, py::arg("name"), py::arg("blocked"), py::arg("out"));
  m.def("prepare_gemm", &prepare_gemm, py::arg("pass_name"), py::arg("M"), py::arg("N"), py::arg("K"), py::arg("dtype"),
        py::arg("layers"), py::arg("bias"), py::arg("relu"), py::arg("config"), py::arg("threads"), py::arg("plain_dy") = true);
  m.def("prepare_conv", &prepare_conv, py::arg("pass_name"), py::arg("sizes"), py::arg("dtype"), py::arg("bias"),
        py::arg("relu"), py::arg("config"), py::arg("threads"), py::arg("dy_rim") = std::vector<std::int64_t>{0, 0});
  m.def("vnni2_pack", [](py::handle in, py::handle out, std::int64_t rows) { vnni2_pairs(in, out, rows, true); },
        py::arg("in"), py::arg("out"), py::arg("rows"));
  m.def("vnni2_unpack", [](py::handle in, py::handle out, std::int64_t rows) { vnni2_pairs(in, out, rows, false); },
        py::arg("in"), py::arg("out"), py::arg("rows"));
}

}  // namespace weft::python
