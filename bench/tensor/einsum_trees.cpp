// The seed documents' three einsum trees (their optimization section: two trees that need the
// tree pass, the first two of the lowering section in another form, and a third one), each with and
// without weft's tree pass, on 1 and 2 threads. Counter "GFLOPS" = 2 * multiply-adds of all
// contraction nodes / time (permutations count as overhead). NumPy's einsum(optimize=True) on the
// same trees: bench/tensor/einsum_peers.py.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <random>
#include <vector>

#include "weft/tensor/einsum_tree.hpp"

namespace {

using weft::tensor::EinsumNode;
using weft::tensor::EinsumTree;
using weft::tensor::EinsumTreeOperation;

struct SeedTree {
  const char* text;
  std::vector<std::int64_t> sizes;
};

const SeedTree kTrees[] = {
    {"[[7,3,8],[8,4]->[7,3,4]],[[0,5],[[5,1,6],[6,2,7]->[5,1,2,7]]->[0,1,2,7]]->[0,1,2,3,4]",
     {100, 72, 128, 128, 3, 71, 305, 32, 3}},
    {"[1,4,7,8],[[0,4,5,6],[[2,5,7,9],[3,6,8,9]->[2,5,7,3,6,8]]->[0,4,2,7,3,8]]->[0,1,2,3]",
     {60, 60, 20, 20, 8, 8, 8, 8, 8, 8}},
    {"[[2,7,3],[3,8,4]->[2,7,8,4]],[[4,9,0],[[0,5,1],[1,6,2]->[0,5,6,2]]->[4,9,5,6,2]]->[5,6,7,8,9]",
     {40, 40, 40, 40, 40, 25, 25, 25, 25, 25}},
};

void BM_EinsumTree(benchmark::State& state) {
  const SeedTree& seed = kTrees[state.range(0)];
  const bool tree_pass = state.range(1) != 0;
  const int threads = static_cast<int>(state.range(2));
  omp_set_num_threads(threads);
  const EinsumTree parsed = weft::tensor::parse_einsum_tree(seed.text, seed.sizes);
  EinsumTree tree = parsed;
  if (tree_pass) weft::tensor::optimize_einsum_tree(tree);
  EinsumTreeOperation op(tree, {.threads = threads});
  std::vector<std::vector<float>> inputs(static_cast<std::size_t>(parsed.num_inputs()));
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (std::size_t i = 0; i < parsed.nodes.size(); ++i) {
    const EinsumNode& n = parsed.nodes[i];
    if (n.kind != EinsumNode::Kind::leaf) continue;
    auto& in = inputs[static_cast<std::size_t>(n.input)];
    in.resize(static_cast<std::size_t>(parsed.elements(static_cast<int>(i))));
    for (float& x : in) x = d(gen);
  }
  std::vector<const float*> pointers;
  for (const auto& in : inputs) pointers.push_back(in.data());
  std::vector<float> out(static_cast<std::size_t>(parsed.elements(parsed.root)));
  // One untimed run: the first touches the intermediate buffers' pages (page faults) and, on one
  // thread, a tree runs only one or two timed iterations, so it would count them (tree 3 measured
  // 59 instead of 123 GFLOPS).
  op.execute(pointers, out.data());
  for (auto _ : state) {
    op.execute(pointers, out.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPS"] = benchmark::Counter(
      parsed.flops() * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EinsumTree)
    ->ArgNames({"tree", "pass", "threads"})
    ->ArgsProduct({{0, 1, 2}, {0, 1}, {1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
