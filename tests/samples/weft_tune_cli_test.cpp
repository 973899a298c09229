// weft-tune, run in-process through weft_tune_main: exit status 2 with a message naming the
// argument for every kind of bad usage, checked before any measuring; 0 for help and dry runs;
// the loop strings of specs; a list of strings measured with the real weft-gemm; the GEMM passes
// and the MLP tuned in FP32 and bf16 into a database that the samples' `auto` mode then reads.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#if __has_include("tune_command.hpp")  // the tool is built with the tuner
#include <weft/parlooper/loop_string.hpp>
#include <weft/tuner/search_space.hpp>
#include <weft/tuner/tuning_database.hpp>

#include "subprocess.hpp"
#include "tune_command.hpp"
#define WEFT_TUNER_HAVE_CLI 1
#endif

#ifndef WEFT_GEMM_PATH
#define WEFT_GEMM_PATH ""
#define WEFT_GEMM_BWD_PATH ""
#define WEFT_GEMM_UPD_PATH ""
#endif

namespace {

#ifdef WEFT_TUNER_HAVE_CLI

namespace fs = std::filesystem;

struct Result {
  int status = -1;
  std::string out, err;
};

std::string read_all(std::FILE* f) {
  std::string text;
  std::rewind(f);
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) text.append(buffer, n);
  std::fclose(f);
  return text;
}

// Splits `args` at spaces (no quoting needed by these tests).
Result tune(const std::string& args) {
  std::vector<std::string> words{"weft-tune"};
  std::size_t start = 0;
  while (start < args.size()) {
    const std::size_t end = std::min(args.find(' ', start), args.size());
    if (end > start) words.push_back(args.substr(start, end - start));
    start = end + 1;
  }
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  Result r;
  r.status = weft::samples::weft_tune_main(static_cast<int>(words.size()), argv.data(), out, err);
  r.out = read_all(out);
  r.err = read_all(err);
  return r;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// The samples' `auto` runs below read their test's database only: the shipped databases
// (share/weft/tuning) would answer too on a machine like the ones they were tuned on.
constexpr const char* kNoShippedTuning = "WEFT_SHIPPED_TUNING_DIR=";

class WeftTuneCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("weft-tune-cli-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    db_ = (dir_ / "db.jsonl").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write_file(const std::string& name, const std::string& text) const {
    const std::string path = (dir_ / name).string();
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
    return path;
  }

  fs::path dir_;
  std::string db_;
};

TEST_F(WeftTuneCli, EveryBadArgumentExitsWithTwoAndNamesIt) {
  struct Case {
    std::string args, says;
  };
  const std::string gemm = "gemm --M 64 --N 64 --K 64 ";
  const std::string con = "contraction --dims m,n,k --sizes 8,8,8 ";
  const std::string strings = write_file("strings.txt", "aBC\n");
  const std::string no_strings = write_file("empty.txt", "# nothing\n\n");
  const std::string measure = "measure --strings " + strings + " ";
  const std::vector<Case> cases = {
      {"", "missing command"},
      {gemm + "--pass mlp", "'mlp' is no GEMM pass (fwd, bwd or upd)"},
      {gemm + "--pass bwd --kbf 2", "--kbf splits the K loop of --pass fwd; --pass bwd takes --mbf"},
      {gemm + "--nbf 2", "--nbf splits the N loop of --pass upd; --pass fwd takes --kbf"},
      {gemm + "--pass bwd --mbf 3", "every --mbf exceeds the number of M blocks (M = 64 over --bm)"},
      {gemm + "--private-trans 1", "--private-trans is for --pass bwd and upd"},
      {gemm + "--pass upd --private-trans 0,2", "--private-trans: 2 is outside [0, 1]"},
      {gemm + "--pass upd --layers 2", "--layers runs a forward MLP: it needs --pass fwd, not upd"},
      {gemm + "--layers 2 --bk 32", "--bk has no effect with --layers"},
      {gemm + "--layers 0", "--layers: 0 is outside [1, 1000]"},
      {"gemm --M 64 --N 64 --K 32 --layers 2", "an MLP (layers > 1) feeds each output into the next layer, so it needs M == K"},
      {"strings", "strings needs --spec"},
      {"strings --spec a_0_K,b_x_M", "--spec 'a_0_K,b_x_M': loop spec entry 2"},
      {"strings --spec a_0_K,b_0_M --parlooper --threads 2", "--threads has no effect with --parlooper"},
      {"strings --spec a_0_K,b_0_M --parlooper --no-grids", "--no-grids has no effect with --parlooper"},
      {"strings --spec a_0_K --loop-steps 1", "--loop-steps needs --loop-ends"},
      {"strings --spec a_0_K --block-choices 2", "--block-choices needs --loop-ends"},
      {"strings --spec a_0_K,b_0_M --loop-ends 4", "--loop-ends has 1 entries; --spec 'a_0_K,b_0_M' has 2 loops"},
      {"strings --spec a_0_K,b_0_M --loop-ends 4,4 --loop-steps 1", "--loop-steps has 1 entries, --loop-ends 2"},
      {"strings --spec a_2_K --threads 1 --loop-ends 2", "leaves no loop string for these loops"},
      {"strings --spec a_0_K --run-length 0", "--run-length: 0 is outside"},
      {"measure", "measure needs --strings FILE"},
      {measure, "measure needs the sample's command after --"},
      {measure + "--", "measure needs the sample's command after --"},
      {measure + "-- /bin/true 1 2", "the command after -- has no {} where the loop string goes"},
      {measure + "--placeholder @ -- /bin/true {}", "has no @ where the loop string goes"},
      {measure + "-- /nonexistent/weft-gemm {}", "'/nonexistent/weft-gemm' is no executable program"},
      {measure + "-- no-such-program-in-path {}", "'no-such-program-in-path' is no executable program"},
      {"measure --strings /nonexistent/s.txt -- /bin/true {}", "--strings cannot read the loop strings in /nonexistent/s.txt"},
      {"measure --strings " + no_strings + " -- /bin/true {}", "holds no loop string"},
      {measure + "--repeat 0 -- /bin/true {}", "--repeat: 0 is outside"},
      {measure + "--timeout -1 -- /bin/true {}", "--timeout: -1 is outside"},
      {measure + "--plot " + (dir_ / "missing" / "p.svg").string() + " -- /bin/true {}", "--plot"},
      {measure + "--frob -- /bin/true {}", "unknown option --frob"},
      {"frobnicate", "unknown command 'frobnicate' (gemm, conv, contraction, show, strings or measure)"},
      {"gemm --M 64 --N 64", "gemm needs --K"},
      {"gemm --M --N 64 --K 64", "option --M needs a value"},
      {"gemm --M 64 --N 64 --K", "option --K needs a value"},
      {"gemm --M x --N 64 --K 64", "--M: 'x' is not an integer"},
      {"gemm --M 0 --N 64 --K 64", "--M: 0 is outside [1, 1048576]"},
      {"gemm --M -5 --N 64 --K 64", "--M: -5 is outside"},
      {"gemm --M 99999999999999999999 --N 64 --K 64", "--M: '99999999999999999999' is not an integer"},
      {"gemm --M 64 --M 32 --N 64 --K 64", "--M is given twice"},
      {gemm + "--dry-run --dry-run", "--dry-run is given twice"},
      {gemm + "--dry-run=yes", "--dry-run takes no value"},
      {gemm + "--frob 3", "unknown option --frob"},
      {gemm + "-M 5", "unknown option -M (did you mean --M?)"},
      {gemm + "extra", "unexpected argument 'extra'"},
      {gemm + "--threads 0", "--threads: 0 is outside [1, 4096]"},
      {gemm + "--threads 5000", "--threads: 5000 is outside [1, 4096]"},
      {gemm + "--threads two", "--threads"},
      {gemm + "--budget 0", "--budget: 0 is outside [0.1, 1e+06]"},
      {gemm + "--budget nan", "--budget: 'nan' is not a number"},
      {gemm + "--budget 1e400", "--budget: '1e400' is not a number"},
      {gemm + "--imbalance -1", "--imbalance"},
      {gemm + "--caches lukewarm", "--caches is warm or cold, not 'lukewarm'"},
      {gemm + "--dtype fp64", "--dtype is f32, bf16 or f64 (the samples' precisions), not 'fp64'"},
      {gemm + "--top-k -1", "--top-k"},
      {gemm + "--rows 0", "--rows: 0 is outside"},
      {gemm + "--block-choices 0", "--block-choices"},
      {gemm + "--bm 0", "--bm: 0 is outside [1, 65536]"},
      {gemm + "--bm 32,", "--bm: '32,' is not a list of integers"},
      {gemm + "--bk 99999999999999999999", "--bk: '99999999999999999999' is not an integer"},
      {gemm + "--bn 100000000", "--bn: 100000000 is outside [1, 65536]"},
      {gemm + "--kbf 3", "every --kbf exceeds the number of K blocks"},
      {gemm + "--spec garbage", "--spec 'garbage': loop spec entry 1"},
      {gemm + "--spec ;;", "--spec ';;' holds no loop spec"},
      {gemm + "--spec a_0_K,b_0_M", "--spec 'a_0_K,b_0_M' has 2 loops; the workload has 3"},
      {gemm + "--spec a_0_M,b_0_K,c_0_N", "loop 'a' is M, but the workload's loop 'a' is a reduction"},
      {gemm + "--exhaustive --budget 5", "--budget has no effect with --exhaustive"},
      {gemm + "--dry-run --plot x.svg", "--plot needs a measured run"},
      {gemm + "--db --no-save", "option --db needs a value"},
      {gemm + "--spec", "option --spec needs a value"},
      {gemm + "--threads 2 --threads 2", "--threads is given twice"},
      {gemm + "--budget 0x10", "--budget: '0x10' is not a number"},
      {gemm + "--db= --no-save", "--db needs a value"},
      {gemm + "--threads 64 --no-save --budget 0.1", "no legal candidate"},
      {"gemm --M 1000000 --N 1000000 --K 1000000", "needs 21.8 TiB of memory, more than this machine's"},
      {"contraction", "needs --dims and --sizes"},
      {"contraction --dims m,n,k --sizes 8,8", "need the same number of entries (got 3 and 2)"},
      {"contraction --dims m,n,x --sizes 8,8,8", "--dims entry 2 is 'x'"},
      {"contraction --dims m,n,k --sizes 8,8,12abc", "--sizes entry 2 is '12abc'"},
      {"contraction --dims m,n,k --sizes 8,8,-1", "--sizes entry 2 is '-1'"},
      {"contraction --dims m,n,k --sizes 8,8,99999999999999999999", "--sizes entry 2"},
      {"contraction --dims m,n,k,m,n,k --sizes 2000000000,2000000000,2000000000,2000000000,2000000000,2000000000",
       "more than 16 EiB of memory"},
      {"contraction --dims m,n,k --sizes 2000000,2000000,2000000", "of memory, more than this machine's"},
      {con + "--prim foo", "--prim 'foo' is no primitive"},
      {con + "--first bar", "--first 'bar' is no primitive"},
      {con + "--last baz", "--last 'baz' is no primitive"},
      {con + "--prim relu", "relu is element-wise and takes only c dimensions"},
      {con + "--einsum x", "--einsum is not supported yet"},
      {con + "--bm 32", "unknown option --bm"},
      {"show --threads 2", "unknown option --threads"},
      {"show extra", "unexpected argument 'extra'"},
      {"show --db " + fs::temp_directory_path().string(), "is a directory"},
  };
  for (const Case& c : cases) {
    // Whatever passes the checks must not touch the user's database.
    const std::string args = c.args.rfind("gemm", 0) == 0 || c.args.rfind("contraction", 0) == 0
                                 ? c.args + (c.args.find("--db") == std::string::npos ? " --db=" + db_ : "")
                                 : c.args;
    const Result r = tune(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("weft-tune: ", 0), 0u) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << args << "\n" << r.out;
  }
  EXPECT_FALSE(fs::exists(db_));
}

TEST_F(WeftTuneCli, HelpAndDryRunSucceed) {
  for (const char* help : {"--help", "-h", "gemm --help", "contraction -h", "show --help", "strings --help", "measure -h"}) {
    const Result r = tune(help);
    EXPECT_EQ(r.status, 0) << help << "\n" << r.err;
    EXPECT_NE(r.out.find("exit status: 0 success, 1 run-time failure, 2 bad usage"), std::string::npos) << help;
  }
  const Result dry = tune("gemm --M 64 --N 64 --K 64 --threads 2 --dry-run --bm=32 --bn 32");
  EXPECT_EQ(dry.status, 0) << dry.err;
  EXPECT_NE(dry.out.find("enumerated"), std::string::npos) << dry.out;
}

// show lists the database; --shipped also the shipped databases (WEFT_SHIPPED_TUNING_DIR here),
// marking the records `auto` does not take on this machine.
TEST_F(WeftTuneCli, ShowListsTheDatabaseAndWithShippedTheShippedOnes) {
  weft::tuner::TuningRecord own;
  own.key = {.kind = "gemm_fwd", .shape = {{"M", 64}, {"N", 64}, {"K", 64}}, .dtype = "fp32", .threads = 1};
  own.machine = weft::tuner::MachineFingerprint::current();
  own.weft_version = std::string(weft::tuner::weft_version());
  own.config = {{{"bm", 32}}, "own_loops", {}};
  weft::tuner::TuningDatabase(db_).append(own);
  weft::tuner::TuningRecord bigger_guest = own, other_core = own;
  bigger_guest.machine.logical_cpus += 62;
  bigger_guest.weft_version = "0.0.1";
  bigger_guest.config.loop_string = "bigger_guest_loops";
  other_core.machine.l2_bytes += 1;
  other_core.config.loop_string = "other_core_loops";
  const fs::path shipped = dir_ / "shipped";
  weft::tuner::TuningDatabase(shipped / "zen.jsonl").append(bigger_guest);
  weft::tuner::TuningDatabase(shipped / "zen.jsonl").append(other_core);

  const char* saved = std::getenv("WEFT_SHIPPED_TUNING_DIR");
  const std::string saved_dir = saved ? saved : "";
  ::setenv("WEFT_SHIPPED_TUNING_DIR", shipped.c_str(), 1);
  const Result plain = tune("show --db " + db_);
  const Result with_shipped = tune("show --shipped --db " + db_);
  ::setenv("WEFT_SHIPPED_TUNING_DIR", "", 1);
  const Result none_shipped = tune("show --shipped --db " + db_);
  if (saved) ::setenv("WEFT_SHIPPED_TUNING_DIR", saved_dir.c_str(), 1);
  else ::unsetenv("WEFT_SHIPPED_TUNING_DIR");

  EXPECT_EQ(plain.status, 0) << plain.err;
  EXPECT_NE(plain.out.find(db_ + ": 1 records, 0 unreadable lines"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("zen.jsonl"), std::string::npos) << plain.out;
  ASSERT_EQ(with_shipped.status, 0) << with_shipped.err;
  const std::vector<std::string> out = lines(with_shipped.out);
  ASSERT_EQ(out.size(), 5u) << with_shipped.out;
  EXPECT_NE(out[1].find("own_loops"), std::string::npos) << out[1];
  EXPECT_EQ(out[1].find("[other"), std::string::npos) << out[1];
  EXPECT_EQ(out[2], (shipped / "zen.jsonl").string() + ": 2 records, 0 unreadable lines");
  EXPECT_NE(out[3].find("bigger_guest_loops"), std::string::npos) << out[3];
  EXPECT_EQ(out[3].find("[other"), std::string::npos) << "taken here, whatever its CPU count and version: " << out[3];
  EXPECT_NE(out[4].find("other_core_loops bm=32  [other machine]"), std::string::npos) << out[4];
  EXPECT_EQ(none_shipped.status, 0) << none_shipped.err;
  EXPECT_NE(none_shipped.out.find("no shipped tuning databases (WEFT_SHIPPED_TUNING_DIR is empty)"), std::string::npos)
      << none_shipped.out;
}

TEST_F(WeftTuneCli, UnwritablePlotOrDatabaseFailsBeforeTheSearch) {
  const std::string gemm = "gemm --M 64 --N 64 --K 64 --threads 2 --budget 0.1 ";
  struct Case {
    std::string args, says;
  };
  const std::vector<Case> cases = {
      {gemm + "--no-save --plot " + (dir_ / "missing" / "plot.svg").string(), "--plot " + (dir_ / "missing").string()},
      {gemm + "--no-save --plot " + dir_.string(), "is a directory"},
      {gemm + "--db /dev/null/db.jsonl", "--db /dev/null/db.jsonl: cannot"},
      {gemm + "--db " + db_ + " --plot /dev/null/plot.svg", "--plot /dev/null/plot.svg: cannot be written"},
  };
  for (const Case& c : cases) {
    const Result r = tune(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
    // Nothing measured, nothing printed, nothing saved.
    EXPECT_EQ(r.err.find("quick"), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << c.args << "\n" << r.out;
  }
  EXPECT_FALSE(fs::exists(db_));
}

TEST_F(WeftTuneCli, TheWritabilityCheckLeavesNoFileBehind) {
  // The plot path is writable, so the check passes; the run then fails (no candidate for 64
  // threads), and neither the plot nor the database may be left as an empty file.
  const fs::path plot = dir_ / "plot.svg";
  const Result r = tune("gemm --M 64 --N 64 --K 64 --threads 64 --budget 0.1 --plot " + plot.string() + " --db " + db_);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("no legal candidate"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(plot));
  EXPECT_FALSE(fs::exists(db_));
}

TEST_F(WeftTuneCli, StringsPrintsTheLoopStringsOfSpecsOnePerLine) {
  const auto spec = weft::tuner::parse_loop_spec("a_0_K,b_0_M,c_0_N");
  const Result theirs = tune("strings --spec a_0_K,b_0_M,c_0_N --parlooper");
  EXPECT_EQ(theirs.status, 0) << theirs.err;
  EXPECT_EQ(lines(theirs.out), weft::tuner::parlooper_loop_strings(spec));
  EXPECT_EQ(lines(theirs.out).size(), 16u);
  EXPECT_NE(theirs.err.find("16 loop strings"), std::string::npos) << theirs.err;

  // weft's rules depend on the team; a spec given twice prints its strings once.
  const Result one = tune("strings --spec a_0_K,b_0_M,c_0_N --threads 1");
  EXPECT_EQ(lines(one.out), (std::vector<std::string>{"abc", "acb", "bac", "bca", "cab", "cba"}));
  const Result two = tune("strings --spec a_0_K,b_0_M,c_0_N;a_0_K,b_0_M,c_0_N --threads 2");
  EXPECT_EQ(lines(two.out), weft::tuner::enumerate_loop_strings(spec, {.threads = 2}));

  // A convolution's 7 loops (forward: the reductions are b = C blocks, f = R, g = S): every
  // string parses for 7 loops and keeps the reductions sequential, unless the pass combines
  // partial results (--parallel-reductions).
  const Result conv = tune("strings --spec a_0_N,b_0_K,c_0_M,d_1_M,e_0_N,f_0_K,g_0_K --threads 2 --no-grids");
  EXPECT_EQ(conv.status, 0) << conv.err;
  const auto conv_lines = lines(conv.out);
  EXPECT_GT(conv_lines.size(), 10000u);
  for (std::size_t i = 0; i < conv_lines.size(); i += 7) {
    const auto nest = weft::parlooper::parse_loop_string(conv_lines[i], 7);
    for (const auto& level : nest.levels)
      EXPECT_FALSE(level.par != weft::parlooper::ParKind::none && (level.loop == 1 || level.loop >= 5)) << conv_lines[i];
  }
  const Result upd = tune("strings --spec a_0_K,b_0_M,c_0_M,d_0_K,e_0_K,f_0_N,g_0_N --threads 2 --parallel-reductions "
                          "--run-length 1 --no-grids");
  EXPECT_NE(upd.out.find("A"), std::string::npos);  // the images may be split among the threads

  // With the loops' bounds, every choice of block sizes of the repeated letter, as an inline spec.
  const Result blocked = tune("strings --spec a_0_K,b_1_M,c_0_N --threads 1 --loop-ends 4,8,4 --block-choices 2");
  EXPECT_EQ(blocked.status, 0) << blocked.err;
  const auto blocked_lines = lines(blocked.out);
  EXPECT_EQ(blocked_lines.size(), 2 * lines(tune("strings --spec a_0_K,b_1_M,c_0_N --threads 1").out).size());
  for (const std::string& line : blocked_lines) {
    EXPECT_TRUE(line.find("b[,,,(2)]") != std::string::npos || line.find("b[,,,(4)]") != std::string::npos) << line;
    EXPECT_EQ(weft::parlooper::parse_loop_string(line, 3).inline_specs.size(), 1u) << line;
  }
}

TEST_F(WeftTuneCli, MeasureRanksAFileOfStringsWithTheRealSampleAndListsTheFailedOnes) {
  if (std::string(WEFT_GEMM_PATH).empty()) GTEST_SKIP() << "the GEMM samples were not built";
  const std::string strings = write_file("strings.txt",
                                         "# PARLOOPER's default first\n"
                                         "aBC\n"
                                         "\n"
                                         "b[,,,(2)]aCb   # blocked, inline\n"
                                         "abx\n"
                                         "aBC\n");
  const std::string plot = (dir_ / "ranking.svg").string();
  const Result r = tune("measure --strings " + strings + " --repeat 2 --plot " + plot + " -- " + WEFT_GEMM_PATH +
                        " {} 64 64 64 16 16 16 1 1 2 --threads 2 --warmup 0");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("3 loop strings, 2 runs (median) each"), std::string::npos) << r.out;
  const auto out = lines(r.out);
  ASSERT_GE(out.size(), 6u) << r.out;
  EXPECT_NE(out[1].find("vs best"), std::string::npos) << r.out;
  for (const std::string& row : {out[2], out[3]}) {
    EXPECT_TRUE(row.find("aBC  (first)") != std::string::npos || row.find("b[,,,(2)]aCb") != std::string::npos) << row;
    EXPECT_NE(row.find("x "), std::string::npos) << row;
  }
  EXPECT_EQ(out[2].find("   1 "), 0u) << r.out;
  EXPECT_NE(r.out.find("failed: 1 of 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("abx  exit status 2: weft-gemm: loop_string"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("abx: FAILED"), std::string::npos) << r.err;
  ASSERT_TRUE(fs::exists(plot));
  EXPECT_GT(fs::file_size(plot), 500u);

  // Nothing measured: the table still says why, and the status is a run-time failure.
  const std::string bad = write_file("bad.txt", "xyz\n");
  const Result none = tune("measure --strings " + bad + " -- " + WEFT_GEMM_PATH + " {} 64 64 64 16 16 16");
  EXPECT_EQ(none.status, 1) << none.err;
  EXPECT_NE(none.out.find("failed: 1 of 1"), std::string::npos) << none.out;
}

// In FP32, then in bf16 (--dtype bf16, the samples with USE_BF16=1) into the same database: each
// precision's `auto` takes its own record.
TEST_F(WeftTuneCli, TunesTheGemmPassesAndTheMlpForTheSamplesAutoMode) {
  if (std::string(WEFT_GEMM_PATH).empty()) GTEST_SKIP() << "the GEMM samples were not built";
  struct Case {
    std::string tune_args, kind, program, after_k;  // after_k: the forward's n_layers, else n_iters
  };
  const std::string small = " --threads 2 --budget 0.2 --top-k 6 --finalists 1 --bn 16 --db " + db_;
  const std::vector<Case> cases = {
      {"gemm --M 48 --N 32 --K 64 --bm 16 --bk 16,32 --kbf 1,2" + small, "gemm_fwd", WEFT_GEMM_PATH, "1"},
      {"gemm --M 48 --N 32 --K 64 --pass bwd --bm 16,32 --bk 16 --mbf 1,2 --private-trans 0,1" + small, "gemm_bwd",
       WEFT_GEMM_BWD_PATH, "2"},
      {"gemm --M 48 --N 32 --K 64 --pass upd --bm 16 --bk 16 --nbf 1,2" + small, "gemm_upd", WEFT_GEMM_UPD_PATH, "2"},
      {"gemm --M 64 --N 32 --K 64 --layers 2 --bm 16,32 --kbf 1" + small, "gemm_mlp", WEFT_GEMM_PATH, "2"},
  };
  for (const char* dtype : {"fp32", "bf16"}) {
    const bool bf16 = std::string(dtype) == "bf16";
    for (const Case& c : cases) {
      const std::string args = c.tune_args + (bf16 ? " --dtype bf16" : "");
      const Result tuned = tune(args);
      ASSERT_EQ(tuned.status, 0) << args << "\n" << tuned.err;
      EXPECT_NE(tuned.out.find("saved to " + db_), std::string::npos) << tuned.out;
      const auto records = weft::tuner::TuningDatabase(db_).load().records;
      ASSERT_FALSE(records.empty());
      const weft::tuner::TuningRecord& record = records.back();
      EXPECT_EQ(record.key.kind, c.kind);
      EXPECT_EQ(record.key.dtype, dtype);

      // The sample finds the record through WEFT_TUNING_DB, runs it and checks it ("auto M N K"
      // and the MLP's layers; the backward passes take n_iters there).
      const std::string M = std::to_string(record.key.shape[0].second);
      const weft::samples::ProcessResult run = weft::samples::run_process(
          {"/usr/bin/env", "WEFT_TUNING_DB=" + db_, kNoShippedTuning, bf16 ? "USE_BF16=1" : "USE_BF16=0", c.program,
           "auto", M, "32", "64", c.after_k, "--threads", "2", "--warmup", "0"},
          60);
      EXPECT_EQ(run.exit_status, 0) << c.program << "\n" << run.err;
      EXPECT_NE(run.out.find("auto: exact hit: " + record.config.loop_string + " "), std::string::npos)
          << record.config.to_string() << "\n" << run.out;
      EXPECT_NE(run.out.find(std::string(" ") + dtype + " threads=2, "), std::string::npos) << run.out;
      EXPECT_NE(run.out.find(bf16 ? ": BF16, " : ": FP32, "), std::string::npos) << run.out;
      EXPECT_NE(run.out.find("check: PASSED"), std::string::npos) << run.out;
    }
  }
}

// --dtype f64 (weft-gemm's FP64): every pass tuned into its own fp64 records (odd tiles among the
// candidates: gemm_workload_test.cpp checks they are kept).
TEST_F(WeftTuneCli, TunesTheGemmPassesInF64IntoTheirOwnRecords) {
  const std::string small = " --threads 2 --budget 0.2 --top-k 4 --finalists 1 --bn 16 --dtype f64 --db " + db_;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"gemm --M 48 --N 32 --K 64 --bm 16 --bk 15", "gemm_fwd"},
      {"gemm --M 48 --N 32 --K 64 --pass bwd --bm 15 --bk 16", "gemm_bwd"},
      {"gemm --M 48 --N 32 --K 64 --pass upd --bm 16 --bk 15", "gemm_upd"}};
  for (const auto& [args, kind] : cases) {
    const Result tuned = tune(args + small);
    ASSERT_EQ(tuned.status, 0) << args << "\n" << tuned.err;
    const auto records = weft::tuner::TuningDatabase(db_).load().records;
    ASSERT_FALSE(records.empty());
    EXPECT_EQ(records.back().key.kind, kind);
    EXPECT_EQ(records.back().key.dtype, "fp64");
  }
}

TEST_F(WeftTuneCli, ConvUsageErrorsAndDryRun) {
  const std::string shape = " --N 1 --H 8 --W 8 --C 16 --K 16 --R 3 --S 3 --pad 1";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"conv --pass mlp" + shape, "'mlp' is no convolution pass (fwd, bwd or upd)"},
      {"conv --N 1 --H 8 --W 8 --C 16 --K 16 --R 3", "conv needs --S"},
      {"conv" + shape + " --pad_h 1", "--pad and --pad_h both set the same size"},
      {"conv" + shape + " --stride 0", "--stride: 0 is outside"},
      {"conv" + shape + " --dtype f16", "--dtype is f32 or bf16 (the samples' precisions), not 'f16'"},
      {"conv --N 1 --H 2 --W 8 --C 16 --K 16 --R 3 --S 3", "H"},  // the filter does not fit the image
      {"conv" + shape + " --spec a_0_K,b_0_M,c_0_N", "loops"},
      {"conv" + shape + " --tile-bound --bc 8,16 --bk 16", "tries one value per tile, but bc takes 8 and 16"},
  };
  for (const auto& [args, says] : bad) {
    const Result r = tune(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << args << "\n" << r.err;
  }
  const Result dry = tune("conv --pass upd --threads 2 --dry-run" + shape + " --bc 16 --bk 16");
  EXPECT_EQ(dry.status, 0) << dry.err;
  EXPECT_NE((dry.out + dry.err).find("conv_upd N=1 H=8"), std::string::npos) << dry.out;
  // Parallel reductions (partial filters): d, a reduction of the update, runs in parallel; a, b, c,
  // e run once at this shape and stand outermost.
  EXPECT_NE(dry.out.find("abceDfg"), std::string::npos) << dry.out;
  // A tile-bound search says its tiles in the key.
  const Result bound = tune("conv --pass bwd --threads 1 --dry-run --tile-bound" + shape + " --bc 8 --bk 16");
  EXPECT_EQ(bound.status, 0) << bound.err;
  EXPECT_NE((bound.out + bound.err).find("threads=1 tiles bc=8 bk=16"), std::string::npos) << bound.out;
}

// A tiny tuning run per pass into a temporary database, then the program's `auto` reading it.
TEST_F(WeftTuneCli, TunesTheConvolutionPassesForTheSamplesAutoMode) {
#if defined(WEFT_CONV_FWD_PATH) && defined(WEFT_CONV_BWD_PATH) && defined(WEFT_CONV_UPD_PATH)
  const std::vector<std::pair<std::string, std::string>> passes = {
      {"fwd", WEFT_CONV_FWD_PATH}, {"bwd", WEFT_CONV_BWD_PATH}, {"upd", WEFT_CONV_UPD_PATH}};
  for (const auto& [pass, program] : passes) {
    const Result tuned = tune("conv --pass " + pass + " --N 1 --H 8 --W 8 --C 16 --K 16 --R 3 --S 3 --pad 1 " +
                              "--bc 16 --bk 16 --threads 1 --budget 0.2 --top-k 4 --finalists 1 --db " + db_);
    ASSERT_EQ(tuned.status, 0) << pass << "\n" << tuned.err;
    const auto records = weft::tuner::TuningDatabase(db_).load().records;
    ASSERT_FALSE(records.empty());
    const weft::tuner::TuningRecord& record = records.back();
    EXPECT_EQ(record.key.kind, "conv_" + pass);
    const weft::samples::ProcessResult run = weft::samples::run_process(
        {"/usr/bin/env", "WEFT_TUNING_DB=" + db_, kNoShippedTuning, program, "auto", "1", "8", "8", "16", "16", "3",
         "3", "1", "1", "1", "1", "2", "--threads", "1", "--warmup", "0"},
        60);
    EXPECT_EQ(run.exit_status, 0) << program << "\n" << run.err;
    EXPECT_NE(run.out.find("auto: exact hit: " + record.config.loop_string + " bc=16 bk=16"), std::string::npos)
        << record.config.to_string() << "\n" << run.out;
    EXPECT_NE(run.out.find("check: PASSED"), std::string::npos) << run.out;
  }
  // bf16 (the update here): its own record, which USE_BF16=1 auto finds and runs.
  const Result bf16 = tune("conv --pass upd --dtype bf16 --N 1 --H 7 --W 7 --C 16 --K 16 --R 3 --S 3 --pad 1 "
                           "--bc 16 --bk 16 --threads 1 --budget 0.2 --top-k 4 --finalists 1 --db " + db_);
  ASSERT_EQ(bf16.status, 0) << bf16.err;
  const weft::tuner::TuningRecord bf16_record = weft::tuner::TuningDatabase(db_).load().records.back();
  EXPECT_EQ(bf16_record.key.dtype, "bf16");
  const weft::samples::ProcessResult bf16_run = weft::samples::run_process(
      {"/usr/bin/env", "USE_BF16=1", "WEFT_TUNING_DB=" + db_, kNoShippedTuning, WEFT_CONV_UPD_PATH, "auto", "1", "7",
       "7", "16", "16", "3", "3", "1", "1", "1", "1", "2", "--threads", "1", "--warmup", "0"},
      60);
  EXPECT_EQ(bf16_run.exit_status, 0) << bf16_run.err;
  EXPECT_NE(bf16_run.out.find("auto: exact hit: " + bf16_record.config.loop_string + " bc=16 bk=16"),
            std::string::npos)
      << bf16_run.out;
  EXPECT_NE(bf16_run.out.find("weft-conv-upd: BF16, "), std::string::npos) << bf16_run.out;
  EXPECT_NE(bf16_run.out.find("check: PASSED"), std::string::npos) << bf16_run.out;
  // Another shape that nothing near was tuned for: the default, said so, its blocks no larger than
  // the channels (C = 3, K = 8).
  const weft::samples::ProcessResult other = weft::samples::run_process(
      {"/usr/bin/env", "WEFT_TUNING_DB=" + db_, kNoShippedTuning, WEFT_CONV_FWD_PATH, "auto", "1", "7", "7", "3", "8",
       "1", "1", "1", "1", "0", "0", "2", "--threads", "1", "--warmup", "0"},
      60);
  EXPECT_EQ(other.exit_status, 0) << other.err;
  EXPECT_NE(other.out.find("auto: heuristic: Abcdefg bc=3 bk=8"), std::string::npos) << other.out;
#else
  GTEST_SKIP() << "the convolution samples were not built";
#endif
}

#endif  // WEFT_TUNER_HAVE_CLI

}  // namespace
