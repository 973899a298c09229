// The #include lines reached from some of weft's source files, following weft's own headers: a
// quoted `weft/<layer>/...` header is read from <layer>/include, any other quoted header from the
// including file's folder (tpp/src's private headers); system and third-party headers are listed,
// not followed. Tests use it to keep a layer's files off a dependency (Xbyak, the emitters).
//
//   for (const auto& r : weft::test::include_closure(root, {root / "tpp/src/unary_plan.cpp"}))
//     EXPECT_EQ(r.header.find("xbyak"), std::string::npos) << r.chain << " includes " << r.header;
#pragma once

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace weft::test {

struct ReachedInclude {
  std::string chain;   // the files that lead to the line: "tpp/src/unary_plan.cpp -> op_properties.hpp"
  std::string header;  // as the include line names it
  bool readable = true;  // false: the starting file could not be opened (header is its path)
};

inline std::vector<ReachedInclude> include_closure(const std::filesystem::path& root,
                                                   const std::vector<std::filesystem::path>& files) {
  namespace fs = std::filesystem;
  const std::regex include_line(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  const std::regex weft_header(R"(weft/(\w+)/.+)");
  struct Visit {
    fs::path file;
    std::string chain;
  };
  std::vector<Visit> todo;
  for (const fs::path& f : files) todo.push_back({f, fs::relative(f, root).string()});
  std::vector<ReachedInclude> reached;
  std::set<fs::path> seen;
  while (!todo.empty()) {
    const Visit v = todo.back();
    todo.pop_back();
    if (!seen.insert(v.file).second) continue;
    std::ifstream in(v.file);
    if (!in) {
      reached.push_back({v.chain, v.file.string(), false});
      continue;
    }
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, include_line)) continue;
      const std::string header = m[2];
      reached.push_back({v.chain, header});
      if (m[1] != "\"") continue;
      std::smatch layer;
      const fs::path next = std::regex_match(header, layer, weft_header) ? root / layer[1].str() / "include" / header
                                                                          : v.file.parent_path() / header;
      if (fs::exists(next)) todo.push_back({next, v.chain + " -> " + header});
    }
  }
  return reached;
}

}  // namespace weft::test
