//===- Domain.cpp - What a quantity can physically be ---------------------===//

#include "ir/Domain.h"

#include <cmath>

namespace mlsc {

bool inDomain(ValueDomain D, double V) {
  if (!std::isfinite(V))
    return false;
  constexpr double Exact = 9007199254740992.0; // 2^53
  switch (D) {
  case ValueDomain::Any:
    return true;
  case ValueDomain::Positive:
    return V > 0;
  case ValueDomain::NonNegative:
    return V >= 0;
  case ValueDomain::Whole:
    return V >= 1 && V <= Exact && V == std::floor(V);
  case ValueDomain::WholeOrZero:
    return V >= 0 && V <= Exact && V == std::floor(V);
  case ValueDomain::Fraction:
    return V >= 0 && V <= 1;
  case ValueDomain::FractionBelowOne:
    return V >= 0 && V < 1;
  case ValueDomain::Efficiency:
    return V > 0 && V <= 1;
  case ValueDomain::WholeAtLeastTwo:
    return V >= 2 && V <= Exact && V == std::floor(V);
  case ValueDomain::Spread:
    return V >= 0 && V <= 100;
  }
  return true;
}

const char *describeDomain(ValueDomain D) {
  switch (D) {
  case ValueDomain::Any:
    return "any number";
  case ValueDomain::Positive:
    return "a positive number";
  case ValueDomain::NonNegative:
    return "a number of at least 0";
  case ValueDomain::Whole:
    return "a whole number from 1 to 2^53";
  case ValueDomain::WholeOrZero:
    return "a whole number from 0 to 2^53";
  case ValueDomain::Fraction:
    return "a fraction from 0 to 1";
  case ValueDomain::FractionBelowOne:
    return "a fraction from 0 up to (not including) 1";
  case ValueDomain::Efficiency:
    return "a fraction above 0, at most 1";
  case ValueDomain::WholeAtLeastTwo:
    return "a whole number from 2 to 2^53";
  case ValueDomain::Spread:
    return "a coefficient of variation from 0 to 100";
  }
  return "";
}

} // namespace mlsc
