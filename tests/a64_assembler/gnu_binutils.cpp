#include "gnu_binutils.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "run_program.hpp"

namespace weft::test::a64 {

namespace {

constexpr const char* kAs = WEFT_A64_AS;
constexpr const char* kObjdump = WEFT_A64_OBJDUMP;

void require_tools() {
  for (const char* tool : {kAs, kObjdump}) {
    if (std::string(tool).empty()) {
      throw std::runtime_error(
          "aarch64-linux-gnu-as or aarch64-linux-gnu-objdump was not found when the build was configured; "
          "install the Debian package binutils-aarch64-linux-gnu and configure again");
    }
  }
}

// A directory of its own for one call's files (tests of a suite may run as parallel processes),
// removed with everything in it at the end of the call.
class ScratchDirectory {
 public:
  ScratchDirectory() {
    static std::atomic<unsigned> calls{0};
    std::random_device random;
    path_ = std::filesystem::temp_directory_path() / ("weft_a64_golden_" + std::to_string(getpid()) + "_" +
                                                      std::to_string(calls++) + "_" + std::to_string(random()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

std::string quoted(const std::string& path) { return "'" + path + "'"; }

// Assembles `source` (snippet i after the symbol case_i) and returns objdump -d's lines.
std::vector<std::string> assemble_and_dump(const std::string& source) {
  require_tools();
  ScratchDirectory dir;
  const std::string s_file = dir.file("golden.s"), o_file = dir.file("golden.o");
  std::ofstream(s_file) << source;
  // Warnings are errors: a golden case must not be an encoding GNU as calls unpredictable.
  const ProgramResult as =
      run_program(std::string(kAs) + " --fatal-warnings -o " + quoted(o_file) + " " + quoted(s_file), "a64_as");
  if (as.status != 0) {
    std::ostringstream message;
    message << "aarch64-linux-gnu-as rejected the golden source:\n" << as.err;
    // Quote the lines it names.
    std::vector<std::string> lines;
    std::istringstream in(source);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::istringstream err(as.err);
    for (std::string line; std::getline(err, line);) {
      const auto at = line.find(".s:");
      if (at == std::string::npos) continue;
      const unsigned long number = std::strtoul(line.c_str() + at + 3, nullptr, 10);
      if (number >= 1 && number <= lines.size()) message << "  line " << number << ": " << lines[number - 1] << "\n";
    }
    throw std::runtime_error(message.str());
  }
  const ProgramResult dump = run_program(std::string(kObjdump) + " -d -z " + quoted(o_file), "a64_objdump");
  if (dump.status != 0) throw std::runtime_error("aarch64-linux-gnu-objdump failed:\n" + dump.err);
  std::vector<std::string> lines;
  std::istringstream in(dump.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string symbol_source(const std::vector<std::string>& snippets) {
  // Armv8.1 (ldaddal) and the FEAT_BF16 instructions (Armv8.6's, optional from Armv8.2).
  std::string source = ".arch armv8.1-a\n.arch_extension bf16\n.text\n";
  for (std::size_t i = 0; i < snippets.size(); ++i) source += "case_" + std::to_string(i) + ":\n" + snippets[i] + "\n";
  return source;
}

// "   4:\td503201f \tnop" -> word and text; false for other lines.
bool parse_instruction(const std::string& line, std::uint32_t& word, std::string& text) {
  unsigned long address = 0;
  unsigned value = 0;
  int consumed = 0;
  if (std::sscanf(line.c_str(), " %lx:\t%8x%n", &address, &value, &consumed) != 2) return false;
  word = value;
  text = line.substr(static_cast<std::size_t>(consumed));
  const auto first = text.find_first_not_of(" \t");
  text = first == std::string::npos ? "" : text.substr(first);
  return true;
}

}  // namespace

std::vector<std::vector<std::uint32_t>> gnu_assemble(const std::vector<std::string>& snippets) {
  std::vector<std::vector<std::uint32_t>> words(snippets.size());
  std::vector<std::uint32_t>* current = nullptr;
  for (const std::string& line : assemble_and_dump(symbol_source(snippets))) {
    const auto open = line.find(" <case_");
    if (open != std::string::npos && line.back() == ':') {
      current = &words.at(std::stoul(line.substr(open + 7)));
      continue;
    }
    std::uint32_t word = 0;
    std::string text;
    if (current != nullptr && parse_instruction(line, word, text)) current->push_back(word);
  }
  return words;
}

std::vector<std::string> gnu_disassemble(const std::vector<std::uint32_t>& words) {
  std::string source = ".text\n";
  char line[32];
  for (std::uint32_t w : words) {
    std::snprintf(line, sizeof line, ".inst 0x%08x\n", w);
    source += line;
  }
  std::vector<std::string> texts;
  for (const std::string& dumped : assemble_and_dump(source)) {
    std::uint32_t word = 0;
    std::string text;
    if (parse_instruction(dumped, word, text)) texts.push_back(text);
  }
  return texts;
}

}  // namespace weft::test::a64
