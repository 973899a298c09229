// weft._weft: the extension module under the pure-Python package `weft` (python/weft/).
// weft's exceptions become Python ones: a malformed loop string, einsum tree or descriptor is a
// ValueError carrying the library's message (with its caret), a size this machine cannot hold a
// MemoryError.
#include <pybind11/pybind11.h>

#include <exception>

#include "bindings.hpp"
#include "weft/jit/error.hpp"

PYBIND11_MODULE(_weft, m) {
  m.doc() = "weft's kernels on NumPy arrays and DLPack tensors (see docs/python.md)";
  pybind11::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const weft::MemoryError& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const weft::Error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  weft::python::bind_runtime(m);
  weft::python::bind_loops(m);
  weft::python::bind_tpp(m);
  weft::python::bind_einsum(m);
  weft::python::bind_ops(m);
  weft::python::bind_tune(m);
  weft::python::bind_recycled_memory(m);
}
