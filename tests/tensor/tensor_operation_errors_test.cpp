// Every error_t of setup, each with a message naming the problem (and the dimension).
#include "tensor_test_support.hpp"
#include "weft/tensor/einsum_tree.hpp"
#include "weft/tensor/tensor_operation.hpp"

namespace weft::tensor::test {
namespace {

using einsum::backend::TensorOperation;

struct ErrorCase {
  const char* name;
  error_t expected;
  Contraction op;
  const char* in_message;
  TensorOperation::Options options = {};
};

std::vector<ErrorCase> error_cases() {
  const Contraction good = seed_config(prim_t::zero, prim_t::brgemm, prim_t::relu, true);
  std::vector<ErrorCase> cases;
  auto with = [&](auto change) {
    Contraction op = good;
    change(op);
    return op;
  };
  cases.push_back({"dtype value", error_t::err_wrong_dtype, with([](Contraction& o) { o.dtype = static_cast<dtype_t>(2); }), "dtype_t(2)"});
  cases.push_back({"fp64 transcendental", error_t::err_wrong_last_touch_primitive,
                   with([](Contraction& o) { o.dtype = dtype_t::fp64; o.last_touch = prim_t::tanh; }), "no fp64 primitive"});
  cases.push_back({"size0", error_t::err_wrong_dimension, with([](Contraction& o) { o.dims[1].size = 0; }), "dimension 1"});
  cases.push_back({"undefined type", error_t::err_wrong_dimension, with([](Contraction& o) { o.dims[2].type = dim_t::undefined; }), "dimension 2"});
  cases.push_back({"unknown prim", error_t::err_wrong_primitive, with([](Contraction& o) { o.main = static_cast<prim_t>(77); }), "prim_main"});
  cases.push_back({"gemm first touch", error_t::err_wrong_first_touch_primitive, with([](Contraction& o) { o.first_touch = prim_t::gemm; }), "unary"});
  cases.push_back({"none main", error_t::err_wrong_main_primitive, with([](Contraction& o) { o.main = prim_t::none; }), "prim_main"});
  cases.push_back({"add last touch", error_t::err_wrong_last_touch_primitive, with([](Contraction& o) { o.last_touch = prim_t::add; }), "prim_last_touch"});
  cases.push_back({"bad exec", error_t::err_execution_type_not_supported, with([](Contraction& o) { o.dims[0].exec = static_cast<exec_t>(5); }), "dimension 0"});
  cases.push_back({"two prim m", error_t::err_invalid_primitive_configuration, with([](Contraction& o) { o.dims[0].exec = exec_t::prim; }), "prim m"});
  cases.push_back({"m not unit", error_t::err_invalid_strides, with([](Contraction& o) { o.dims[3].stride_in0 = 2; o.dims[5].stride_in0 = 64; o.dims[2].stride_in0 = 2048; o.dims[0].stride_in0 = 16384; }), "dimension 3"});
  cases.push_back({"m indexes in1", error_t::err_invalid_strides, with([](Contraction& o) { o.dims[0].stride_in1 = 4; }), "dimension 0"});
  cases.push_back({"ldc too small", error_t::err_invalid_main_configuration, with([](Contraction& o) { o.dims[4].stride_out = 16; }), "BRGEMM"});
  cases.push_back({"shared run split", error_t::err_invalid_execution_order,
                   with([](Contraction& o) {
                     o.dims[2].exec = exec_t::seq;  // loops m, n, k; k between two shared loops
                     std::swap(o.dims[1], o.dims[2]);
                     o.dims[0].exec = exec_t::shared;
                     o.dims[2].exec = exec_t::shared;
                     o.main = prim_t::gemm;
                   }),
                   "adjacent"});
  cases.push_back({"shared k", error_t::err_k_dimension_must_not_be_shared,
                   with([](Contraction& o) { o.dims[2].exec = exec_t::shared; o.main = prim_t::gemm; }), "dimension 2"});
  {
    ErrorCase c{"override shares k", error_t::err_invalid_loop_override, good, "k loops"};
    c.op.dims[2].exec = exec_t::seq;
    c.op.main = prim_t::gemm;
    c.options.loops.loop_string = "abC";
    cases.push_back(c);
  }
  {
    // A k loop inside the parallel run: the text scan stopped at the first upper-case letter.
    ErrorCase c{"override shares k inside the run", error_t::err_invalid_loop_override, good, "k loops"};
    c.op.dims[2].exec = exec_t::seq;
    c.op.main = prim_t::gemm;
    c.options.loops.loop_string = "ABC";
    cases.push_back(c);
  }
  {
    // schedule(runtime) may be dynamic (libgomp's default): the text scan looked for dynamic and
    // guided only.
    ErrorCase c{"override runtime schedule inside k", error_t::err_invalid_loop_override, good, "static"};
    c.op.dims[2].exec = exec_t::seq;
    c.op.main = prim_t::gemm;
    c.options.loops.loop_string = "cAB@schedule(runtime)";
    cases.push_back(c);
  }
  {
    ErrorCase c{"override bad letter", error_t::err_invalid_loop_override, good, "loop nest"};
    c.options.loops.loop_string = "ab?";
    cases.push_back(c);
  }
  // Touches on an element-wise operation whose output block is not contiguous.
  Contraction strided;
  strided.main = prim_t::copy;
  strided.dims = {Dim{dim_t::c, exec_t::prim, 8, 1, 0, 2}};
  Contraction first = strided, last = strided;
  first.first_touch = prim_t::relu;
  last.last_touch = prim_t::relu;
  strided.dims[0].stride_out = 1;
  strided.dims[0].stride_in0 = 2;
  first.dims[0].stride_in0 = last.dims[0].stride_in0 = 1;
  // first/last: the main copy with out stride 2 fails on strides before the touches unless the
  // main is allowed generic kernels, so allow them and let only the touch complain.
  cases.push_back({"first touch block", error_t::err_invalid_first_touch_configuration, first, "first"});
  cases.back().options.allow_generic_primitives = false;
  cases.push_back({"last touch block", error_t::err_invalid_last_touch_configuration, last, "touch"});
  return cases;
}

TEST(TensorOperationErrors, EveryErrorHasACodeAndAMessage) {
  for (const ErrorCase& c : error_cases()) {
    SCOPED_TRACE(c.name);
    TensorOperation op;
    EXPECT_EQ(op.setup(c.op, c.options), c.expected) << op.error_message();
    EXPECT_NE(op.error_message().find(to_string(c.expected)), std::string::npos) << op.error_message();
    EXPECT_NE(op.error_message().find(c.in_message), std::string::npos) << op.error_message();
    EXPECT_THROW(op.execute(nullptr, nullptr, nullptr), weft::Error);
  }
}

TEST(TensorOperationErrors, SpanLengthsMustAgree) {
  using dt = TensorOperation::dim_t;
  using ex = TensorOperation::exec_t;
  const std::vector<dt> dims{dt::m, dt::n, dt::k};
  const std::vector<ex> exec{ex::prim, ex::prim};
  const std::vector<int64_t> sizes{4, 4, 4}, s0{1, 0, 4}, s1{0, 4, 1}, so{1, 4, 0};
  TensorOperation op;
  EXPECT_EQ(op.setup(TensorOperation::dtype_t::fp32, TensorOperation::prim_t::none,
                     TensorOperation::prim_t::gemm, TensorOperation::prim_t::none, dims, exec,
                     sizes, s0, s1, so),
            TensorOperation::error_t::err_wrong_dimension);
  EXPECT_NE(op.error_message().find("exec_types has 2 entries"), std::string::npos);
}

// fuzz/corpus/tensor_operation/ubsan-batch-span-overflow.txt: batch_span_bytes multiplied size x
// stride x element bytes in int64 (4 x (2^63 - 1) x 4), undefined behaviour found by UBSan.
TEST(TensorOperationErrors, ByteSpansBeyondInt64AreRejected) {
  using T = TensorOperation;
  const auto dims = [](std::initializer_list<int> v) {
    std::vector<T::dim_t> out;
    for (int x : v) out.push_back(static_cast<T::dim_t>(x));
    return out;
  };
  const std::vector<T::dim_t> types = dims({3, 1, 2, 3});
  std::vector<T::exec_t> exec;
  for (int x : {0, 1, 1, 1}) exec.push_back(static_cast<T::exec_t>(x));
  const std::vector<int64_t> sizes{4, 10, 6, 11}, s0{INT64_MAX, 1, 0, 40}, s1{66, 0, 11, 1}, so{0, 1, 10, 0};
  for (const bool optimized : {false, true}) {
    SCOPED_TRACE(optimized ? "setup_optimized" : "setup");
    T op;
    const auto setup = optimized ? &T::setup_optimized : static_cast<decltype(&T::setup_optimized)>(&T::setup);
    EXPECT_EQ((op.*setup)(T::dtype_t::fp32, static_cast<T::prim_t>(99), static_cast<T::prim_t>(3),
                          static_cast<T::prim_t>(99), types, exec, sizes, s0, s1, so),
              T::error_t::err_invalid_strides);
    EXPECT_NE(op.error_message().find("the byte span of in0"), std::string::npos) << op.error_message();
    EXPECT_NE(op.error_message().find("dimension 0 (k, size 4) with stride 9223372036854775807: 4 x "
                                      "9223372036854775807 is beyond the limit 9223372036854775807"),
              std::string::npos)
        << op.error_message();
  }
  // The sum over the dims overflows too, where no single product does.
  Contraction sum = seed_config(prim_t::none, prim_t::gemm, prim_t::none, false);
  sum.dtype = dtype_t::fp64;
  sum.dims[0].stride_out = INT64_MAX / 8 / sum.dims[0].size;
  T op;
  EXPECT_EQ(op.setup(sum, {}), error_t::err_invalid_strides);
  EXPECT_NE(op.error_message().find("the byte span of out (size x stride x 8 bytes"), std::string::npos)
      << op.error_message();
  EXPECT_NE(op.error_message().find(" + "), std::string::npos) << op.error_message();
}

// fuzz/corpus/tensor_operation/ubsan-brgemm-plan-m-int-max.txt had a prim m of 2^31 - 1 rows reach
// plan_brgemm, which rounds m up to whole vectors in int. The descriptor's checks come first: there
// lda < m; with a BRGEMM layout, A's span (lda x k x 4 bytes) beyond 2^31 - 1, named with its limit.
TEST(TensorOperationErrors, APrimDimBeyondWhatOneTppCallSpansIsRejected) {
  using T = TensorOperation;
  const std::vector<T::dim_t> types{T::dim_t::m, T::dim_t::n, T::dim_t::k};
  const std::vector<T::exec_t> exec{T::exec_t::prim, T::exec_t::prim, T::exec_t::prim};
  const std::vector<int64_t> sizes{2147483647, 7, 14}, s1{0, 14, 1};
  for (const int64_t lda : {int64_t{11}, int64_t{2147483647}}) {
    SCOPED_TRACE(lda);
    const std::vector<int64_t> s0{1, 0, lda}, so{1, lda, 0};
    T op;
    EXPECT_EQ(op.setup(T::dtype_t::fp32, T::prim_t::none, T::prim_t::gemm, T::prim_t::none, types, exec, sizes, s0,
                       s1, so),
              T::error_t::err_invalid_main_configuration);
    EXPECT_NE(op.error_message().find(lda == 11 ? "lda must be >= m"
                                                : "the bytes A spans (lda x k x element bytes): 2147483647 x 14 is "
                                                  "beyond the limit 2147483647 (2^31 - 1)"),
              std::string::npos)
        << op.error_message();
  }
}

TEST(TensorOperationErrors, SuccessAfterFailureClearsTheMessage) {
  TensorOperation op;
  Contraction bad = seed_config(prim_t::none, prim_t::gemm, prim_t::none, false);
  bad.dtype = static_cast<dtype_t>(3);
  EXPECT_NE(op.setup(bad, {}), error_t::success);
  EXPECT_EQ(op.setup(seed_config(prim_t::none, prim_t::gemm, prim_t::none, false), {}), error_t::success);
  EXPECT_TRUE(op.error_message().empty());
}

TEST(TensorOperationErrors, EnumValuesOutsideTheirEnumsAreRejected) {
  const Contraction good = seed_config(prim_t::zero, prim_t::brgemm, prim_t::relu, true);
  struct Case {
    const char* name;
    error_t expected;
    void (*change)(Contraction&);
    const char* says;
  };
  const Case cases[] = {
      {"dtype 7", error_t::err_wrong_dtype, [](Contraction& o) { o.dtype = static_cast<dtype_t>(7); }, "dtype_t(7)"},
      {"dim type 5", error_t::err_wrong_dimension, [](Contraction& o) { o.dims[1].type = static_cast<dim_t>(5); },
       "dimension 1 has type dim_t(5)"},
      {"exec 3", error_t::err_execution_type_not_supported, [](Contraction& o) { o.dims[0].exec = static_cast<exec_t>(3); },
       "exec_t(3)"},
      {"first touch 5", error_t::err_wrong_primitive, [](Contraction& o) { o.first_touch = static_cast<prim_t>(5); },
       "prim_first_touch is prim_t(5)"},
      {"last touch 17", error_t::err_wrong_primitive, [](Contraction& o) { o.last_touch = static_cast<prim_t>(17); },
       "prim_last_touch is prim_t(17)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Contraction op = good;
    c.change(op);
    for (bool optimize : {false, true}) {
      TensorOperation t;
      TensorOperation::Options options;
      options.optimize = optimize;
      EXPECT_EQ(t.setup(op, options), c.expected) << t.error_message();
      EXPECT_NE(t.error_message().find(c.says), std::string::npos) << t.error_message();
    }
  }
}

TEST(TensorOperationErrors, ExecuteRejectsNullTensors) {
  const Contraction op = seed_config(prim_t::zero, prim_t::brgemm, prim_t::relu, true);
  TensorOperation t;
  ASSERT_EQ(t.setup(op, {}), error_t::success) << t.error_message();
  Tensors x = make_tensors(op, 5);
  auto says = [&](const void* in0, const void* in1, void* out, const char* what) {
    try {
      t.execute(in0, in1, out);
      ADD_FAILURE() << "no error for " << what;
    } catch (const weft::Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  says(nullptr, x.in1.data(), x.out.data(), "tensor_in0 is null");
  says(x.in0.data(), nullptr, x.out.data(), "tensor_in1 is null (the main primitive brgemm uses it)");
  says(x.in0.data(), x.in1.data(), nullptr, "tensor_out is null");
  t.execute(x.in0.data(), x.in1.data(), x.out.data());

  Contraction copy;  // a unary main reads no in1
  copy.main = prim_t::copy;
  copy.dims = {Dim{dim_t::c, exec_t::prim, 8, 1, 0, 1}};
  TensorOperation unary;
  ASSERT_EQ(unary.setup(copy, {}), error_t::success) << unary.error_message();
  std::vector<float> a(8, 3.0f), b(8);
  unary.execute(a.data(), nullptr, b.data());
  EXPECT_EQ(b[7], 3.0f);
}

TEST(EinsumTreeErrors, HandBuiltTreesAreValidated) {
  const EinsumTree good = parse_einsum_tree("[0,1],[2,1]->[0,2]", {4, 4, 4});
  ASSERT_EQ(good.root, 2);
  struct Case {
    const char* name;
    void (*change)(EinsumTree&);
    const char* says;
  };
  const Case cases[] = {
      {"kind", [](EinsumTree& t) { t.nodes[2].kind = static_cast<EinsumNode::Kind>(7); }, "node 2: kind 7 is none of"},
      {"root", [](EinsumTree& t) { t.root = 5; }, "root 5 is no node"},
      {"child", [](EinsumTree& t) { t.nodes[2].right = 9; }, "node 2: child 9 is no other node"},
      {"self", [](EinsumTree& t) { t.nodes[2].left = 2; }, "node 2: child 2"},
      {"shared child", [](EinsumTree& t) { t.nodes[2].right = 0, t.nodes[2].ids = {0, 1}; }, "node 0: is the operand of 2 nodes"},
      {"id", [](EinsumTree& t) { t.nodes[0].ids = {0, 7}; }, "node 0: dimension id 7 has no size"},
      {"negative id", [](EinsumTree& t) { t.nodes[1].ids = {-1, 1}; }, "node 1: dimension id -1"},
      {"twice", [](EinsumTree& t) { t.nodes[0].ids = {1, 1}; }, "appears twice"},
      {"input", [](EinsumTree& t) { t.nodes[1].input = 0; }, "node 1: input 0"},
      {"size", [](EinsumTree& t) { t.dim_sizes[1] = 0; }, "dimension 1 has size 0"},
      {"summed once", [](EinsumTree& t) { t.nodes[2].ids = {2}; }, "dimension 0 is summed over one operand only"},
      {"unreached", [](EinsumTree& t) { t.nodes.push_back(EinsumNode{EinsumNode::Kind::leaf, {0}, -1, -1, 2}); },
       "node 3: is the operand of 0 nodes"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EinsumTree t = good;
    c.change(t);
    for (int which = 0; which < 2; ++which) {
      try {
        if (which == 0) {
          EinsumTreeOperation op(t);
        } else {
          optimize_einsum_tree(t);
        }
        ADD_FAILURE() << "accepted";
      } catch (const weft::Error& e) {
        EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
      }
    }
  }
}

TEST(EinsumTreeErrors, IntermediatesBeyondThisMachineSayHowMuchMemoryTheyNeed) {
  // The intermediate [0,1,2,3] of 2^46 floats: a std::bad_alloc from aligned_alloc before.
  const EinsumTree tree =
      parse_einsum_tree("[[0,4],[4,1,2,3]->[0,1,2,3]],[3]->[0,1,2]", {1 << 12, 1 << 12, 1 << 12, 1 << 10, 1});
  try {
    EinsumTreeOperation op(tree);
    FAIL();
  } catch (const weft::MemoryError& e) {
    EXPECT_EQ(e.reason(), weft::MemoryError::Reason::beyond_machine);
    EXPECT_NE(std::string(e.what()).find("einsum tree: the intermediate tensor storage needs 256.0 TiB of memory"),
              std::string::npos)
        << e.what();
  }
  // Element counts beyond 64 bits: parse_einsum_tree rejects them; elements() of a tree edited by
  // hand says so too.
  EXPECT_THROW(parse_einsum_tree("[0,1],[1,2]->[0,2]", {std::int64_t{1} << 40, 2, std::int64_t{1} << 40}),
               EinsumParseError);
  EinsumTree overflow = parse_einsum_tree("[0,1],[1,2]->[0,2]", {2, 2, 2});
  overflow.dim_sizes = {std::int64_t{1} << 40, 2, std::int64_t{1} << 40};
  EXPECT_THROW(overflow.elements(overflow.root), weft::MemoryError);
}

// Found by fuzz/tensor_operation on AArch64, where the TPPs ran their checked references: a block
// whose output columns all lie at one place (stride 0 in out along the second prim dimension) was
// given to the unary TPP with ld_out 0, which the TPP reads as "given at call time"; the checked
// call then threw inside execute(). Such a block is no TPP block: without generic primitives it is
// a setup error naming the stride, with them the portable loops compute what the reference does.
TEST(TensorOperationErrors, OutputColumnsOfStrideZeroAreNoTppBlock) {
  Contraction op;
  op.main = prim_t::exp;
  op.dims = {Dim{.type = dim_t::c, .exec = exec_t::prim, .size = 2, .stride_in0 = 11, .stride_out = 0},
             Dim{.type = dim_t::c, .exec = exec_t::prim, .size = 11, .stride_in0 = 1, .stride_out = 1}};
  for (bool generic : {false, true}) {
    SCOPED_TRACE(generic ? "generic primitives" : "TPPs only");
    TensorOperation t;
    TensorOperation::Options options;
    options.allow_generic_primitives = generic;
    const error_t result = t.setup(op, options);
    if (!generic) {
      EXPECT_EQ(result, error_t::err_invalid_strides) << t.error_message();
      EXPECT_NE(t.error_message().find("stride 0 in out"), std::string::npos) << t.error_message();
      continue;
    }
    ASSERT_EQ(result, error_t::success) << t.error_message();
    const Tensors initial = make_tensors(op, 7);
    Tensors x = initial;
    t.execute(x.in0.data(), nullptr, x.out.data());
    expect_matches_reference(op, initial, x.out);
  }
}

}  // namespace
}  // namespace weft::tensor::test
