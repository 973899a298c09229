// weft-tune gemm: the GEMM samples' passes (gemm_workload.hpp), each under its own workload kind.
#include <array>
#include <string>
#include <vector>

#include <weft/cli/command_line.hpp>
#include <weft/ops/gemm_workload.hpp>

#include "tune_request.hpp"
#include "tune_verbs.hpp"

namespace weft::samples {
namespace {

using weft::ops::GemmPassKind;

// GEMM tile sizes: beyond this a tile exceeds any cache many times over, and its padded blocked
// copies would dwarf the matrices.
constexpr long kMaxTile = 1 << 16;

// Per pass, in GemmPassKind's order: the option that splits its reduction, and the dimension and
// tile that reduction runs over.
struct ChunkOption {
  GemmPassKind pass;
  const char* option;
  const char* dimension;
  const char* tile;
};
constexpr std::array<ChunkOption, 3> kChunkOptions{{{GemmPassKind::fwd, "--kbf", "K", "--bk"},
                                                    {GemmPassKind::bwd, "--mbf", "M", "--bm"},
                                                    {GemmPassKind::upd, "--nbf", "N", "--bn"}}};
static_assert(kChunkOptions[0].pass == GemmPassKind::fwd && kChunkOptions[1].pass == GemmPassKind::bwd &&
              kChunkOptions[2].pass == GemmPassKind::upd);

}  // namespace

int gemm_verb(int argc, char** argv, std::FILE* out, std::FILE* err) {
  CLI::App app;
  RequestOptions given;
  std::int64_t M = 0, N = 0, K = 0, layers = 1;
  std::string pass_name = "fwd";
  ops::GemmSearchOptions search;
  std::array<std::vector<long>, 3> chunks;
  for (auto [name, size] : {std::pair{"--M", &M}, {"--N", &N}, {"--K", &K}})
    cli::add_integer(app, name, *size, 1, 1 << 20, "GEMM size");
  cli::add_text(app, "--pass", pass_name, "fwd, bwd or upd");
  cli::add_integer(app, "--layers", layers, 1, 1000, "layers of a forward MLP");
  std::string dtype_name;
  add_sample_dtype_option(app, dtype_name, "bf16 operands, VNNI-2 weights, fp32 accumulation", true);
  for (auto [name, list] : {std::pair{"--bm", &search.bm}, {"--bn", &search.bn}, {"--bk", &search.bk}})
    cli::add_integer_list(app, name, *list, 1, kMaxTile, "tile sizes to try");
  for (std::size_t i = 0; i < kChunkOptions.size(); ++i)
    cli::add_integer_list(app, kChunkOptions[i].option, chunks[i], 1, kMaxTile, "batch-reduce chunks to try");
  cli::add_integer_list(app, "--private-trans", search.private_trans, 0, 1, "transposes per thread (1) or up front (0)");
  cli::add_flag(app, "--tile-bound", search.tile_bound,
                "store the best with the one --bm and --bk given, apart from the free search's best");
  add_request_options(app, given);
  cli::parse(app, argc, argv, 2);
  for (const char* required : {"--M", "--N", "--K"})
    if (!cli::given(app, required)) throw CliError(std::string("gemm needs ") + required);
  const GemmPassKind pass = build_workload([&] { return ops::parse_gemm_pass(pass_name); });
  search.dtype = parse_sample_dtype(dtype_name, true);
  if (!cli::given(app, "--bn")) search.bn = ops::default_gemm_search(search.dtype).bn;
  const ChunkOption& own = kChunkOptions[static_cast<std::size_t>(pass)];
  for (std::size_t i = 0; i < kChunkOptions.size(); ++i) {
    const ChunkOption& c = kChunkOptions[i];
    if (!cli::given(app, c.option)) continue;
    if (&c == &own) {
      search.chunks = chunks[i];
    } else {
      throw CliError(std::string(c.option) + " splits the " + c.dimension + " loop of --pass " +
                     std::string(ops::to_string(c.pass)) + "; --pass " + pass_name + " takes " + own.option);
    }
  }
  if (pass == GemmPassKind::fwd && cli::given(app, "--private-trans"))
    throw CliError("--private-trans is for --pass bwd and upd: the forward pass transposes nothing");
  if (layers > 1 && pass != GemmPassKind::fwd)
    throw CliError("--layers runs a forward MLP: it needs --pass fwd, not " + pass_name);
  if (layers > 1 && cli::given(app, "--bk"))
    throw CliError("--bk has no effect with --layers: an MLP feeds each output into the next layer, so bk = bm");
  const Request request = make_request(app, given);
  const ops::GemmWorkload workload =
      build_workload([&] { return ops::GemmWorkload({M, N, K, static_cast<int>(layers)}, search, pass); });
  const std::int64_t size = pass == GemmPassKind::fwd ? K : pass == GemmPassKind::bwd ? M : N;
  check_request(workload, request,
                std::string("every ") + own.option + " exceeds the number of " + own.dimension + " blocks (" +
                    own.dimension + " = " + std::to_string(size) + " over " + own.tile + ")");
  return run_tuning(workload, request, out, err);
}

}  // namespace weft::samples
