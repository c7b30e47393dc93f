//===- Domain.h - What a quantity can physically be ---------------*- C++
//-*-===//
//
// A schema field declares its domain (ir/Schema.def, DOMAIN): a bandwidth is
// positive, a batch a whole number, an efficiency a fraction above 0. The
// constant folder checks written values against it, the query lowering
// checks solve and sweep ranges, and the runtime checks fields computed
// from varied values at every point (ir/Graph.h, DomainCheck).
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_IR_DOMAIN_H
#define MLSC_IR_DOMAIN_H

#include <cstdint>

namespace mlsc {

/// The values a quantity field can physically take (Schema.def, DOMAIN).
enum class ValueDomain : uint8_t {
  Any,
  Positive,         ///< > 0
  NonNegative,      ///< >= 0
  Whole,            ///< a whole number from 1 to 2^53
  WholeOrZero,      ///< a whole number from 0 to 2^53
  Fraction,         ///< in [0, 1]
  FractionBelowOne, ///< in [0, 1)
  Efficiency,       ///< in (0, 1]
  WholeAtLeastTwo,  ///< a whole number from 2 to 2^53 (a switch's ports)
  /// A length's or a duration's coefficient of variation, in [0, 100]:
  /// published request traces spread by about 0.5-3 (ShareGPT, LMSYS,
  /// Azure), and at 100 a lognormal's median is already a hundredth of its
  /// mean; far past it the lognormal's sigma^2 = ln(1 + cv^2) overflows.
  Spread,
};

/// Whether \p V (in SI base units) lies in \p D; NaN and infinities never.
bool inDomain(ValueDomain D, double V);
/// "a positive number", "a whole number from 1 to 2^53", ...
const char *describeDomain(ValueDomain D);

} // namespace mlsc

#endif
