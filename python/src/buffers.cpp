#include "buffers.hpp"

#include <Python.h>

#include <cstddef>
#include <utility>

namespace weft::python {

namespace {

using jit::DataType;

// DLPack's ABI (v0.x: the unversioned DLManagedTensor in a "dltensor" capsule, what NumPy 1.24 and
// PyTorch 1.13 export). Declared here: Debian ships no dlpack.h.
struct DLDevice {
  std::int32_t device_type;  // 1: kDLCPU
  std::int32_t device_id;
};
struct DLDataType {
  std::uint8_t code;  // 0 int, 1 uint, 2 float, 4 bfloat
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; null means compact row-major
  std::uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
constexpr std::int32_t kDLCPU = 1;
constexpr std::uint8_t kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4;

std::string quoted(std::string_view name) { return "argument '" + std::string(name) + "'"; }

// `describe` names the element type for the error message, built only when there is one.
template <class Describe>
DataType element_type(bool is_float, bool is_uint16_or_bf16_bits, int bits, bool is_bfloat,
                      std::string_view name, Uint16As uint16_as, Describe describe) {
  if (is_float && bits == 32) return DataType::f32;
  if (is_float && bits == 64) return DataType::f64;
  if (is_bfloat && bits == 16) return DataType::bf16;
  if (is_uint16_or_bf16_bits) {
    if (uint16_as == Uint16As::bf16) return DataType::bf16;
    throw_type_error(quoted(name) + " is a uint16 array: pass dtype='bf16' to read it as bfloat16");
  }
  throw_type_error(quoted(name) + " has element type " + describe() +
                   "; weft takes float32, float64 and bfloat16 (torch.bfloat16, or uint16 with dtype='bf16')");
}

// Strides in units of `unit` (bytes per element for a Py_buffer's byte strides, 1 for DLPack's
// element strides); dimensions of extent 1 may have any stride (NumPy gives them odd ones).
template <class Stride>
void require_c_contiguous(const std::vector<std::int64_t>& shape, const Stride* strides, std::int64_t unit,
                          std::string_view name) {
  if (strides == nullptr) return;
  std::int64_t expected = unit;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && static_cast<std::int64_t>(strides[i]) != expected) {
      throw_value_error(quoted(name) + " is not C-contiguous (shape " + shape_text(shape) +
                        "); pass numpy.ascontiguousarray(...) or tensor.contiguous()");
    }
    expected *= shape[i];
  }
}

// Runs `release` with the GIL, taking it only when this thread does not hold it already (taking
// it costs as much as a small kernel call, and views are mostly let go with the GIL held).
template <class Release>
void with_gil(Release release) {
  if (PyGILState_Check()) {
    release();
  } else {
    py::gil_scoped_acquire gil;
    release();
  }
}

ArrayView view_buffer(py::handle object, std::string_view name, Access access, Uint16As uint16_as) {
  auto buffer = std::make_unique<Py_buffer>();
  const int flags = PyBUF_STRIDES | PyBUF_FORMAT | (access == Access::write ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(object.ptr(), buffer.get(), flags) != 0) {
    PyErr_Clear();
    if (access == Access::write) throw_value_error(quoted(name) + " is read-only, but it is written");
    throw_type_error(quoted(name) + " does not give its buffer");
  }
  // From here on the buffer is released by the keeper, whatever is thrown.
  std::shared_ptr<void> keeper(buffer.release(), [](void* p) {
    auto* b = static_cast<Py_buffer*>(p);
    with_gil([b] { PyBuffer_Release(b); });
    delete b;
  });
  const auto* b = static_cast<const Py_buffer*>(keeper.get());
  ArrayView view;
  view.shape.assign(b->shape, b->shape + b->ndim);
  std::string_view format = b->format == nullptr ? "B" : b->format;
  if (!format.empty() && (format[0] == '<' || format[0] == '=' || format[0] == '@')) format.remove_prefix(1);
  view.dtype = element_type(format == "f" || format == "d", format == "H", static_cast<int>(b->itemsize) * 8, false,
                            name, uint16_as, [&] { return "'" + std::string(format) + "' (buffer format)"; });
  require_c_contiguous(view.shape, b->strides, b->itemsize, name);
  view.data = b->buf;
  view.keeper = std::move(keeper);
  return view;
}

ArrayView view_dlpack(py::handle object, std::string_view name, Uint16As uint16_as) {
  // A torch tensor with its negative bit set (a lazy negation, torch._neg_view) exports the values
  // before the negation: refused rather than read with the wrong sign.
  if (py::hasattr(object, "is_neg") && object.attr("is_neg")().cast<bool>()) {
    throw_value_error(quoted(name) + " is a negated view (tensor.is_neg()): pass tensor.resolve_neg()");
  }
  py::object capsule = object.attr("__dlpack__")();
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (managed == nullptr) {
    PyErr_Clear();
    throw_type_error(quoted(name) + ": __dlpack__ did not return a 'dltensor' capsule");
  }
  // Ours now: the capsule's destructor leaves a "used_dltensor" alone, the keeper calls the deleter.
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  std::shared_ptr<void> keeper(managed, [](void* p) {
    auto* m = static_cast<DLManagedTensor*>(p);
    if (m->deleter != nullptr) with_gil([m] { m->deleter(m); });
  });
  const DLTensor& t = managed->dl_tensor;
  if (t.device.device_type != kDLCPU) {
    throw_value_error(quoted(name) + " lives on device type " + std::to_string(t.device.device_type) +
                      "; weft reads CPU memory only");
  }
  ArrayView view;
  view.shape.assign(t.shape, t.shape + t.ndim);
  const auto describe = [&] {
    return "DLPack code " + std::to_string(t.dtype.code) + " with " + std::to_string(t.dtype.bits) + " bits";
  };
  if (t.dtype.lanes != 1) throw_type_error(quoted(name) + " has vector elements (" + describe() + ")");
  view.dtype = element_type(t.dtype.code == kDLFloat, t.dtype.code == kDLUInt && t.dtype.bits == 16,
                            t.dtype.bits, t.dtype.code == kDLBfloat, name, uint16_as, describe);
  require_c_contiguous(view.shape, t.strides, 1, name);
  view.data = static_cast<char*>(t.data) + t.byte_offset;
  view.keeper = std::move(keeper);
  return view;
}

}  // namespace

std::int64_t ArrayView::elements() const {
  std::int64_t n = 1;
  for (std::int64_t extent : shape) n *= extent;
  return n;
}

std::size_t ArrayView::bytes() const { return static_cast<std::size_t>(elements()) * jit::size_of(dtype); }

bool overlap(const ArrayView& a, const ArrayView& b) {
  const auto* x = static_cast<const std::byte*>(a.data);
  const auto* y = static_cast<const std::byte*>(b.data);
  return a.bytes() > 0 && b.bytes() > 0 && x < y + b.bytes() && y < x + a.bytes();
}

ArrayView view_array(py::handle object, std::string_view name, Access access, Uint16As uint16_as) {
  if (PyObject_CheckBuffer(object.ptr())) return view_buffer(object, name, access, uint16_as);
  if (py::hasattr(object, "__dlpack__")) return view_dlpack(object, name, uint16_as);
  throw_type_error(quoted(name) + " must be a NumPy array or a DLPack tensor (torch.Tensor), not " +
                   std::string(py::str(py::type::of(object).attr("__name__"))));
}

std::optional<jit::DataType> parse_dtype(py::handle dtype) {
  if (dtype.is_none()) return std::nullopt;
  if (!py::isinstance<py::str>(dtype)) throw_type_error("argument 'dtype' must be a string such as 'bf16'");
  const std::string text = py::str(dtype);
  if (text == "f32" || text == "float32") return DataType::f32;
  if (text == "f64" || text == "float64") return DataType::f64;
  if (text == "bf16" || text == "bfloat16") return DataType::bf16;
  throw_value_error("argument 'dtype': '" + text + "' is none of 'f32', 'f64', 'bf16'");
}

void require_dtype(const ArrayView& view, std::string_view name, std::optional<jit::DataType> declared) {
  if (declared && *declared != view.dtype) {
    throw_type_error(quoted(name) + " holds " + std::string(jit::to_string(view.dtype)) + ", but dtype='" +
                     std::string(jit::to_string(*declared)) + "' was given");
  }
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

void throw_type_error(const std::string& message) { throw py::type_error(message); }
void throw_value_error(const std::string& message) { throw py::value_error(message); }

}  // namespace weft::python
