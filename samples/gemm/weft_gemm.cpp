// weft-gemm: forward GEMM (C = A x B, optional fused bias and ReLU) or an MLP of n layers, on
// ThreadedLoop + BRGEMM, verified against a double-precision reference.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <weft/cli/run_tool.hpp>
#include <weft/jit/cpu.hpp>
#include <weft/jit/error.hpp>

#include "gemm_args.hpp"
#include "gemm_auto.hpp"
#include "gemm_fwd.hpp"
#include "gemm_reference.hpp"

namespace {

using namespace weft::samples;

const weft::cli::Tool kTool{
    "weft-gemm",
    "usage: weft-gemm LOOP_STRING M N K bm bn bk [kbf] [n_layers] [n_iters] [fuse_bias] [fuse_relu]\n"
    "                 [precision] [use_ping_pong_bufs]\n"
    "       weft-gemm auto M N K [n_layers] [n_iters] [fuse_bias] [fuse_relu]\n"
    "                 [--threads T] [--check 0|1] [--warmup W]\n"
    "                 [--k-blocks L] [--m-blocks L] [--n-blocks L]\n"
    "  LOOP_STRING  loop order/blocking/parallelization over a = K blocks, b = M blocks,\n"
    "               c = N blocks (e.g. aBC, bcaBCb; see docs/loop_string.md)\n"
    "  kbf          the K loop is split into kbf batch-reduce chunks (default 1)\n"
    "  n_layers     > 1 runs an MLP (needs M == K, bm == bk); n_iters default 10\n"
    "  precision    PARLOOPER's precision argument: FP32, the only one weft has yet (BF16, F16,\n"
    "               BF8 and INT8 are refused, as is USE_BF16 other than 0 in the environment)\n"
    "  use_ping_pong_bufs  1: the layers of an MLP write two output buffers in turn; 0 (default):\n"
    "               each layer its own, as in PARLOOPER\n"
    "  --x-blocks L block sizes in blocks, outermost first (e.g. 8,2), for the repeated letters\n"
    "               of loop x; default: PARLOOPER's prime-factor rule\n"
    "  auto         loop string, blocks, tiles and kbf from the tuning database (weft-tune gemm;\n"
    "               an MLP: weft-tune gemm --layers L): this shape's best, else the nearest tuned\n"
    "               shape's, else a heuristic\n"};

// [n_layers] [n_iters] [fuse_bias] [fuse_relu] from position `first` on, where both argument lines
// have them. Returns the index of n_iters.
std::size_t read_layers(const SampleArgs& args, GemmFwdConfig& c, std::size_t first) {
  c.n_layers = static_cast<int>(args.integer(first, "n_layers", 1, 1, 1000));
  c.fuse_bias = args.switch_at(first + 2, "fuse_bias");
  c.fuse_relu = args.switch_at(first + 3, "fuse_relu");
  return first + 1;
}

constexpr const char* kForm =
    "LOOP_STRING M N K bm bn bk [kbf] [n_layers] [n_iters] [fuse_bias] [fuse_relu] [precision] "
    "[use_ping_pong_bufs]";

// PARLOOPER's arguments after fuse_relu (its scripts pass "... 0 0 BF16 0"): precision (13),
// use_ping_pong_bufs (14) and sparse_frac (15). Returns whether the MLP writes a ring of two
// output buffers.
bool parse_parlooper_tail(const SampleArgs& args) {
  const std::vector<std::string>& positional = args.positional();
  if (positional.size() > 14) {
    throw weft::Error("sparse_frac (argument 15, '" + positional[14] +
                "'): PARLOOPER ran a sparse A through decompressing kernels here, which weft-gemm does "
                "not have; nothing was run. Drop the argument for a dense GEMM");
  }
  if (positional.size() > 12) {
    const std::string& precision = positional[12];
    if (precision == "BF16" || precision == "F16" || precision == "BF8" || precision == "INT8") {
      throw weft::Error("precision (argument 13): " + precision +
                  " is not supported yet, weft-gemm computes in FP32 only; nothing was run (an FP32 "
                  "result would be reported under the same MEASURE tag). Pass FP32");
    }
    if (precision != "FP32") {
      throw UsageError("precision (argument 13): '" + precision +
                       "' is none of PARLOOPER's FP32, BF16, F16, BF8, INT8");
    }
  }
  return args.switch_at(13, "use_ping_pong_bufs");
}

// Fills `c` from the command line; returns the index of n_iters among the positional arguments.
std::size_t config_from(SampleArgs& args, GemmFwdConfig& c, int argc, char** argv) {
  parse_gemm_arguments(args, c, argc, argv, 15, kForm);
  // auto M N K [n_layers] ...: the positions after K shift, since the tuner picks the tiles.
  if (parse_auto_shape(args, c, 8, "auto M N K [n_layers] [n_iters] [fuse_bias] [fuse_relu]"))
    return read_layers(args, c, 4);
  c.kbf = args.integer(7, "kbf", 1);
  return read_layers(args, c, 8);
}

// What run() allocates, for the memory check before any of it is.
std::uint64_t memory_needed(const GemmFwd& gemm, bool ring_buffer, bool check) {
  const GemmFwdConfig& c = gemm.config();
  const Blocking mB = gemm.m_blocking(), nB = gemm.n_blocking(), kB = gemm.k_blocking();
  const std::int64_t layers = c.n_layers;
  const std::int64_t outputs = ring_buffer ? std::min<std::int64_t>(layers, 2) : layers;
  MemoryTally memory;
  memory.add_floats({c.M, c.K});                                                  // A
  memory.add_floats({c.K, c.N});                                                  // B
  memory.add_floats({mB.blocks(), mB.block});                                     // bias
  memory.add_floats({layers + 1, mB.blocks(), mB.block, kB.blocks(), kB.block});  // blocked A, one per layer
  memory.add_floats({kB.blocks(), kB.block, nB.blocks(), nB.block});              // blocked B
  memory.add_floats({outputs, nB.blocks(), nB.block, mB.blocks(), mB.block});     // blocked outputs
  if (check) {
    memory.add_floats({c.M, c.N});  // the result, unblocked
    memory.add_floats({c.K, c.N});  // the reference's input
    memory.add_floats({c.M, c.N});  // the reference's output
  }
  return memory.bytes();
}

// Allocates, runs, times and checks; every allocation happens in here.
int run_allocated(const GemmFwd& gemm, bool ring_buffer, const RunSettings& settings) {
  const GemmFwdConfig& config = gemm.config();
  const Blocking mB = gemm.m_blocking(), nB = gemm.n_blocking(), kB = gemm.k_blocking();
  const std::int64_t M = config.M, N = config.N, K = config.K;
  std::vector<float> a(static_cast<std::size_t>(M * K)), b(static_cast<std::size_t>(K * N));
  std::vector<float> bias(static_cast<std::size_t>(mB.blocks() * mB.block), 0.0f);
  fill_random(a.data(), M * K, 1);
  fill_random(b.data(), K * N, 2);
  fill_random(bias.data(), M, 3);
  const std::vector<float> weight = to_blocked(a.data(), mB, kB, true);
  std::vector<std::vector<float>> weights(static_cast<std::size_t>(config.n_layers), weight);
  std::vector<float> input = to_blocked(b.data(), kB, nB, false);
  // The input stays intact so every iteration computes the same thing; layer l writes output l,
  // or output l mod 2 with use_ping_pong_bufs. Zeroed: an MLP layer reads the previous output's
  // padding rows as K padding.
  const auto out_size = static_cast<std::size_t>(nB.blocks() * nB.block * mB.blocks() * mB.block);
  const int n_outputs = ring_buffer ? std::min(config.n_layers, 2) : config.n_layers;
  std::vector<std::vector<float>> outputs(static_cast<std::size_t>(n_outputs), std::vector<float>(out_size, 0.0f));
  std::vector<float*> acts{input.data()};
  std::vector<const float*> wts, biases;
  for (int l = 0; l < config.n_layers; ++l) {
    acts.push_back(outputs[static_cast<std::size_t>(l % n_outputs)].data());
    wts.push_back(weights[static_cast<std::size_t>(l)].data());
    biases.push_back(bias.data());
  }

  std::printf("%s, kbf %lld (%lld K blocks per batch reduce), layers %d (%d output buffer%s), bias %d, relu %d, "
              "threads %d, isa %s\n",
              gemm_header("weft-gemm", config).c_str(), (long long)config.kbf, (long long)gemm.k_step(),
              config.n_layers, n_outputs, n_outputs == 1 ? "" : "s", config.fuse_bias, config.fuse_relu,
              settings.threads, std::string(weft::jit::to_string(weft::jit::selected_isa())).c_str());

  const auto verify = [&] {
    std::vector<float> out(static_cast<std::size_t>(M * N)), ref_in = b, ref_out(out.size());
    from_blocked(acts.back(), out.data(), mB, nB, false);
    for (int l = 0; l < config.n_layers; ++l) {
      gemm_reference(M, N, K, a.data(), ref_in.data(), config.fuse_bias ? bias.data() : nullptr,
                     config.fuse_relu, ref_out.data());
      ref_in.swap(ref_out);
    }
    return Verdict{compare(out.data(), ref_in.data(), M * N), sum_tolerance(K) * config.n_layers};
  };
  return measure_and_report(settings, {.run = [&] { gemm.run(acts, wts, biases); },
                                       .flops = gemm.flops(),
                                       .measure_tag = gemm.measure_tag(settings.threads),
                                       .verify = verify});
}

int run(int argc, char** argv) {
  GemmFwdConfig config;
  SampleArgs args;
  const std::size_t n_iters_index = config_from(args, config, argc, argv);
  const bool ring_buffer = config.loop_string != "auto" && parse_parlooper_tail(args);
  const RunSettings settings = args.run_settings(n_iters_index);
  resolve_gemm_auto(config, settings.threads, "weft-gemm");

  const GemmFwd gemm(config);  // validates everything before memory is allocated
  const std::string layers = config.n_layers > 1 ? ", " + std::to_string(config.n_layers) + " layers" : "";
  return run_within_memory(gemm_buffers("weft-gemm", config, layers, "A, B, C, their blocked copies", settings.check),
                           memory_needed(gemm, ring_buffer, settings.check),
                           [&] { return run_allocated(gemm, ring_buffer, settings); });
}

}  // namespace

int main(int argc, char** argv) { return weft::cli::run_tool(kTool, [&] { return run(argc, argv); }); }
