// weft::log(): unset, WEFT_LOG_LEVEL means warn, so that a warning about a user's file (a corrupt
// tuning database) reaches stderr while a healthy run, which logs at debug and info only, says
// nothing.
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "weft/jit/log.hpp"

namespace weft {
namespace {

TEST(Log, WarningsReachStderrByDefaultAndInfoDoesNot) {
  if (const char* level = std::getenv("WEFT_LOG_LEVEL"); level != nullptr && *level != '\0')
    GTEST_SKIP() << "WEFT_LOG_LEVEL is set";
  EXPECT_EQ(log().level(), spdlog::level::warn);
  ::testing::internal::CaptureStderr();
  log().info("an info line of the log test");
  log().warn("a warning of the log test");
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("an info line"), std::string::npos) << err;
  EXPECT_NE(err.find("a warning of the log test"), std::string::npos) << err;
}

}  // namespace
}  // namespace weft
