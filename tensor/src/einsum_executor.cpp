// Execution of an einsum tree: every interior node becomes one lowered TensorOperation (a
// contraction with zero first touch, or a copy for a permutation) over row-major tensors, run in
// post order; intermediate results live in buffers owned by the operation.
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "weft/tensor/einsum_tree.hpp"
#include "weft/tensor/lowering.hpp"
#include "weft/tensor/passes.hpp"

namespace weft::tensor {

namespace {

using Kind = EinsumNode::Kind;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<void, FreeDeleter>;

// Bytes of a node's buffer: its elements, rounded up to whole cache lines for aligned_alloc.
std::uint64_t buffer_bytes(const EinsumTree& tree, int node, dtype_t dtype) {
  return weft::add_bytes(weft::bytes_needed({tree.elements(node)}, element_size(dtype)), 63) / 64 * 64;
}

Buffer allocate(const std::string& what, std::uint64_t bytes) {
  void* p = std::aligned_alloc(64, static_cast<std::size_t>(bytes));
  if (p == nullptr) throw weft::MemoryError(what, bytes, weft::MemoryError::Reason::allocation_failed);
  return Buffer(p);
}

// Row-major strides of a tensor: stride of `id` in `ids`, 0 when absent.
std::int64_t stride_of(const EinsumTree& t, const std::vector<int>& ids, int id) {
  auto it = std::find(ids.begin(), ids.end(), id);
  if (it == ids.end()) return 0;
  std::int64_t s = 1;
  for (auto after = it + 1; after != ids.end(); ++after) s *= t.dim_sizes[static_cast<std::size_t>(*after)];
  return s;
}

Contraction node_operation(const EinsumTree& t, const EinsumNode& n, dtype_t dtype) {
  Contraction op;
  op.dtype = dtype;
  const auto& l = t.nodes[static_cast<std::size_t>(n.left)].ids;
  const auto dim = [&](int id, dim_t type, const std::vector<int>* right) {
    return Dim{type, exec_t::seq, t.dim_sizes[static_cast<std::size_t>(id)], stride_of(t, l, id),
               right ? stride_of(t, *right, id) : 0, stride_of(t, n.ids, id)};
  };
  if (n.kind == Kind::permutation) {
    op.main = prim_t::copy;
    for (int id : n.ids) op.dims.push_back(dim(id, dim_t::c, nullptr));
    return op;
  }
  const auto& r = t.nodes[static_cast<std::size_t>(n.right)].ids;
  const auto has = [](const std::vector<int>& v, int id) { return std::find(v.begin(), v.end(), id) != v.end(); };
  op.first_touch = prim_t::zero;
  op.main = prim_t::gemm;
  for (int id : n.ids) {
    const dim_t type = has(l, id) && has(r, id) ? dim_t::c : has(l, id) ? dim_t::m : dim_t::n;
    op.dims.push_back(dim(id, type, &r));
  }
  for (int id : l)
    if (has(r, id) && !has(n.ids, id)) op.dims.push_back(dim(id, dim_t::k, &r));
  return op;
}

}  // namespace

struct EinsumTreeOperation::State {
  EinsumTree tree;
  dtype_t dtype = dtype_t::fp32;
  struct Step {
    int node;
    LoweredOperation op;
  };
  std::vector<Step> steps;              // post order: children before parents
  std::vector<Buffer> buffers;          // per node (interior, non-root)
};

EinsumTreeOperation::EinsumTreeOperation(const EinsumTree& tree, const EinsumOptions& options)
    : state_(std::make_unique<State>()) {
  validate(tree);
  if (element_size(options.dtype) == 0)
    throw weft::Error("einsum tree: EinsumOptions::dtype is " + to_string(options.dtype) +
                      ", which is no data type weft knows (fp32 = 0, fp64 = 1)");
  State& s = *state_;
  s.tree = tree;
  s.dtype = options.dtype;
  s.buffers.resize(tree.nodes.size());
  // Every intermediate tensor lives for the whole operation: refuse before building anything.
  std::uint64_t total = 0;
  for (int i = 0; i < static_cast<int>(tree.nodes.size()); ++i)
    if (i != tree.root && tree.nodes[static_cast<std::size_t>(i)].kind != Kind::leaf)
      total = weft::add_bytes(total, buffer_bytes(tree, i, options.dtype));
  weft::require_memory("einsum tree: the intermediate tensor storage", total);
  const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  auto visit = [&](auto&& self, int index) -> void {
    const EinsumNode& n = s.tree.nodes[static_cast<std::size_t>(index)];
    if (n.kind == Kind::leaf) return;
    self(self, n.left);
    if (n.kind == Kind::contraction) self(self, n.right);
    Contraction op = node_operation(s.tree, n, s.dtype);
    const ValidationOptions v{.allow_generic_primitives = options.allow_generic_primitives};
    if (options.optimize_nodes) {
      OptimizeOptions o;
      o.threads = threads;
      o.allow_generic_primitives = options.allow_generic_primitives;
      optimize(op, o);
    } else {
      identify_primitives(op, {.allow_generic_primitives = options.allow_generic_primitives});
    }
    s.steps.push_back({index, LoweredOperation(op, nullptr, v)});
    if (index != s.tree.root)
      s.buffers[static_cast<std::size_t>(index)] =
          allocate("einsum tree: the tensor of node " + std::to_string(index), buffer_bytes(s.tree, index, s.dtype));
  };
  if (s.tree.nodes[static_cast<std::size_t>(s.tree.root)].kind == Kind::leaf)
    throw weft::Error("einsum tree: the tree is a single tensor; there is nothing to compute");
  visit(visit, s.tree.root);
}

EinsumTreeOperation::~EinsumTreeOperation() = default;
EinsumTreeOperation::EinsumTreeOperation(EinsumTreeOperation&&) noexcept = default;
EinsumTreeOperation& EinsumTreeOperation::operator=(EinsumTreeOperation&&) noexcept = default;

void EinsumTreeOperation::execute(std::span<const float* const> inputs, float* output) const {
  const std::vector<const void*> untyped(inputs.begin(), inputs.end());
  execute_typed(dtype_t::fp32, untyped, output);
}

void EinsumTreeOperation::execute(std::span<const double* const> inputs, double* output) const {
  const std::vector<const void*> untyped(inputs.begin(), inputs.end());
  execute_typed(dtype_t::fp64, untyped, output);
}

void EinsumTreeOperation::execute_typed(dtype_t dtype, std::span<const void* const> inputs, void* output) const {
  const State& s = *state_;
  if (dtype != s.dtype)
    throw weft::Error("einsum tree: the operation was built for " + to_string(s.dtype) + " tensors, execute() got " +
                      (dtype == dtype_t::fp32 ? "float (fp32)" : "double (fp64)") + " ones");
  if (inputs.size() != static_cast<std::size_t>(s.tree.num_inputs()))
    throw weft::Error("einsum tree: " + std::to_string(inputs.size()) + " input tensors given, the tree has " +
                      std::to_string(s.tree.num_inputs()) + " leaves");
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] == nullptr) throw weft::Error("einsum tree: input tensor " + std::to_string(i) + " is null");
  if (output == nullptr) throw weft::Error("einsum tree: the output tensor is null");
  const auto data = [&](int index) -> const void* {
    const EinsumNode& n = s.tree.nodes[static_cast<std::size_t>(index)];
    if (n.kind == Kind::leaf) return inputs[static_cast<std::size_t>(n.input)];
    return s.buffers[static_cast<std::size_t>(index)].get();
  };
  for (const auto& step : s.steps) {
    const EinsumNode& n = s.tree.nodes[static_cast<std::size_t>(step.node)];
    void* out = step.node == s.tree.root ? output : s.buffers[static_cast<std::size_t>(step.node)].get();
    step.op.execute(data(n.left), n.kind == Kind::contraction ? data(n.right) : nullptr, out);
  }
}

const EinsumTree& EinsumTreeOperation::tree() const { return state_->tree; }

std::string EinsumTreeOperation::describe() const {
  std::string text = state_->tree.to_string() + '\n';
  for (const auto& step : state_->steps)
    text += "node " + std::to_string(step.node) + ":\n" + step.op.describe();
  return text;
}

}  // namespace weft::tensor
