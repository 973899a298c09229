// Einsum trees on arrays: parse the seed notation, run the tree pass (optimize_einsum_tree) and
// execute the nodes (EinsumTreeOperation). Built operations are kept per (tree, sizes, type,
// threads) in a small pool: building one generates its kernels, and an operation's intermediate
// buffers allow one execution at a time, so concurrent callers of the same tree take different
// instances. python/weft/einsum.py turns NumPy's subscripts into such trees.
#include <omp.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "bindings.hpp"
#include "buffers.hpp"
#include "weft/tensor/einsum_tree.hpp"

namespace weft::python {

namespace {

namespace py = pybind11;
using tensor::EinsumNode;
using tensor::EinsumTree;
using tensor::EinsumTreeOperation;

// Ids above this are refused by the parser (with its caret) instead of sizing a huge list.
constexpr int kMaxDimensionId = 4096;

// The parser needs a size per id; the structure alone needs none, so every id gets size 1.
EinsumTree parse_structure(const std::string& text) {
  int largest = 0, value = 0;
  for (char ch : text) {
    value = std::isdigit(static_cast<unsigned char>(ch)) ? std::min(value * 10 + (ch - '0'), kMaxDimensionId) : 0;
    largest = std::max(largest, value);
  }
  return tensor::parse_einsum_tree(text, std::vector<std::int64_t>(static_cast<std::size_t>(largest) + 1, 1));
}

// The ids of every leaf, in input order, and of the root.
std::pair<std::vector<std::vector<int>>, std::vector<int>> tree_signature(const std::string& text) {
  const EinsumTree tree = parse_structure(text);
  std::vector<std::vector<int>> leaves(static_cast<std::size_t>(tree.num_inputs()));
  for (const EinsumNode& node : tree.nodes) {
    if (node.kind == EinsumNode::Kind::leaf) leaves[static_cast<std::size_t>(node.input)] = node.ids;
  }
  return {leaves, tree.nodes[static_cast<std::size_t>(tree.root)].ids};
}

using OperationKey = std::tuple<std::string, std::vector<std::int64_t>, tensor::dtype_t, int>;

class OperationPool {
 public:
  std::unique_ptr<EinsumTreeOperation> take(const OperationKey& key) {
    {
      std::lock_guard lock(mutex_);
      auto it = idle_.find(key);
      if (it != idle_.end() && !it->second.empty()) {
        auto op = std::move(it->second.back());
        it->second.pop_back();
        return op;
      }
    }
    const auto& [text, sizes, dtype, threads] = key;
    EinsumTree tree = tensor::parse_einsum_tree(text, sizes);
    tensor::optimize_einsum_tree(tree);
    return std::make_unique<EinsumTreeOperation>(tree, tensor::EinsumOptions{.dtype = dtype, .threads = threads});
  }

  // Kept for the next call unless the pool is full (then the oldest trees' instances go first).
  void give_back(const OperationKey& key, std::unique_ptr<EinsumTreeOperation> op) {
    std::lock_guard lock(mutex_);
    if (idle_.size() >= kMaxTrees && !idle_.contains(key)) idle_.erase(idle_.begin());
    auto& instances = idle_[key];
    if (instances.size() < kMaxInstancesPerTree) instances.push_back(std::move(op));
  }

 private:
  static constexpr std::size_t kMaxTrees = 64;
  static constexpr std::size_t kMaxInstancesPerTree = 4;
  std::mutex mutex_;
  std::map<OperationKey, std::vector<std::unique_ptr<EinsumTreeOperation>>> idle_;
};

OperationPool& pool() {
  static OperationPool instance;  // never destroyed before the interpreter's last call
  return instance;
}

std::vector<std::int64_t> shape_of(const std::vector<int>& ids, const std::vector<std::int64_t>& sizes) {
  std::vector<std::int64_t> shape;
  for (int id : ids) shape.push_back(sizes[static_cast<std::size_t>(id)]);
  return shape;
}

// operands[i] is leaf i; sizes[id] the extent of dimension id (python/weft/einsum.py reads them
// off the operands' shapes and checks that they agree).
void run_einsum_tree(const std::string& text, const std::vector<std::int64_t>& sizes, const py::sequence& operands,
                     py::handle out_obj) {
  const auto [leaves, root] = tree_signature(text);
  if (operands.size() != leaves.size()) {
    throw_value_error("the tree has " + std::to_string(leaves.size()) + " leaves, but " +
                      std::to_string(operands.size()) + " operands were given");
  }
  for (const auto& ids : leaves) {
    for (int id : ids) {
      if (static_cast<std::size_t>(id) >= sizes.size()) throw_value_error("no size for dimension " + std::to_string(id));
    }
  }
  std::vector<ArrayView> inputs;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const std::string name = "operands[" + std::to_string(i) + "]";
    inputs.push_back(view_array(operands[i], name, Access::read, Uint16As::error));
    if (inputs[i].dtype != inputs[0].dtype) throw_type_error("argument '" + name + "' holds another type than 'operands[0]'");
    if (inputs[i].shape != shape_of(leaves[i], sizes)) {
      throw_value_error("argument '" + name + "' has shape " + shape_text(inputs[i].shape) + ", the tree's leaf " +
                        std::to_string(i) + " has " + shape_text(shape_of(leaves[i], sizes)));
    }
  }
  const ArrayView out = view_array(out_obj, "out", Access::write, Uint16As::error);
  if (!inputs.empty() && out.dtype != inputs[0].dtype) throw_type_error("argument 'out' holds another type than the operands");
  if (out.shape != shape_of(root, sizes)) {
    throw_value_error("argument 'out' has shape " + shape_text(out.shape) + ", the tree's root has " +
                      shape_text(shape_of(root, sizes)));
  }
  if (out.dtype == jit::DataType::bf16) throw_type_error("einsum trees run in float32 and float64, not bfloat16");
  const tensor::dtype_t dtype = out.dtype == jit::DataType::f64 ? tensor::dtype_t::fp64 : tensor::dtype_t::fp32;
  const OperationKey key{text, sizes, dtype, requested_threads()};

  // An out= that shares memory with an operand (out=x of a transpose) is computed into scratch and
  // copied: the tree would read what it already wrote.
  const bool aliased = std::any_of(inputs.begin(), inputs.end(), [&](const ArrayView& v) { return overlap(v, out); });
  std::vector<std::byte> scratch(aliased ? out.bytes() : 0);
  void* const result = aliased ? scratch.data() : out.data;

  py::gil_scoped_release release;
  std::unique_ptr<EinsumTreeOperation> op = pool().take(key);
  if (dtype == tensor::dtype_t::fp64) {
    std::vector<const double*> pointers;
    for (const ArrayView& v : inputs) pointers.push_back(static_cast<const double*>(v.data));
    op->execute(pointers, static_cast<double*>(result));
  } else {
    std::vector<const float*> pointers;
    for (const ArrayView& v : inputs) pointers.push_back(static_cast<const float*>(v.data));
    op->execute(pointers, static_cast<float*>(result));
  }
  pool().give_back(key, std::move(op));
  if (aliased) std::memcpy(out.data, scratch.data(), scratch.size());
}

}  // namespace

void bind_einsum(py::module_& m) {
  m.def("einsum_tree_signature", &tree_signature, py::arg("tree"),
        "The dimension ids of every leaf (in input order) and of the root of a tree in the seed notation.");
  m.def("run_einsum_tree", &run_einsum_tree, py::arg("tree"), py::arg("sizes"), py::arg("operands"), py::arg("out"));
}

}  // namespace weft::python
