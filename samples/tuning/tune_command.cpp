#include "tune_command.hpp"

#include <string>

#include <weft/cli/run_tool.hpp>

#include "tune_request.hpp"
#include "tune_verbs.hpp"

namespace weft::samples {
namespace {

constexpr const char* kUsage =
    "usage: weft-tune gemm --M M --N N --K K [--pass fwd|bwd|upd] [--layers L] [options]\n"
    "                 [--bm 32,64] [--bn 32,64] [--bk 32,64] [--kbf|--mbf|--nbf 1,2,4]\n"
    "                 [--private-trans 0,1] [--dtype f32|bf16|f64] [--tile-bound]\n"
    "       weft-tune conv --pass fwd|bwd|upd --N N --H H --W W --C C --K K --R R --S S\n"
    "                 [--stride S | --stride_h S --stride_w S] [--pad P | --pad_h P --pad_w P]\n"
    "                 [--bc 32,64] [--bk 32,64] [--dtype f32|bf16] [--tile-bound] [options]\n"
    "       weft-tune contraction --dims m,n,k,m,n,k --sizes 64,25,64,25,64,25 [options]\n"
    "                 [--prim brgemm|gemm] [--first none|zero] [--last none|relu]\n"
    "                 (dense tensors, in0 = [dims with m,k], in1 = [n,k], out = [n,m], row-major)\n"
    "       weft-tune show [--db PATH] [--shipped]\n"
    "       weft-tune strings --spec S [--threads T] [--parallel-reductions] [--run-length N]\n"
    "                 [--no-grids] [--parlooper] [--loop-ends E,.. [--loop-steps S,..] [--block-choices N]]\n"
    "       weft-tune measure --strings FILE [--repeat N] [--timeout S] [--plot FILE] [--rows N]\n"
    "                 [--placeholder {}] -- PROGRAM ARGUMENTS... (one argument or more holding {})\n"
    "gemm: the GEMM samples' passes: fwd (weft-gemm; with --layers L > 1 its MLP, M == K), bwd\n"
    "  (weft-gemm-bwd, chunks --mbf), upd (weft-gemm-upd, chunks --nbf, parallel N loop with\n"
    "  partial filters); --private-trans: transposes per thread (1) or up front (0), bwd and upd;\n"
    "  --dtype bf16: the samples' bf16 (USE_BF16=1), tiles paired for VNNI-2 made even; --dtype f64:\n"
    "  doubles (weft-gemm's FP64)\n"
    "conv: the convolution samples' passes: fwd (weft-conv-fwd; knobs h_in_gemm, w_block, c_block,\n"
    "  pack_input for strided 1x1; blocks of c and d; --dtype bf16: bf16 tensors), bwd (weft-conv-bwd; h_in_gemm, w_block,\n"
    "  k_block; blocks of b and d), upd (weft-conv-upd; h_in_gemm; parallel reductions with partial\n"
    "  filters); the programs' `auto` runs the stored result\n"
    "--tile-bound (gemm, conv): the best with one weight tiling (--bm and --bk; --bc and --bk),\n"
    "  stored under a key carrying those tiles, apart from the free search's best: what weft.torch's\n"
    "  layers ask for when their weight's blocked layout fixes the tiles\n"
    "show: the tuning database's records, marking those of another machine or weft; --shipped: also\n"
    "  those that ship with weft (share/weft/tuning; $WEFT_SHIPPED_TUNING_DIR), which `auto` reads\n"
    "  after the database, marking those of another machine\n"
    "strings: the loop strings of loop specs, one per line (weft's rules, or PARLOOPER's with\n"
    "  --parlooper); --loop-ends adds every choice of block sizes as inline specs (b[,,,(8)])\n"
    "measure: runs PROGRAM once per loop string of FILE ({} replaced by it), reads its MEASURE line\n"
    "  and prints the strings ranked by GFLOPS against the best and the first (the default)\n"
    "tuning options (gemm, conv, contraction):\n"
    "  --threads T      threads (default: OMP_NUM_THREADS or all)\n"
    "  --budget S       seconds for measuring (default 60)\n"
    "  --spec S         loop specs, ';'-separated, e.g. 'a_0_K,b_1_M,c_1_N' (default: the workload's)\n"
    "  --block-choices N  block sizes tried per blocking level (default 6)\n"
    "  --top-k N        candidates the cost model keeps (default: from the budget)\n"
    "  --finalists N    candidates measured thoroughly at the end (default 4)\n"
    "  --imbalance X    prune parallel imbalance above X (default 0.10)\n"
    "  --patience N     stop after N candidates in a row without a 1% gain\n"
    "  --exhaustive     measure every legal candidate (no model cut, no budget)\n"
    "  --plot FILE      write an SVG plot of the run\n"
    "  --rows N         rows of the final table (default 10)\n"
    "  --db PATH        tuning database (default $WEFT_TUNING_DB or ~/.cache/weft/tuning.jsonl)\n"
    "  --no-save        do not store the result\n"
    "  --caches warm|cold  runs back to back (warm), or each after writes that evict the L2s and\n"
    "                   up to 64 MiB of L3 (cold: a network's layer); default warm, conv cold\n"
    "  --dry-run        print the search space and the model's top candidates, measure nothing\n"
    "exit status: 0 success, 1 run-time failure, 2 bad usage\n";

constexpr const char* kCommands = "gemm, conv, contraction, show, strings or measure";

int tune_command(int argc, char** argv, std::FILE* out, std::FILE* err) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "gemm") return gemm_verb(argc, argv, out, err);
  if (command == "conv") return conv_verb(argc, argv, out, err);
  if (command == "contraction") return contraction_verb(argc, argv, out, err);
  if (command == "show") return show_verb(argc, argv, out);
  if (command == "strings") return strings_verb(argc, argv, out, err);
  if (command == "measure") return measure_verb(argc, argv, out, err);
  if (command == "--help" || command == "-h" || command == "help") throw CLI::CallForHelp();
  throw CliError(command.empty() ? std::string("missing command (") + kCommands + ")"
                                 : "unknown command '" + command + "' (" + kCommands + ")");
}

}  // namespace

int weft_tune_main(int argc, char** argv, std::FILE* out, std::FILE* err) {
  return cli::run_tool({"weft-tune", kUsage, out, err}, [&] { return tune_command(argc, argv, out, err); });
}

}  // namespace weft::samples
