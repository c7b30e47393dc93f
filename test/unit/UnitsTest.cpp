//===- UnitsTest.cpp - Known answers for units and dimensions -------------===//

#include "ir/Units.h"

#include <gtest/gtest.h>

using namespace mlsc;

namespace {

Unit parse(const char *Text) {
  UnitParseError Err;
  std::optional<Unit> U = parseUnit(Text, Err);
  EXPECT_TRUE(U.has_value()) << Text << ": " << Err.Message;
  return U.value_or(Unit{});
}

TEST(Units, BinaryAndDecimalPrefixesAreDistinct) {
  // 80 GiB = 80 * 2^30 B = 85.899345920 GB.
  EXPECT_DOUBLE_EQ(80 * parse("GiB").Scale, 85.899345920 * parse("GB").Scale);
  EXPECT_DOUBLE_EQ(parse("KiB").Scale, 1024.0);
  EXPECT_DOUBLE_EQ(parse("kB").Scale, 1000.0);
  EXPECT_EQ(parse("GiB").Dim, parse("GB").Dim);
}

TEST(Units, BitsAndBytesAreDistinct) {
  // 400 Gb/s = 50 GB/s.
  EXPECT_DOUBLE_EQ(400 * parse("Gb/s").Scale, 50 * parse("GB/s").Scale);
  EXPECT_DOUBLE_EQ(parse("Gbps").Scale, parse("Gb/s").Scale);
  EXPECT_EQ(parse("Gb/s").Dim,
            Dimension::base(BaseDim::Data) / Dimension::base(BaseDim::Time));
}

TEST(Units, RidgePointOfH100) {
  // 989 TFLOP/s / 3.35 TB/s = 295.2 FLOP/B.
  Unit Rate = parse("TFLOP/s");
  Unit BW = parse("TB/s");
  double Ridge = (989 * Rate.Scale) / (3.35 * BW.Scale);
  EXPECT_NEAR(Ridge, 295.22, 0.01);
  EXPECT_EQ((Rate.Dim / BW.Dim).str(), "FLOP/B");
}

TEST(Units, CompoundUnits) {
  EXPECT_DOUBLE_EQ(parse("kWh").Scale, 3.6e6);
  EXPECT_DOUBLE_EQ(parse("MWh").Scale, 3.6e9);
  EXPECT_EQ(parse("kW").Dim.str(), "W");
  EXPECT_DOUBLE_EQ(parse("USD/h").Scale, 1.0 / 3600);
  EXPECT_EQ(parse("g/kWh").Dim.str(), "kg/J");
  EXPECT_DOUBLE_EQ(parse("g/kWh").Scale, 1e-3 / 3.6e6);
  EXPECT_EQ(parse("USD/kWh").Dim.describe(), "an energy price [USD/J]");
  EXPECT_EQ(parse("tok/s").Dim.str(), "tok/s");
  EXPECT_EQ(parse("req/s").Dim.str(), "req/s");
  EXPECT_DOUBLE_EQ(parse("ms").Scale, 1e-3);
  EXPECT_DOUBLE_EQ(parse("min").Scale, 60);
  EXPECT_DOUBLE_EQ(parse("mm").Scale, 1e-3);
  EXPECT_DOUBLE_EQ(parse("day").Scale, 86400);
  EXPECT_DOUBLE_EQ(parse("year").Scale, 365 * 86400.0);
  EXPECT_DOUBLE_EQ(parse("TOPS").Scale, 1e12);
  EXPECT_EQ(parse("TOPS").Dim, parse("TFLOP/s").Dim);
  EXPECT_DOUBLE_EQ(parse("%").Scale, 0.01);
  EXPECT_DOUBLE_EQ(parse("L/kWh").Scale, 1e-3 / 3.6e6);
}

TEST(Units, PowersAndProducts) {
  Unit U = parse("kg*m^2/s^2");
  EXPECT_DOUBLE_EQ(U.Scale, 1.0);
  EXPECT_EQ(U.Dim.str(), "m^2*kg/s^2");
  EXPECT_DOUBLE_EQ(parse("km^2").Scale, 1e6);
  EXPECT_EQ(parse("s^-1").Dim.str(), "1/s");
}

TEST(Units, EnergyIsABaseDimension) {
  // Documented departure: kg*m^2/s^2 is not an energy in mlsc.
  EXPECT_NE(parse("kg*m^2/s^2").Dim, parse("J").Dim);
  EXPECT_EQ(parse("W").Dim, parse("J/s").Dim);
}

TEST(Units, UnknownUnitSuggestsAFix) {
  UnitParseError Err;
  EXPECT_FALSE(parseUnit("TBs", Err));
  EXPECT_EQ(Err.Message, "unknown unit `TBs`");
  EXPECT_EQ(Err.Offset, 0u);
  EXPECT_FALSE(Err.Suggestion.empty());
  EXPECT_FALSE(parseUnit("TB/sec", Err));
  EXPECT_EQ(Err.Offset, 3u);
  EXPECT_EQ(Err.Suggestion, "TB/s");
  EXPECT_FALSE(parseUnit("TFLOPs", Err));
  EXPECT_EQ(Err.Suggestion, "TFLOP/s");
  // Milli-bytes and binary seconds do not exist.
  EXPECT_FALSE(parseUnit("mB", Err));
  EXPECT_FALSE(parseUnit("Gis", Err));
}

TEST(Units, SuggestUnitForExpectedDimension) {
  Dimension Bandwidth = parse("B/s").Dim;
  EXPECT_EQ(suggestUnitFor("TB", Bandwidth).value_or(""), "TB/s");
  EXPECT_EQ(suggestUnitFor("TFLOP", parse("FLOP/s").Dim).value_or(""),
            "TFLOP/s");
  EXPECT_EQ(suggestUnitFor("", parse("tok").Dim).value_or(""), "tok");
  EXPECT_EQ(suggestUnitFor("Wh", parse("W").Dim).value_or(""), "W");
  // A prefix carries over to a unit on the same base only: a data size
  // written for a token count is not a billion tokens (it suggested
  // `Gtok`), a token count for a token rate keeps its scale.
  EXPECT_EQ(suggestUnitFor("GB", parse("tok").Dim).value_or(""), "tok");
  EXPECT_EQ(suggestUnitFor("Mtok", parse("tok/s").Dim).value_or(""), "Mtok/s");
  EXPECT_EQ(suggestUnitFor("kW", parse("J").Dim).value_or(""), "J");
}

TEST(Dimension, Describe) {
  EXPECT_EQ(parse("B/s").Dim.describe(), "a bandwidth [B/s]");
  EXPECT_EQ(parse("TB").Dim.describe(), "a data size [B]");
  EXPECT_EQ(Dimension().describe(), "a dimensionless number [1]");
  EXPECT_EQ(parse("m/s").Dim.describe(), "[m/s]");
}

TEST(Dimension, RootsAndPowers) {
  Dimension S2 = *parse("s").Dim.pow(2);
  EXPECT_EQ(S2.root(2), parse("s").Dim);
  EXPECT_FALSE(parse("s").Dim.root(2).has_value());
  EXPECT_FALSE(parse("s").Dim.pow(1000).has_value());
}

} // namespace
