// weft.tune: the tuner's search (tuner::tune) over the operators' workloads (ops/gemm_workload.hpp,
// ops/conv_workload.hpp), as weft-tune gemm / conv run it: the winner is appended to the tuning
// database (the one weft-tune writes: $WEFT_TUNING_DB, else ~/.cache/weft/tuning.jsonl) where the
// operators' config="auto" finds it. The progress bar is the tuner's, drawn only when stderr is a
// terminal. python/weft/tune.py documents the functions.
#include <omp.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "buffers.hpp"
#include "op_config.hpp"
#include "weft/ops/conv_workload.hpp"
#include "weft/ops/gemm_workload.hpp"
#include "weft/tuner/report.hpp"
#include "weft/tuner/tuner.hpp"
#include "weft/tuner/tuning_database.hpp"

namespace weft::python {

namespace {

namespace py = pybind11;

// The GEMM passes are tuned in f32, bf16 and f64; the convolutions in the first two.
jit::DataType tuned_dtype(const std::string& name, bool f64_offered) {
  if (name == "f32" || name == "float32") return jit::DataType::f32;
  if (name == "bf16" || name == "bfloat16") return jit::DataType::bf16;
  if (name == "f64" || name == "float64") {
    if (f64_offered) return jit::DataType::f64;
    throw_type_error("argument 'dtype': the convolutions compute in float32 and bfloat16, not float64");
  }
  throw_value_error("argument 'dtype': '" + name + "' is none of 'f32', 'bf16'" + (f64_offered ? ", 'f64'" : ""));
}

// tiles=: None (a free search), or a dict giving each of `names` one value (a tile-bound search:
// its record serves config={tiles...}); sets the search's lists to those values and returns
// whether it is bound.
bool bind_tiles(py::handle tiles, const std::vector<std::pair<std::string, std::vector<long>*>>& lists) {
  if (tiles.is_none()) return false;
  std::string names;
  for (const auto& [name, list] : lists) names += (names.empty() ? "" : " and ") + name;
  if (!py::isinstance<py::dict>(tiles))
    throw_type_error("argument 'tiles' must be None or a dict giving " + names + ", not " +
                     std::string(py::str(py::type::of(tiles).attr("__name__"))));
  const py::dict given = tiles.cast<py::dict>();
  if (given.size() != lists.size()) throw_value_error("argument 'tiles' must give " + names + " (and nothing else)");
  for (const auto& [name, list] : lists) {
    if (!given.contains(name)) throw_value_error("argument 'tiles' must give " + names + ": '" + name + "' is missing");
    const py::handle value = given[py::str(name)];
    if (!py::isinstance<py::int_>(value) || value.cast<long>() < 1)
      throw_value_error("argument 'tiles': '" + name + "' must be a positive int, got " + std::string(py::repr(value)));
    *list = {value.cast<long>()};
  }
  return true;
}

// Measures for `seconds` on `threads` threads, stores the winner and returns it with its figures.
py::dict tune_and_store(const tuner::Workload& workload, double seconds, int threads, const std::string& caches,
                        const std::string& database) {
  if (caches != "warm" && caches != "cold") throw_value_error("argument 'caches' is 'warm' or 'cold', not '" + caches + "'");
  if (!(seconds > 0)) throw_value_error("argument 'seconds' must be positive, got " + std::to_string(seconds));
  const tuner::TuningDatabase db = database.empty() ? tuner::TuningDatabase() : tuner::TuningDatabase(database);
  tuner::TunerOptions options;
  options.threads = threads;
  options.budget_seconds = seconds;
  options.cold_caches = caches == "cold";
  std::optional<tuner::TuningResult> result;
  {
    py::gil_scoped_release release;
    omp_set_num_threads(threads);
    // A bar on a terminal; nothing in a log or a captured stream.
    std::optional<tuner::ProgressPrinter> bar;
    if (isatty(fileno(stderr)) != 0) bar.emplace(stderr, true);
    result = tuner::tune(workload, options, bar ? bar->callback() : tuner::ProgressCallback{});
    if (bar) bar->finish();
    db.append(result->record());
  }
  py::dict d;
  d["config"] = config_dict(result->best.config);
  d["gflops"] = result->best.gflops();
  d["default_gflops"] = result->baseline.gflops();
  d["measured"] = result->measured.size();
  d["key"] = result->key.to_string();
  d["database"] = db.path().string();
  return d;
}

py::dict tune_gemm(const std::string& pass_name, std::int64_t M, std::int64_t N, std::int64_t K, int layers,
                   const std::string& dtype, double seconds, py::handle threads, const std::string& caches,
                   const std::string& database, py::handle tiles) {
  const int team = threads_argument(threads);  // checked before the workload allocates its data
  const ops::GemmPassKind pass = ops::parse_gemm_pass(pass_name);
  ops::GemmSearchOptions search = ops::default_gemm_search(tuned_dtype(dtype, true));
  search.tile_bound = bind_tiles(tiles, {{"bm", &search.bm}, {"bk", &search.bk}});
  const ops::GemmWorkload workload({M, N, K, layers}, search, pass);
  return tune_and_store(workload, seconds, team, caches, database);
}

py::dict tune_conv(const std::string& pass_name, const std::vector<std::int64_t>& sizes, const std::string& dtype,
                   double seconds, py::handle threads, const std::string& caches, const std::string& database,
                   py::handle tiles) {
  const int team = threads_argument(threads);
  const ops::ConvPassKind pass = ops::parse_conv_pass(pass_name);
  if (sizes.size() != 11) throw_value_error("tune_conv: sizes are N H W C K R S stride_h stride_w pad_h pad_w");
  const ops::ConvShape shape{.N = sizes[0], .H = sizes[1], .W = sizes[2], .C = sizes[3], .K = sizes[4], .R = sizes[5],
                             .S = sizes[6], .stride_h = sizes[7], .stride_w = sizes[8], .pad_h = sizes[9], .pad_w = sizes[10]};
  ops::ConvSearchOptions search;
  search.dtype = tuned_dtype(dtype, false);
  search.tile_bound = bind_tiles(tiles, {{"bc", &search.bc}, {"bk", &search.bk}});
  const ops::ConvWorkload workload(shape, pass, search);
  return tune_and_store(workload, seconds, team, caches, database);
}

}  // namespace

void bind_tune(py::module_& m) {
  m.def("tune_gemm", &tune_gemm, py::arg("pass_name"), py::arg("M"), py::arg("N"), py::arg("K"), py::arg("layers"),
        py::arg("dtype"), py::arg("seconds"), py::arg("threads"), py::arg("caches"), py::arg("database"),
        py::arg("tiles"));
  m.def("tune_conv", &tune_conv, py::arg("pass_name"), py::arg("sizes"), py::arg("dtype"), py::arg("seconds"),
        py::arg("threads"), py::arg("caches"), py::arg("database"), py::arg("tiles"));
}

}  // namespace weft::python
