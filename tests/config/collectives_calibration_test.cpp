// The shipped collective calibration parses and equals the library defaults.
#include "config/collectives_calibration.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "core/error.hpp"

namespace fmsim::config {
namespace {

TEST(CollectivesCalibration, ShippedFileEqualsLibraryDefaults) {
  // collectives::Calibration{} is what library callers get without a file; it must be the data.
  const collectives::Calibration shipped = load_collectives_calibration();
  EXPECT_EQ(shipped, collectives::Calibration{});
}

TEST(CollectivesCalibration, ValueWithoutSourceIsRejectedWithFileAndLine) {
  const std::string path = ::testing::TempDir() + "coll_cal_bad.yaml";
  std::ofstream(path) << "kind: CollectivesCalibration\nmax_channels: 32\n";
  try {
    load_collectives_calibration(path);
    FAIL() << "expected an InputError";
  } catch (const core::InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("coll_cal_bad.yaml"));
  }
}

}  // namespace
}  // namespace fmsim::config
