// Asserts that loading a bad file fails with core::InputError naming the file, the 1-based line,
// the field and the reason; shared by the catalog and cluster-file tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"

namespace fmsim::testing {

/// Calls `load` and expects an InputError whose file contains `file`, at `line`, on `field`,
/// with `message` in its text.
template <class Load>
void expect_input_error(Load&& load, const std::string& file, int line, const std::string& field,
                        const std::string& message) {
  try {
    load();
    ADD_FAILURE() << file << " loaded without error";
  } catch (const core::InputError& e) {
    EXPECT_NE(e.file().find(file), std::string::npos) << e.what();
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(e.message().find(message), std::string::npos) << e.what();
  }
}

}  // namespace fmsim::testing
