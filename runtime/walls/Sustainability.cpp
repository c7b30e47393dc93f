//===- Sustainability.cpp - Wall 18 (part): power and energy --------------===//
//
// The Macro level's first figures: the system's power draw at nameplate and
// the energy per generated token at the scenario's throughput. PUE, grid
// carbon and water are not modelled yet (docs/walls.md). Known answers:
// test/unit/WallsTest.cpp (Energy.*) and test/lit/quickstart.test.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

namespace mlsc::walls {

using namespace q;

Power systemPower(Number Devices, Power DeviceTDP, Number Nodes,
                  Power NodeOverhead) {
  return Devices * DeviceTDP + Nodes * NodeOverhead;
}

EnergyPerToken energyPerToken(Power Draw, TokenRate Throughput) {
  return Draw / Throughput;
}

} // namespace mlsc::walls
