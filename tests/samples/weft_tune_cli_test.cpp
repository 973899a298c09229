// weft-tune, run in-process through weft_tune_main: exit status 2 with a message naming the
// argument for every kind of bad usage, checked before any measuring; 0 for help and dry runs.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#if __has_include("tune_command.hpp")  // the tool is built with the tuner
#include "tune_command.hpp"
#define WEFT_TUNER_HAVE_CLI 1
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
  r.status = weft::tuner::weft_tune_main(static_cast<int>(words.size()), argv.data(), out, err);
  r.out = read_all(out);
  r.err = read_all(err);
  return r;
}

class WeftTuneCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("weft-tune-cli-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    db_ = (dir_ / "db.jsonl").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string db_;
};

TEST_F(WeftTuneCli, EveryBadArgumentExitsWithTwoAndNamesIt) {
  struct Case {
    std::string args, says;
  };
  const std::string gemm = "gemm --M 64 --N 64 --K 64 ";
  const std::string con = "contraction --dims m,n,k --sizes 8,8,8 ";
  const std::vector<Case> cases = {
      {"", "missing command"},
      {"frobnicate", "unknown command 'frobnicate'"},
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
  for (const char* help : {"--help", "-h", "gemm --help", "contraction -h", "show --help"}) {
    const Result r = tune(help);
    EXPECT_EQ(r.status, 0) << help << "\n" << r.err;
    EXPECT_NE(r.out.find("exit status: 0 success, 1 run-time failure, 2 bad usage"), std::string::npos) << help;
  }
  const Result dry = tune("gemm --M 64 --N 64 --K 64 --threads 2 --dry-run --bm=32 --bn 32");
  EXPECT_EQ(dry.status, 0) << dry.err;
  EXPECT_NE(dry.out.find("enumerated"), std::string::npos) << dry.out;
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

#endif  // WEFT_TUNER_HAVE_CLI

}  // namespace
