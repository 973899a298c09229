// Options of a benchmark program next to Google Benchmark's own: take_flag pulls "--name=value" out
// of argv before benchmark::Initialize sees it (Google Benchmark rejects flags it does not know).
//
//   std::string value;
//   if (weft::bench::take_flag(argc, argv, "threads", value)) threads = std::atoi(value.c_str());
#pragma once

#include <cstring>
#include <string>

namespace weft::bench {

inline bool take_flag(int& argc, char** argv, const char* name, std::string& value) {
  const std::string prefix = std::string("--") + name + "=";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) {
      value = argv[i] + prefix.size();
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      return true;
    }
  }
  return false;
}

}  // namespace weft::bench
