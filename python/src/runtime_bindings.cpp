// What weft sees of the machine (the ISA it generates code for, the CPU's features) and how many
// threads its parallel work uses.
#include <omp.h>
#include <pybind11/pybind11.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "bindings.hpp"
#include "buffers.hpp"
#include "weft/jit/cpu.hpp"

namespace weft::python {

namespace {

namespace py = pybind11;

std::atomic<int> g_requested_threads{0};

py::dict cpu_dict() {
  const jit::CpuFeatures& c = jit::cpu_features();
  py::dict d;
  d["model"] = c.model;
  d["x86_64"] = c.x86_64;
  d["avx2"] = c.avx2;
  d["fma"] = c.fma;
  d["avx512f"] = c.avx512f;
  d["avx512bw"] = c.avx512bw;
  d["avx512vl"] = c.avx512vl;
  d["avx512dq"] = c.avx512dq;
  d["avx512bf16"] = c.avx512bf16;
  d["amx_tile"] = c.amx_tile;
  d["amx_bf16"] = c.amx_bf16;
  d["aarch64"] = c.aarch64;
  d["asimd"] = c.asimd;
  d["asimd_dot"] = c.asimd_dot;
  d["sve"] = c.sve;
  d["sve2"] = c.sve2;
  d["bf16"] = c.bf16;
  d["sve_bf16"] = c.sve_bf16;
  d["i8mm"] = c.i8mm;
  d["sve_vector_bytes"] = c.sve_vector_bytes;
  d["amd"] = c.amd;
  d["family"] = c.family;
  d["model_number"] = c.model_number;
  d["vector_datapath_bytes"] = c.vector_datapath_bytes;
  d["logical_cpus"] = c.logical_cpus;
  d["l1d_bytes"] = c.l1d_bytes;
  d["l2_bytes"] = c.l2_bytes;
  d["l3_bytes"] = c.l3_bytes;
  d["best_isa"] = std::string(jit::to_string(jit::best_isa(c)));
  return d;
}

// A thread count given as argument `name`: Python ints only (bool is an int too, but never meant
// as a thread count).
int thread_count(py::handle n, const std::string& name) {
  if (!py::isinstance<py::int_>(n) || py::isinstance<py::bool_>(n)) {
    throw_type_error("argument '" + name + "' must be an int, not " + std::string(py::str(py::type::of(n).attr("__name__"))));
  }
  const long long value = n.cast<long long>();
  constexpr long long kMaxThreads = 1 << 16;
  if (value < 1 || value > kMaxThreads) {
    throw_value_error("argument '" + name + "' must be in 1.." + std::to_string(kMaxThreads) + ", got " +
                      std::to_string(value));
  }
  return static_cast<int>(value);
}

void set_num_threads(py::handle n) {
  const int value = thread_count(n, "n");
  g_requested_threads.store(value);
  omp_set_num_threads(value);
}

}  // namespace

int requested_threads() { return g_requested_threads.load(); }

int threads_argument(py::handle threads) {
  if (!threads.is_none()) return thread_count(threads, "threads");
  const int requested = requested_threads();
  return requested > 0 ? requested : omp_get_max_threads();
}

void bind_runtime(py::module_& m) {
  m.def("isa", [] { return std::string(jit::to_string(jit::selected_isa())); },
        "The instruction set weft generates code for (WEFT_ISA overrides the detected best one).");
  m.def("cpu", &cpu_dict, "The detected CPU features, as a dict.");
  m.def("set_num_threads", &set_num_threads, py::arg("n"),
        "Threads of weft's parallel work (einsum, trace's default), for every Python thread.");
  m.def("get_num_threads", [] { return threads_argument(py::none()); });
  // 0 until set_num_threads is called: weft.torch then follows torch.get_num_threads() instead of
  // OpenMP's count, which `import torch` resets (to 1 with Debian's build).
  m.def("requested_num_threads", [] { return requested_threads(); });
  // The address weft reads for an array: for tests that zero copy holds.
  m.def("data_pointer", [](py::handle array, bool bf16) {
    const ArrayView view = view_array(array, "array", Access::read, bf16 ? Uint16As::bf16 : Uint16As::error);
    return reinterpret_cast<std::uintptr_t>(view.data);
  }, py::arg("array"), py::arg("bf16") = false);
}

}  // namespace weft::python
