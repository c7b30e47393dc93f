//===- Sustainability.cpp - Wall 18: power, energy, carbon, water ---------===//
//
// The Macro level's figures: the system's power draw at nameplate and at
// the load, the energy per generated token, at a site the facility's power
// (PUE), operational carbon and water, and the devices' embodied carbon
// amortised over their life (docs/walls.md). Known answers:
// test/unit/WallsTest.cpp (Energy.*), test/lit/quickstart.test and
// test/lit/eval/site-carbon.mls.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include <algorithm>
#include <cmath>

namespace mlsc::walls {

using namespace q;

Power systemPower(Number Devices, Power DevicePower, Number Nodes,
                  Power NodeOverhead) {
  return Devices * DevicePower + Nodes * NodeOverhead;
}

Power devicePowerAtLoad(Power TDP, Number IdleFraction, Number BusyFraction,
                        Number BusyShare) {
  return TDP * (IdleFraction + (BusyFraction - IdleFraction) * BusyShare);
}

Number busyPowerFraction(Number Small, Number Large, Number Batch) {
  double B = Batch.value();
  if (std::isnan(B))
    return in<Number>(B);
  double T =
      std::clamp(std::log(std::max(B, 1e-300) / 16) / std::log(16.0), 0.0, 1.0);
  return Small + (Large - Small) * T;
}

Number busyShare(RequestRate Rate, Time InSlot) {
  // -expm1 keeps a light load's small share exact.
  return in<Number>(-std::expm1(-(Rate * InSlot / in<Requests>(1.0)).value()));
}

EnergyPerToken energyPerToken(Power Draw, TokenRate Throughput) {
  return Draw / Throughput;
}

Power facilityPower(Power IT, Number PUE) { return IT * PUE; }

Mass operationalCarbon(Energy Facility, CarbonIntensity Grid) {
  return Facility * Grid;
}

Volume waterUse(Energy IT, WaterIntensity WUE) { return IT * WUE; }

MassRate embodiedCarbonRate(Number Devices, Mass PerDevice, Time Life) {
  return Devices * PerDevice / Life;
}

} // namespace mlsc::walls
