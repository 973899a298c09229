// The parts of the extension module weft._weft, each bound by its own file (module.cpp calls them).
#pragma once

#include <pybind11/pybind11.h>

namespace weft::python {

void bind_runtime(pybind11::module_& m);  // runtime_bindings.cpp: isa, cpu, threads, data pointers
void bind_loops(pybind11::module_& m);    // loops_bindings.cpp: explain, trace
void bind_tpp(pybind11::module_& m);      // tpp_bindings.cpp: brgemm, unary, binary
void bind_einsum(pybind11::module_& m);   // einsum_bindings.cpp: einsum trees
void bind_ops(pybind11::module_& m);      // ops_bindings.cpp: the GEMM and convolution operators
void bind_tune(pybind11::module_& m);     // tune_bindings.cpp: tuning them
void bind_recycled_memory(pybind11::module_& m);  // recycled_memory.cpp: weft.torch's tensors' memory

// Threads of weft's parallel work as set by weft.set_num_threads, process-wide (OpenMP's
// omp_set_num_threads only sets the calling thread's, and every Python thread is another one);
// 0 until set: OpenMP's default.
int requested_threads();

// A `threads=` argument: None gives requested_threads() (else OpenMP's default); an int in
// 1..65536 itself; anything else a TypeError or ValueError naming 'threads'.
int threads_argument(pybind11::handle threads);

}  // namespace weft::python
