// weft-tune contraction: a tensor contraction through the tensor front end (contraction_workload.hpp).
#include <string>

#include <weft/cli/command_line.hpp>
#include <weft/tuner/contraction_workload.hpp>

#include "tune_request.hpp"
#include "tune_verbs.hpp"

namespace weft::samples {

int contraction_verb(int argc, char** argv, std::FILE* out, std::FILE* err) {
  CLI::App app;
  RequestOptions given;
  std::string dims, sizes, einsum, prim = "brgemm", first = "zero", last = "none";
  cli::add_text(app, "--dims", dims, "dimension types");
  cli::add_text(app, "--sizes", sizes, "dimension sizes");
  cli::add_text(app, "--einsum", einsum, "einsum string");
  cli::add_text(app, "--prim", prim, "main primitive");
  cli::add_text(app, "--first", first, "first-touch primitive");
  cli::add_text(app, "--last", last, "last-touch primitive");
  add_request_options(app, given);
  cli::parse(app, argc, argv, 2);
  const Request request = make_request(app, given);
  const tuner::ContractionProblem problem =
      build_workload([&] { return tuner::parse_contraction_problem(dims, einsum, sizes, prim, first, last); });
  const tuner::ContractionWorkload workload =
      build_workload([&] { return tuner::ContractionWorkload(problem, request.tuner.threads); });
  check_request(workload, request, "the optimizer leaves no loop");
  return run_tuning(workload, request, out, err);
}

}  // namespace weft::samples
