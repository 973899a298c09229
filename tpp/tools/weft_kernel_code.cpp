// weft-kernel-code: writes the machine code of one TPP kernel to a file, for a disassembler or
// llvm-mca (scripts/mca_kernels.py):
//
//   weft-kernel-code [--isa ISA] [--types T] --out FILE brgemm M N K [--beta B] [--batch KIND]
//   weft-kernel-code [--isa ISA] [--types T] [--ld LD] --out FILE unary OP M N
//   weft-kernel-code [--isa ISA] [--types T] [--ld LD] --out FILE binary OP M N
//
// Leading dimensions are tight (M), or LD for every operand of an element-wise kernel (--ld). The code can be for any ISA of the architecture the program was
// built for, whether this CPU runs it or not: nothing is run. It prints one line: the kernel, its
// plan where it has one, and the bytes written.
// Exit status (weft/cli/run_tool.hpp): 0 success; 2 bad usage (an unknown kind, op, ISA or type, a
// descriptor the family rejects); 1 a run-time failure (the file cannot be written).
#include <cstdint>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <weft/cli/command_line.hpp>
#include <weft/cli/run_tool.hpp>

#include "weft/jit/cpu.hpp"
#include "weft/jit/error.hpp"
#include "weft/tpp/binary.hpp"
#include "weft/tpp/brgemm.hpp"
#include "weft/tpp/unary.hpp"

namespace {

using weft::cli::UsageError;
using weft::jit::DataType;
using weft::tpp::DataTypes;

const weft::cli::Tool kTool{
    "weft-kernel-code",
    "usage: weft-kernel-code [--isa ISA] [--types T] --out FILE KIND ARGS...\n"
    "  KIND ARGS: brgemm M N K [--beta 0|1] [--batch strided|offsets|addresses]\n"
    "             unary OP M N      (OP: relu, exp, gelu, ...)\n"
    "             binary OP M N     (OP: add, sub, mul, div, min, max)\n"
    "  --isa ISA    the instruction set (default: the selected one, WEFT_ISA)\n"
    "  --types T    f32 (default), f64, bf16 (bf16 in and out, f32 arithmetic) or bf16:f32 (bf16 in,\n"
    "               f32 out)\n"
    "  --ld LD      unary, binary: the leading dimension of every operand (default M)\n"
    "  --out FILE   where the code goes (raw bytes)\n"
    "  exit status: 0 success, 1 run-time failure, 2 bad usage\n"};

DataTypes parse_types(const std::string& text) {
  if (text == "f32") return {};
  if (text == "f64") return {.in = DataType::f64, .out = DataType::f64, .compute = DataType::f64};
  if (text == "bf16") return {.in = DataType::bf16, .out = DataType::bf16, .compute = DataType::f32};
  if (text == "bf16:f32") return {.in = DataType::bf16, .out = DataType::f32, .compute = DataType::f32};
  throw UsageError("--types: '" + text + "' is none of f32, f64, bf16, bf16:f32");
}

// The enumerator of E whose to_string is `name`; E's values count from 0 without gaps, and
// to_string names a value past the last "op#N".
template <class E>
E parse_op(const std::string& name, const char* family) {
  std::string known;
  for (int i = 0; i < 256; ++i) {
    const auto op = static_cast<E>(i);
    const std::string n = weft::tpp::to_string(op);
    if (n.rfind("op#", 0) == 0) break;
    if (n == name) return op;
    known += (known.empty() ? "" : ", ") + n;
  }
  throw UsageError(std::string(family) + " op '" + name + "' is none of " + known);
}

std::int64_t size_argument(const std::vector<std::string>& args, std::size_t i, const char* what) {
  if (i >= args.size()) throw UsageError(std::string("missing ") + what);
  return weft::cli::parse_integer(args[i], what, 1, std::int64_t{1} << 30);
}

int run(int argc, char** argv) {
  CLI::App app;
  std::string isa_name, types_name = "f32", out, batch = "strided";
  std::int64_t beta = 1, ld = 0;
  std::vector<std::string> args;
  weft::cli::add_text(app, "--isa", isa_name, "instruction set");
  weft::cli::add_text(app, "--types", types_name, "data types");
  weft::cli::add_text(app, "--out", out, "output file")->required();
  weft::cli::add_integer(app, "--beta", beta, 0, 1, "brgemm: 0 overwrites C, 1 adds to it");
  weft::cli::add_text(app, "--batch", batch, "brgemm: batch kind");
  weft::cli::add_integer(app, "--ld", ld, 1, std::int64_t{1} << 30, "unary, binary: leading dimension");
  app.add_option("args", args);
  weft::cli::parse(app, argc, argv);

  weft::jit::Isa isa = weft::jit::selected_isa();
  if (!isa_name.empty()) {
    const auto parsed = weft::jit::parse_isa(isa_name);
    if (!parsed || *parsed == weft::jit::Isa::reference)
      throw UsageError("--isa: '" + isa_name + "' is no instruction set weft generates code for");
    isa = *parsed;
  }
  const DataTypes types = parse_types(types_name);
  if (args.empty()) throw UsageError("missing KIND (brgemm, unary or binary)");
  const std::string& kind = args[0];

  std::vector<std::uint8_t> code;
  std::string what;
  try {
    if (kind == "brgemm") {
      const std::int64_t m = size_argument(args, 1, "M"), n = size_argument(args, 2, "N"), k = size_argument(args, 3, "K");
      if (args.size() > 4) throw UsageError("brgemm takes M N K, not '" + args[4] + "'");
      // size_argument bounds M, N and K to 2^30: they fit the descriptor's int32 fields.
      const auto m32 = static_cast<std::int32_t>(m), n32 = static_cast<std::int32_t>(n), k32 = static_cast<std::int32_t>(k);
      weft::tpp::BrgemmDesc d{.m = m32, .n = n32, .k = k32, .lda = m, .ldb = k, .ldc = m, .beta = static_cast<int>(beta)};
      if (batch == "strided") d.batch = weft::tpp::BrgemmBatch::strided;
      else if (batch == "offsets") d.batch = weft::tpp::BrgemmBatch::offsets;
      else if (batch == "addresses") d.batch = weft::tpp::BrgemmBatch::addresses;
      else throw UsageError("--batch: '" + batch + "' is none of strided, offsets, addresses");
      d.types = types;
      code = weft::tpp::brgemm_kernel(d, isa).code();
      what = weft::tpp::to_string(d) + " (" + weft::tpp::to_string(weft::tpp::plan_brgemm(d, isa)) + ")";
    } else if (kind == "unary" || kind == "binary") {
      if (args.size() < 2) throw UsageError("missing OP");
      const std::int64_t m = size_argument(args, 2, "M"), n = size_argument(args, 3, "N");
      if (args.size() > 4) throw UsageError(kind + " takes OP M N, not '" + args[4] + "'");
      if (ld == 0) ld = m;
      if (ld < m) throw UsageError("--ld " + std::to_string(ld) + " is below M " + std::to_string(m));
      if (kind == "unary") {
        weft::tpp::UnaryDesc d{.op = parse_op<weft::tpp::UnaryOp>(args[1], "unary"), .m = m, .n = n,
                               .ld_in = ld, .ld_out = ld};
        d.types = types;
        code = weft::tpp::unary_kernel(d, isa).code();
        what = weft::tpp::to_string(d);
      } else {
        weft::tpp::BinaryDesc d{.op = parse_op<weft::tpp::BinaryOp>(args[1], "binary"), .m = m, .n = n,
                                .ld_in0 = ld, .ld_in1 = ld, .ld_out = ld};
        d.types = types;
        code = weft::tpp::binary_kernel(d, isa).code();
        what = weft::tpp::to_string(d);
      }
    } else {
      throw UsageError("KIND '" + kind + "' is none of brgemm, unary, binary");
    }
  } catch (const UsageError&) {
    throw;
  } catch (const weft::Error& e) {
    throw UsageError(e.what());  // the family rejected the descriptor, or the ISA has no emitter
  }
  std::ofstream file(out, std::ios::binary);
  file.write(reinterpret_cast<const char*>(code.data()), static_cast<std::streamsize>(code.size()));
  if (!file.flush()) throw weft::Error("cannot write " + out);
  std::cout << what << " " << weft::jit::to_string(isa) << ": " << code.size() << " bytes -> " << out << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return weft::cli::run_tool(kTool, [&] { return run(argc, argv); });
}
