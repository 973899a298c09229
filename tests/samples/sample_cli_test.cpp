// The GEMM sample programs, run as programs: PARLOOPER's argument lines (its scripts pass
// "... 0 0 BF16 0"), PARLOOPER's MEASURE tags, bf16 and FP64 runs on every instruction set the
// host runs, and an exit status of 2 with a message naming the argument for every bad argument
// (precisions weft does not have and sizes beyond this machine included).
#include <gtest/gtest.h>

#include "run_program.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <weft/jit/architecture.hpp>
#include <weft/jit/cpu.hpp>

namespace {

#ifndef WEFT_GEMM_PATH
#define WEFT_GEMM_PATH ""
#define WEFT_GEMM_BWD_PATH ""
#define WEFT_GEMM_UPD_PATH ""
#endif

using Result = weft::test::ProgramResult;

Result run(const char* program, const std::string& args, const std::string& env = "") {
  return weft::test::run_program(env + " '" + std::string(program) + "' " + args + " --threads 2 --warmup 0",
                                 "weft_gemm");
}

// The tag of the "MEASURE <gflops> <tag>" line, or "" without one.
std::string measure_tag(const std::string& out) {
  const std::size_t line = out.find("MEASURE ");
  if (line == std::string::npos) return "";
  const std::size_t tag = out.find(' ', line + 8);
  const std::size_t end = out.find('\n', line);
  if (tag == std::string::npos || end == std::string::npos || tag > end) return "";
  return out.substr(tag + 1, end - tag - 1);
}

class GemmSampleCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(WEFT_GEMM_PATH).empty()) GTEST_SKIP() << "the GEMM samples were not built";
  }
  static constexpr const char* fwd = WEFT_GEMM_PATH;
  static constexpr const char* bwd = WEFT_GEMM_BWD_PATH;
  static constexpr const char* upd = WEFT_GEMM_UPD_PATH;
};

TEST_F(GemmSampleCli, TakesParloopersFullArgumentLines) {
  // gemm_script_*.sh and gemm_loop_tuner.sh: loop M N K bm bn bk kbf n_layers n_iters bias relu
  // precision use_ping_pong_bufs.
  const Result thirteen = run(fwd, "aCb 64 64 64 32 32 32 2 1 2 0 0 FP32");
  EXPECT_EQ(thirteen.status, 0) << thirteen.err;
  EXPECT_EQ(measure_tag(thirteen.out), "aCb_64_64_64_32_32_32_bf2_threads2") << thirteen.out;
  const Result fourteen = run(fwd, "aCb 64 64 64 32 32 32 2 1 2 0 0 FP32 0");
  EXPECT_EQ(fourteen.status, 0) << fourteen.err;
  EXPECT_NE(fourteen.out.find("check: PASSED"), std::string::npos) << fourteen.out;
  // An MLP with and without PARLOOPER's ring of two buffers.
  for (const char* ring : {"0", "1"}) {
    const Result mlp = run(fwd, std::string("aBC 64 32 64 32 32 32 1 3 2 1 1 FP32 ") + ring);
    EXPECT_EQ(mlp.status, 0) << ring << ": " << mlp.err;
    EXPECT_NE(mlp.out.find(std::string(ring) == "1" ? "(2 output buffers)" : "(3 output buffers)"),
              std::string::npos)
        << mlp.out;
    EXPECT_NE(mlp.out.find("check: PASSED"), std::string::npos) << mlp.out;
  }
}

TEST_F(GemmSampleCli, PrintsParloopersMeasureTags) {
  const Result b = run(bwd, "aBC 64 64 64 32 32 32 1 1 2");
  EXPECT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(measure_tag(b.out), "aBC_64_64_64_32_32_32_bf1_threads2_private_wt_trans1") << b.out;
  const Result u = run(upd, "abC 64 64 64 32 32 32 1 0 2 2");
  EXPECT_EQ(u.status, 0) << u.err;
  EXPECT_EQ(measure_tag(u.out), "abC_64_64_64_32_32_32_bf1_threads2_private_act_trans0_npartialFilters2")
      << u.out;
}

// The instruction sets this host runs, by WEFT_ISA name: bf16 runs natively on avx512_bf16
// (vdpbf16ps) and widened to fp32 on avx512 and avx2.
// The ISAs this build generates that the CPU runs, and the portable reference.
std::vector<std::string> host_isas() {
  std::vector<std::string> names;
  for (const weft::jit::Isa isa : weft::jit::target_architecture().isas)
    if (weft::jit::can_run(isa, weft::jit::cpu_features())) names.emplace_back(weft::jit::to_string(isa));
  names.emplace_back("reference");
  return names;
}

// A run that must succeed: the program, its arguments, what the environment adds, and the MEASURE
// tag it must print.
struct PassingRun {
  const char* program;
  std::string args, env, tag;
};

// Runs `c` on the instruction set `isa`: it must exit with 0, name `precision` ("BF16", "FP64") in
// its header line, pass its check and print c.tag. Returns what it printed.
Result expect_passing_run(const PassingRun& c, const std::string& isa, const std::string& precision) {
  const Result r = run(c.program, c.args, "WEFT_ISA=" + isa + " " + c.env);
  const std::string what = isa + ": " + c.program + " " + c.args;
  EXPECT_EQ(r.status, 0) << what << "\n" << r.err;
  EXPECT_NE(r.out.find(": " + precision + ", "), std::string::npos) << what << "\n" << r.out;
  EXPECT_NE(r.out.find("check: PASSED"), std::string::npos) << what << "\n" << r.out;
  EXPECT_EQ(measure_tag(r.out), c.tag) << what << "\n" << r.out;
  return r;
}

// USE_BF16 (PARLOOPER's switch) and the BF16 precision argument run every sample in bf16,
// checked element by element, with the precision in the header and at the end of the MEASURE tag.
TEST_F(GemmSampleCli, RunsBf16OnEveryIsaTheHostRuns) {
  const PassingRun cases[] = {
      // An MLP of 2 layers with bias and ReLU, by the precision argument.
      {fwd, "aBC 64 48 64 16 16 16 2 2 2 1 1 BF16 0", "", "aBC_64_48_64_16_16_16_bf2_threads2_bf16"},
      // The same with PARLOOPER's ring of two buffers over 3 layers, by USE_BF16 (and BF16 agreeing).
      {fwd, "aBC 64 48 64 16 16 16 2 3 2 1 1 BF16 1", "USE_BF16=1", "aBC_64_48_64_16_16_16_bf2_threads2_bf16"},
      {fwd, "aCb 70 46 50 16 16 16 2", "USE_BF16=1", "aCb_70_46_50_16_16_16_bf2_threads2_bf16"},
      {bwd, "ACb 70 46 50 16 16 16 2 1 2", "USE_BF16=1",
       "ACb_70_46_50_16_16_16_bf2_threads2_private_wt_trans1_bf16"},
      {upd, "ABc 70 46 50 16 16 16 3 1 0 2", "USE_BF16=1",
       "ABc_70_46_50_16_16_16_bf3_threads2_private_act_trans1_npartialFilters0_bf16"},
      {upd, "abC 70 96 50 16 16 16 3 0 2 2", "USE_BF16=1",
       "abC_70_96_50_16_16_16_bf3_threads2_private_act_trans0_npartialFilters2_bf16"},
      // The backward passes by the precision argument.
      {bwd, "aBC 70 46 50 16 16 16 1 0 2 BF16", "", "aBC_70_46_50_16_16_16_bf1_threads2_private_wt_trans0_bf16"},
      {upd, "aBC 70 46 50 16 16 16 1 0 0 2 BF16", "",
       "aBC_70_46_50_16_16_16_bf1_threads2_private_act_trans0_npartialFilters0_bf16"},
  };
  const std::vector<std::string> isas = host_isas();
  ASSERT_FALSE(isas.empty());
  for (const std::string& isa : isas) {
    for (const PassingRun& c : cases) {
      const Result r = expect_passing_run(c, isa, "BF16");
      EXPECT_NE(r.out.find("bf16 bound per element: 0 beyond it"), std::string::npos) << isa << "\n" << r.out;
    }
  }
  // The forward sample names the instruction set it ran.
  const Result native = run(fwd, "aBC 64 64 64 32 32 32 1 1 2 0 0 BF16", "WEFT_ISA=" + isas.front());
  EXPECT_NE(native.out.find("isa " + isas.front()), std::string::npos) << native.out;
}

// The precision argument FP64 (weft's own word) of all three samples: doubles, an MLP with bias
// and ReLU, odd tiles, W^T / X^T per thread and partial filters too, checked (the backward passes
// against the double reference within the f64 tolerance), with the precision in the header and
// "_f64" at the end of the MEASURE tag.
TEST_F(GemmSampleCli, RunsFp64ByThePrecisionArgument) {
  const PassingRun cases[] = {
      {fwd, "aBC 70 46 50 16 24 9 2 1 2 1 1 FP64", "", "aBC_70_46_50_16_24_9_bf2_threads2_f64"},
      {fwd, "aCb 64 48 64 16 16 16 2 3 2 1 1 FP64 1", "", "aCb_64_48_64_16_16_16_bf2_threads2_f64"},
      {bwd, "ACb 70 46 50 9 16 11 2 1 2 FP64", "", "ACb_70_46_50_9_16_11_bf2_threads2_private_wt_trans1_f64"},
      {upd, "ABc 70 46 50 16 5 7 3 1 0 2 FP64", "",
       "ABc_70_46_50_16_5_7_bf3_threads2_private_act_trans1_npartialFilters0_f64"},
      {upd, "abC 70 96 50 16 16 16 3 0 2 2 FP64", "",
       "abC_70_96_50_16_16_16_bf3_threads2_private_act_trans0_npartialFilters2_f64"},
  };
  for (const std::string& isa : host_isas()) {
    for (const PassingRun& c : cases) {
      const Result r = expect_passing_run(c, isa, "FP64");
      if (c.program == fwd) continue;
      // The backward passes' tolerance: an f32 computation misses it by orders of magnitude.
      const std::size_t tolerance = r.out.find("; tolerance ");
      ASSERT_NE(tolerance, std::string::npos) << isa << "\n" << r.out;
      EXPECT_LT(std::stod(r.out.substr(tolerance + 12)), 1e-13) << isa << "\n" << r.out;
    }
  }
}

// FP32 stays FP32 (USE_BF16 unset or 0: no "_bf16" in the tag); F16, BF8, INT8, a non-integer
// USE_BF16, USE_BF16 against an explicit FP32 or FP64, and tiles bf16 cannot pair are refused with
// exit status 2 and a message, before anything runs.
TEST_F(GemmSampleCli, RefusesWhatItCannotRunInBf16) {
  for (const char* program : {fwd, bwd, upd}) {
    for (const char* env : {"", "USE_BF16=0"}) {
      const Result r = run(program, "aBC 64 64 64 32 32 32", env);
      EXPECT_EQ(r.status, 0) << program << " " << env << "\n" << r.err;
      EXPECT_NE(r.out.find(": FP32, "), std::string::npos) << r.out;
      EXPECT_EQ(measure_tag(r.out).find("bf16"), std::string::npos) << r.out;
    }
  }
  struct Case {
    const char* program;
    std::string args, env, says;
  };
  const Case cases[] = {
      {fwd, "aCb 64 64 64 32 32 32 2 1 2 0 0 F16 0", "", "precision (argument 13): F16 is not supported yet"},
      {fwd, "aCb 64 64 64 32 32 32 2 1 2 0 0 BF8 0", "", "precision (argument 13): BF8 is not supported yet"},
      {fwd, "aCb 64 64 64 32 32 32 2 1 2 0 0 INT8 0", "", "precision (argument 13): INT8 is not supported yet"},
      {fwd, "aCb 64 64 64 32 32 32 2 1 2 0 0 FP32 0", "USE_BF16=1",
       "precision (argument 13): FP32, but USE_BF16 in the environment asks for bf16"},
      {bwd, "aBC 64 64 64 32 32 32 1 0 2 F16", "",
       "precision (argument 11): F16 is not supported yet, weft-gemm-bwd computes in FP32, BF16 or FP64"},
      {upd, "aBC 64 64 64 32 32 32 1 0 0 2 INT8", "",
       "precision (argument 12): INT8 is not supported yet, weft-gemm-upd computes in FP32, BF16 or FP64"},
      {upd, "aBC 64 64 64 32 32 32 1 0 0 2 FP32", "USE_BF16=1",
       "precision (argument 12): FP32, but USE_BF16 in the environment asks for bf16"},
      {fwd, "aBC 64 64 64 32 32 32 1 1 2 0 0 FP64", "USE_BF16=1",
       "precision (argument 13): FP64, but USE_BF16 in the environment asks for bf16"},
      {bwd, "aBC 64 64 64 32 32 32 1 0 2 FP64", "USE_BF16=1",
       "precision (argument 11): FP64, but USE_BF16 in the environment asks for bf16"},
      {upd, "aBC 64 64 64 32 32 32 1 0 0 2 FP64", "USE_BF16=1",
       "precision (argument 12): FP64, but USE_BF16 in the environment asks for bf16"},
      {fwd, "aBC 64 64 64 32 32 32", "USE_BF16=yes", "USE_BF16 (environment): 'yes' is not an integer"},
      {bwd, "aBC 64 64 64 32 32 32", "USE_BF16=1.5", "USE_BF16 (environment): '1.5' is not an integer"},
      {upd, "aBC 64 64 64 32 32 32", "USE_BF16=on", "USE_BF16 (environment): 'on' is not an integer"},
      {fwd, "aBC 64 64 64 32 32 33", "USE_BF16=1", "bk = 33 is odd: in bf16"},
      {bwd, "aBC 64 64 64 31 32 32", "USE_BF16=1", "bm = 31 is odd: in bf16"},
      {upd, "aBC 64 64 64 32 31 32", "USE_BF16=1", "bn = 31 is odd: in bf16"},
      {upd, "aBC 200000 200000 200000 32 32 32", "USE_BF16=1", "TiB of memory, more than this machine's"},
  };
  for (const Case& c : cases) {
    const Result r = run(c.program, c.args, c.env);
    EXPECT_EQ(r.status, 2) << c.env << " " << c.program << " " << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.env << " " << c.program << " " << c.args << "\n" << r.err;
    EXPECT_EQ(measure_tag(r.out), "") << r.out;
  }
}

TEST_F(GemmSampleCli, EveryBadArgumentExitsTwoNamingIt) {
  struct Case {
    const char* program;
    std::string args;
    std::string says;
  };
  const Case cases[] = {
      {fwd, "aBC 64 64", "missing K (argument 4)"},
      {fwd, "", "missing LOOP_STRING (argument 1)"},
      {fwd, "aBC 64 64 x 32 32 32", "K: 'x' is not an integer"},
      {fwd, "aBC 64 64 64 0 32 32", "bm: 0 is outside"},
      {fwd, "aBC 64 64 64 32 32 32 1 1 2 0 0 FP16",
       "precision (argument 13): 'FP16' is none of PARLOOPER's FP32, BF16, F16, BF8, INT8, nor weft's FP64"},
      {fwd, "aBC 64 64 64 32 32 32 1 1 2 0 0 FP32 2", "use_ping_pong_bufs: 2 is outside [0, 1]"},
      {fwd, "aBC 64 64 64 32 32 32 1 1 2 0 0 FP32 0 0.8", "sparse_frac (argument 15"},
      {fwd, "aBC 64 64 64 32 32 32 1 1 2 0 0 FP32 0 0.8 x", "unexpected argument 'x' (argument 16)"},
      {fwd, "aBC 64 64 64 32 32 32 1 1 2 2", "fuse_bias: 2 is outside [0, 1]"},
      {fwd, "aBc- 64 64 64 32 32 32", "unexpected character '-'"},
      {fwd, "aBC 64 64 64 32 32 32 --bogus 1", "unknown option --bogus"},
      {fwd, "aBC 64 64 64 32 32 32 --m-blocks --check 1", "option --m-blocks needs a value"},
      {fwd, "aBC 64 64 64 32 32 32 --m-blocks 2,,1", "--m-blocks: '2,,1' is not a list of integers"},
      {bwd, "aBC 64 64 64 32 32 32 --warmup 1", "--warmup is given twice"},  // run() adds --warmup 0
      {fwd, "auto 64 64", "missing K (argument 4)"},
      {fwd, "aBC 64 32 96 32 32 32 1 2", "n_layers > 1"},
      {bwd, "aBC 64 64 64 32 32 32 1 0 1 FP32 7", "unexpected argument '7' (argument 12)"},
      {bwd, "aBC 64 64 64 32 32 32 1 0 1 fp64",
       "precision (argument 11): 'fp64' is none of PARLOOPER's FP32, BF16, F16, BF8, INT8, nor weft's FP64"},
      {bwd, "aBC 64 64 64 32 32 32 1 2", "private_trans: 2 is outside [0, 1]"},
      {bwd, "aBC 64 64", "missing K (argument 4)"},
      {bwd, "auto 64 64", "missing K (argument 4)"},
      {upd, "auto 64 64 64 10 7", "unexpected argument '7' (argument 6): at most 5 positional arguments, auto M N K [n_iters]"},
      {upd, "aBC 64 64 64 32 32 32 1 0 0 1 FP64 7", "unexpected argument '7' (argument 13)"},
      {upd, "aBC 64 64 64 32 32 32 1 0 0 1 7",
       "precision (argument 12): '7' is none of PARLOOPER's FP32, BF16, F16, BF8, INT8, nor weft's FP64"},
      {upd, "abC 64 64 64 32 32 32 1 0 -1", "n_partial_filters: -1 is outside"},
      {upd, "abC 64 128 64 32 32 32 4 0 1", "n_partial_filters (1) is smaller"},
  };
  for (const Case& c : cases) {
    const Result r = run(c.program, c.args);
    EXPECT_EQ(r.status, 2) << c.program << " " << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.program << " " << c.args << "\n" << r.err;
  }
}

TEST_F(GemmSampleCli, HelpPrintsTheUsageAndSucceeds) {
  for (const char* program : {fwd, bwd, upd}) {
    const Result r = run(program, "--help");
    EXPECT_EQ(r.status, 0) << program << "\n" << r.err;
    EXPECT_EQ(r.out.rfind("usage: weft-gemm", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("[--threads T] [--check 0|1] [--warmup W]"), std::string::npos) << r.out;
  }
}

TEST_F(GemmSampleCli, SizesBeyondTheMachineSayHowMuchMemoryTheyNeed) {
  for (const char* program : {fwd, bwd, upd}) {
    const Result big = run(program, "aBC 200000 200000 200000 32 32 32");
    EXPECT_EQ(big.status, 2) << program << "\n" << big.err;
    EXPECT_NE(big.err.find("needs"), std::string::npos) << big.err;
    EXPECT_NE(big.err.find("TiB of memory, more than this machine's"), std::string::npos) << big.err;
    EXPECT_EQ(big.err.find("bad_alloc"), std::string::npos) << big.err;
  }
  const Result overflow = run(fwd, "aBC 2000000000 2000000000 2000000000 32 32 32");
  EXPECT_EQ(overflow.status, 2) << overflow.err;
  EXPECT_NE(overflow.err.find("needs more than 16 EiB of memory"), std::string::npos) << overflow.err;
  // Partial filters are summed by a reduction TPP whose stride is the size of dW.
  const Result partial = run(upd, "abC 20000 64 20000 32 32 32 1 0 2");
  EXPECT_EQ(partial.status, 2) << partial.err;
  EXPECT_NE(partial.err.find("n_partial_filters"), std::string::npos) << partial.err;
}

}  // namespace
