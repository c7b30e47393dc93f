//===- FormatTest.cpp - Display rules for numbers -------------------------===//

#include "runtime/Format.h"
#include "ir/Units.h"

#include <gtest/gtest.h>

using namespace mlsc;

namespace {

Dimension dim(const char *Unit) {
  UnitParseError Err;
  return parseUnit(Unit, Err)->Dim;
}

TEST(Format, FourSignificantDigitsInAFittingUnit) {
  EXPECT_EQ(formatQuantity(0.021074, dim("s")), "21.07 ms");
  EXPECT_EQ(formatQuantity(141.2e9, dim("B")), "141.2 GB");
  EXPECT_EQ(formatQuantity(989e12, dim("FLOP/s")), "989 TFLOP/s");
  EXPECT_EQ(formatQuantity(3.35e12, dim("B/s")), "3.350 TB/s");
  EXPECT_EQ(formatQuantity(295.224, dim("FLOP/B")), "295.2 FLOP/B");
  EXPECT_EQ(formatQuantity(700, dim("W")), "700 W");
  EXPECT_EQ(formatQuantity(0.5, dim("tok")), "0.5000 tok");
  // The largest prefix up to 999.9; beyond it, scientific notation.
  EXPECT_EQ(formatQuantity(3.14e20, dim("FLOP")), "314 EFLOP");
  EXPECT_EQ(formatQuantity(4.818e22, dim("FLOP")), "4.818e+22 FLOP");
}

TEST(Format, RoundingMovesUpAUnit) {
  EXPECT_EQ(formatQuantity(0.99996, dim("s")), "1 s");
  EXPECT_EQ(formatQuantity(999.96e9, dim("B")), "1 TB");
}

TEST(Format, Times) {
  EXPECT_EQ(formatQuantity(90, dim("s")), "1.500 min");
  EXPECT_EQ(formatQuantity(3 * 3600, dim("s")), "3 h");
  EXPECT_EQ(formatQuantity(365 * 86400.0, dim("s")), "365 day");
  EXPECT_EQ(formatQuantity(2.5e-6, dim("s")), "2.500 us");
}

TEST(Format, Numbers) {
  EXPECT_EQ(formatNumber(8), "8");
  EXPECT_EQ(formatNumber(70.6e9), "7.060e+10");
  EXPECT_EQ(formatNumber(10.504), "10.50");
  EXPECT_EQ(formatNumber(0.2584), "0.2584");
  EXPECT_EQ(formatQuantity(1, Dimension(), true), "true");
}

} // namespace
