//===- EnergyWall.cpp - Wall 18 (part): power draw and energy per token ---===//
//
// The Macro level's first figures: the system's power draw at nameplate and
// the energy per generated token at the scenario's throughput. PUE, grid
// carbon and water come with the rest of wall 18. Known answers:
// test/unit/WallsTest.cpp (Energy.*) and test/lit/quickstart.test.
//
//===----------------------------------------------------------------------===//

#include "passes/walls/EnergyWall.h"
#include "passes/walls/Formula.h"

namespace mlsc::walls {

using namespace q;

Power systemPower(Number Devices, Power DeviceTDP, Number Nodes,
                  Power NodeOverhead) {
  return Devices * DeviceTDP + Nodes * NodeOverhead;
}

EnergyPerToken energyPerToken(Power Draw, TokenRate Throughput) {
  return Draw / Throughput;
}

const Formula SystemPowerF = makeFormula<&systemPower>(
    "system_power", Wall::Sustainability,
    "P = devices * TDP + nodes * node_overhead",
    "nameplate power (an upper bound on draw); Patterson et al., arXiv "
    "2104.10350");
const Formula EnergyPerTokenF = makeFormula<&energyPerToken>(
    "energy_per_token", Wall::Sustainability, "E = P / X",
    "Patterson et al., arXiv 2104.10350 (energy = power x time)");

} // namespace mlsc::walls
