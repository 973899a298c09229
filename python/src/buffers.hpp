// Arrays handed in from Python, seen in place (zero copy): anything with the buffer protocol (NumPy
// arrays) and DLPack producers (`__dlpack__`: torch tensors), turned into a typed, checked view.
//
//   ArrayView a = view_array(obj, "a", Access::read, Uint16As::bf16);
//   // a.data points into obj's memory; a.dtype is f32, f64 or bf16; a.shape is row-major
//
// Every check throws a Python TypeError or ValueError naming the argument: an object that is neither,
// a non-contiguous array, an element type weft has no kernels for, a read-only output. NumPy has no
// bfloat16: a uint16 array is read as bf16 only when the caller said so (Uint16As::bf16, the
// functions' `dtype="bf16"`).
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/jit/data_type.hpp"

namespace weft::python {

namespace py = pybind11;

enum class Access { read, write };
enum class Uint16As { error, bf16 };

struct ArrayView {
  void* data = nullptr;
  jit::DataType dtype = jit::DataType::f32;
  std::vector<std::int64_t> shape;  // C-contiguous (row-major), checked
  // Holds the producer's memory (the Py_buffer, or the DLPack tensor until its deleter runs); it
  // lets go with the GIL, taking it if this thread does not hold it, so a view may outlive a
  // released GIL.
  std::shared_ptr<void> keeper;

  std::int64_t elements() const;
  // The shape as (rows, cols): cols the last dimension, rows the product of the others ((1, 1)
  // for a 0-d array): the column-major (m = cols, n = rows) matrix the TPPs see.
  std::int64_t cols() const { return shape.empty() ? 1 : shape.back(); }
  std::int64_t rows() const { return cols() == 0 ? 0 : elements() / cols(); }
  std::size_t bytes() const;
};

// Whether the memory of two views overlaps (an out= that aliases an input).
bool overlap(const ArrayView& a, const ArrayView& b);

ArrayView view_array(py::handle object, std::string_view name, Access access, Uint16As uint16_as);

// The `dtype=` argument of the Python functions: None, or "f32"/"float32", "f64"/"float64",
// "bf16"/"bfloat16" (ValueError otherwise).
std::optional<jit::DataType> parse_dtype(py::handle dtype);

// TypeError "argument 'a' holds f64, but dtype='f32' was given" when a declared type differs.
void require_dtype(const ArrayView& view, std::string_view name, std::optional<jit::DataType> declared);

// "(3, 4)", as NumPy prints shapes.
std::string shape_text(const std::vector<std::int64_t>& shape);

// Errors raised as Python exceptions of that type (pybind11 translates them).
[[noreturn]] void throw_type_error(const std::string& message);
[[noreturn]] void throw_value_error(const std::string& message);

}  // namespace weft::python
