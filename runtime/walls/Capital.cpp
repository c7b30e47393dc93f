//===- Capital.cpp - Wall 17 (part): the cost of running a system ---------===//
//
// The electricity bill of a run (capital expenditure, amortisation and
// maintenance are not modelled yet: docs/walls.md). Known answers:
// test/unit/WallsTest.cpp (Capital.*) and test/lit/eval/site-carbon.mls.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

namespace mlsc::walls {

using namespace q;

Money energyCost(Energy Facility, EnergyPrice Price) {
  return Facility * Price;
}

} // namespace mlsc::walls
