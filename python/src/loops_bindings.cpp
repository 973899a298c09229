// weft.explain and weft.trace: what a loop_string does with given LoopSpecs, as text (the
// library's render of the nest, what weft-explain prints) or as the indices each thread visits.
#include <omp.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bindings.hpp"
#include "buffers.hpp"
#include "weft/parlooper/nest_trace.hpp"
#include "weft/parlooper/threaded_loop.hpp"

namespace weft::python {

namespace {

namespace py = pybind11;
using parlooper::DynamicThreadedLoop;
using parlooper::LoopSpecs;
using parlooper::NestTrace;

long spec_integer(py::handle value, const std::string& where) {
  if (!py::isinstance<py::int_>(value)) throw_type_error(where + " must be an int");
  return value.cast<long>();
}

// (start, end, step) followed by the block sizes, either as further ints or as one sequence.
LoopSpecs loop_specs_of(py::handle item, std::size_t loop) {
  const std::string where = "specs[" + std::to_string(loop) + "] (loop '" + std::string(1, static_cast<char>('a' + loop)) + "')";
  if (!py::isinstance<py::sequence>(item) || py::isinstance<py::str>(item)) {
    throw_type_error(where + " must be a tuple (start, end, step[, block sizes])");
  }
  const auto fields = py::reinterpret_borrow<py::sequence>(item);
  if (fields.size() < 3) throw_value_error(where + " needs (start, end, step[, block sizes])");
  LoopSpecs spec{spec_integer(fields[0], where + " start"), spec_integer(fields[1], where + " end"),
                 spec_integer(fields[2], where + " step")};
  for (std::size_t i = 3; i < fields.size(); ++i) {
    py::handle field = fields[i];
    if (i == 3 && fields.size() == 4 && py::isinstance<py::sequence>(field)) {
      for (py::handle block : py::reinterpret_borrow<py::sequence>(field)) {
        spec.block_size.push_back(spec_integer(block, where + " block size"));
      }
    } else {
      spec.block_size.push_back(spec_integer(field, where + " block size"));
    }
  }
  return spec;
}

std::vector<LoopSpecs> specs_of(py::handle specs) {
  if (!py::isinstance<py::sequence>(specs) || py::isinstance<py::str>(specs)) {
    throw_type_error("argument 'specs' must be a list of (start, end, step[, block sizes]), one per loop");
  }
  const auto items = py::reinterpret_borrow<py::sequence>(specs);
  if (items.size() < 1 || items.size() > static_cast<std::size_t>(parlooper::kMaxLoops)) {
    throw_value_error("argument 'specs' must hold 1.." + std::to_string(parlooper::kMaxLoops) +
                      " loops (a..z), got " + std::to_string(items.size()));
  }
  std::vector<LoopSpecs> loop_specs;
  for (std::size_t i = 0; i < items.size(); ++i) loop_specs.push_back(loop_specs_of(items[i], i));
  return loop_specs;
}

DynamicThreadedLoop make_loop(const std::string& loop_string, const std::vector<LoopSpecs>& specs) {
  return DynamicThreadedLoop(specs, loop_string, parlooper::default_engine_kind());
}

py::list trace(const std::string& loop_string, py::handle specs, py::handle threads_arg) {
  const std::vector<LoopSpecs> loop_specs = specs_of(specs);
  const DynamicThreadedLoop loop = make_loop(loop_string, loop_specs);
  int threads = requested_threads() > 0 ? requested_threads() : omp_get_max_threads();
  if (!threads_arg.is_none()) {
    if (!py::isinstance<py::int_>(threads_arg)) throw_type_error("argument 'threads' must be an int");
    const long long value = threads_arg.cast<long long>();
    if (value < 1 || value > 1 << 16) throw_value_error("argument 'threads' must be >= 1, got " + std::to_string(value));
    threads = static_cast<int>(value);
  }
  NestTrace result;
  {
    py::gil_scoped_release release;
    result = parlooper::trace_nest(loop, loop_specs, threads);
  }
  py::list out;
  for (const std::vector<int>& values : result.per_thread) {
    py::list visits;
    for (std::size_t i = 0; i < values.size(); i += static_cast<std::size_t>(result.loops)) {
      py::tuple index(static_cast<std::size_t>(result.loops));
      for (int x = 0; x < result.loops; ++x) index[static_cast<std::size_t>(x)] = values[i + static_cast<std::size_t>(x)];
      visits.append(std::move(index));
    }
    out.append(std::move(visits));
  }
  return out;
}

}  // namespace

void bind_loops(py::module_& m) {
  m.def("explain", [](const std::string& loop_string, py::handle specs) { return make_loop(loop_string, specs_of(specs)).render(); },
        py::arg("loop_string"), py::arg("specs"));
  m.def("trace", &trace, py::arg("loop_string"), py::arg("specs"), py::arg("threads") = py::none());
}

}  // namespace weft::python
