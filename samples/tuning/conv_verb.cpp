// weft-tune conv: the convolution samples' passes (conv_workload.hpp), each under its own workload
// kind (conv_fwd, conv_bwd, conv_upd).
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <weft/cli/command_line.hpp>
#include <weft/ops/conv_workload.hpp>

#include "tune_request.hpp"
#include "tune_verbs.hpp"

namespace weft::samples {

int conv_verb(int argc, char** argv, std::FILE* out, std::FILE* err) {
  CLI::App app;
  RequestOptions given;
  ops::ConvShape shape;
  std::int64_t stride = 1, pad = 0;
  std::string pass_name = "fwd";
  ops::ConvSearchOptions search;
  constexpr std::int64_t kMax = 1 << 20;
  for (auto [name, size] : {std::pair{"--N", &shape.N}, {"--H", &shape.H}, {"--W", &shape.W}, {"--C", &shape.C},
                            {"--K", &shape.K}, {"--R", &shape.R}, {"--S", &shape.S}})
    cli::add_integer(app, name, *size, 1, kMax, "convolution size");
  cli::add_integer(app, "--stride", stride, 1, kMax, "stride of both dimensions");
  cli::add_integer(app, "--pad", pad, 0, kMax, "padding of both dimensions");
  for (auto [name, size] : {std::pair{"--stride_h", &shape.stride_h}, {"--stride_w", &shape.stride_w}})
    cli::add_integer(app, name, *size, 1, kMax, "stride of one dimension");
  for (auto [name, size] : {std::pair{"--pad_h", &shape.pad_h}, {"--pad_w", &shape.pad_w}})
    cli::add_integer(app, name, *size, 0, kMax, "padding of one dimension");
  cli::add_text(app, "--pass", pass_name, "fwd, bwd or upd");
  std::string dtype_name;
  add_sample_dtype_option(app, dtype_name, "bf16 tensors, fp32 accumulation");
  for (auto [name, list] : {std::pair{"--bc", &search.bc}, {"--bk", &search.bk}})
    cli::add_integer_list(app, name, *list, 1, 4096, "channel blocks to try");
  cli::add_flag(app, "--tile-bound", search.tile_bound,
                "store the best with the one --bc and --bk given, apart from the free search's best");
  // A layer of a network starts with the previous layer's data in the private caches (and
  // weft-bench-conv interleaves oneDNN): convolutions tune cold unless asked otherwise.
  given.caches = "cold";
  add_request_options(app, given);
  cli::parse(app, argc, argv, 2);
  for (const char* required : {"--N", "--H", "--W", "--C", "--K", "--R", "--S"})
    if (!cli::given(app, required)) throw CliError(std::string("conv needs ") + required);
  // --stride / --pad set both dimensions; the per-dimension options override them.
  for (auto [both, one, value] : {std::tuple{"--stride", "--stride_h", &shape.stride_h}, {"--stride", "--stride_w", &shape.stride_w},
                                  {"--pad", "--pad_h", &shape.pad_h}, {"--pad", "--pad_w", &shape.pad_w}}) {
    if (cli::given(app, both) && cli::given(app, one))
      throw CliError(std::string(both) + " and " + one + " both set the same size: give one of them");
    if (cli::given(app, both)) *value = std::string(both) == "--stride" ? stride : pad;
  }
  const ops::ConvPassKind pass = build_workload([&] { return ops::parse_conv_pass(pass_name); });
  search.dtype = parse_sample_dtype(dtype_name);
  const Request request = make_request(app, given);
  const ops::ConvWorkload workload = build_workload([&] { return ops::ConvWorkload(shape, pass, search); });
  check_request(workload, request,
                "weft-conv-" + pass_name + " accepts none of the --bc / --bk blocks for this shape");
  return run_tuning(workload, request, out, err);
}

}  // namespace weft::samples
