//===- Capital.cpp - Wall 17 (part): the cost of running a system ---------===//
//
// The electricity bill, the hardware's and the facility's capital cost and
// its amortisation, maintenance (docs/walls.md). Known answers:
// test/unit/WallsTest.cpp (Capital.*) and test/lit/eval/site-carbon.mls.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

namespace mlsc::walls {

using namespace q;

Money energyCost(Energy Facility, EnergyPrice Price) {
  return Facility * Price;
}

Money nodePrice(Number Devices, Money DevicePrice, Number Factor) {
  return Devices * DevicePrice * Factor;
}

Money clusterCapex(Number Nodes, Money NodePrice, Number NetworkShare) {
  return Nodes * NodePrice / (in<Number>(1) - NetworkShare);
}

MoneyRate ownershipCostRate(Money Capex, Time Life, Number Maintenance) {
  const Time Year = in<Time>(365 * 86400.0);
  return Capex / Life + Capex * Maintenance / Year;
}

MoneyRate facilityCostRate(MoneyPerPower CostPerWatt, Power ITPower,
                           Time Life) {
  return CostPerWatt * ITPower / Life;
}

} // namespace mlsc::walls
