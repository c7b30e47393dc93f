//===- DefaultsTest.cpp - The table of defaults and calibrated factors ----===//

#include "runtime/Defaults.h"
#include "ir/Schema.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace mlsc;

namespace {

/// Defaults that lie outside their own plausible range today. The
/// serving-correctness work replaces them with defaults its evidence
/// supports; until then they are known, and listed: the test fails when a
/// default outside its range is not listed here, and when one listed here
/// has come back into its range (so the list stays true).
const std::set<std::string> KnownOutOfRange = {};

TEST(Defaults, EveryDefaultLiesInItsRangeButTheKnownExceptions) {
  for (const DefaultInfo &D : allDefaults()) {
    if (!D.hasValue() || !D.hasRange())
      continue;
    std::string Name = std::string(D.Kind) + "." + D.Field;
    EXPECT_LE(D.Low, D.High) << Name;
    if (KnownOutOfRange.count(Name))
      EXPECT_FALSE(D.inRange()) << Name << " is back in its range: take it "
                                << "off the list of known exceptions";
    else
      EXPECT_TRUE(D.inRange()) << Name << " = " << D.Value << " lies outside "
                               << D.Low << " to " << D.High;
  }
}

TEST(Defaults, EachRowStandsForAQuantityFieldOfItsDimension) {
  std::set<std::string> Seen;
  for (const DefaultInfo &D : allDefaults()) {
    std::string Name = std::string(D.Kind) + "." + D.Field;
    EXPECT_TRUE(Seen.insert(Name).second) << Name << " is listed twice";
    const KindSchema *K = findKind(D.Kind);
    ASSERT_NE(K, nullptr) << Name;
    const FieldSchema *F = K->field(D.Field);
    ASSERT_NE(F, nullptr) << Name << " is not a field of the schema";
    EXPECT_EQ(F->Type, FieldType::Quantity) << Name;
    EXPECT_NE(std::string(D.Evidence), "") << Name << " has no evidence";
    EXPECT_TRUE(D.hasValue() || D.hasRange()) << Name;
    if (D.hasValue()) {
      EXPECT_NE(D.note(), "") << Name << " has no note for explain";
    }
  }
}

TEST(Defaults, KernelClassesAreFractionsOfPeakAndFusedBeatsUnfused) {
  for (DefaultId K : {DefaultId::KernelGemm, DefaultId::KernelAttention,
                      DefaultId::KernelAttentionUnfused, DefaultId::KernelConv,
                      DefaultId::Efficiency}) {
    const DefaultInfo &D = defaultInfo(K);
    EXPECT_TRUE(D.Calibrated) << D.Field;
    EXPECT_GT(D.Low, 0) << D.Field;
    EXPECT_LE(D.High, 1) << D.Field;
  }
  // Fused attention must beat unfused, or the option would be pointless.
  EXPECT_GT(defaultInfo(DefaultId::KernelAttention).Value,
            defaultInfo(DefaultId::KernelAttentionUnfused).Value);
  // The note says the default and the range it was given.
  std::string Note = defaultInfo(DefaultId::KernelGemm).note();
  EXPECT_EQ(Note.substr(0, Note.find(';')),
            "default (wall 3): GEMM (linear layers) at 0.8 of dense peak, "
            "plausible 0.6 to 0.9");
}

TEST(Defaults, UnitsScaleToSI) {
  // 16 tokens and 12 bytes are their own SI values; the unit is kept.
  EXPECT_EQ(defaultInfo(DefaultId::KVBlock).Value, 16);
  EXPECT_EQ(std::string(defaultInfo(DefaultId::KVBlock).Unit), "tok");
  EXPECT_EQ(defaultInfo(DefaultId::OptimizerBytes).Value, 12);
  EXPECT_TRUE(isCalibratedField("memory_utilization"));
  EXPECT_FALSE(isCalibratedField("kv_block"));
  EXPECT_EQ(findDefault("node", "overhead")->Value, 0);
  EXPECT_EQ(findDefault("workload", "overhead"), nullptr);
}

} // namespace
