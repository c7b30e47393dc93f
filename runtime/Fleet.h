//===- Fleet.h - A fleet's members, sites and totals, as data -----*- C++
//-*-===//
//
// `mlsc eval` of a file with a `fleet` adds, after the scorecards, one
// table per fleet: each member (a scenario) with its devices, its work a
// second, its power at the site's meter, its cost, CO2e and water an hour
// and its verdict; each site's sums; the fleet's; and the nodes each fleet
// cluster gives its members. Built once from the members' ScenarioResults;
// the text and JSON renderers read only this (docs/walls.md, "Fleets").
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_FLEET_H
#define MLSC_RUNTIME_FLEET_H

#include "ir/Query.h"
#include "runtime/Result.h"

#include <optional>
#include <string>
#include <vector>

namespace mlsc {

/// A member's figures, or a site's or the fleet's sums of them. Rates are
/// in SI units (W, USD/s, kg/s, m^3/s).
struct FleetRow {
  std::string Name; ///< the scenario, the site, or the fleet
  std::string Workload, Mode, System, Site, Verdict; ///< members only
  unsigned Members = 1;
  double Devices = 0;
  /// Work a second: tokens served (inference) or trained, or samples.
  /// Sums count the tokens served only.
  std::optional<double> Throughput;
  Dimension ThroughputDim;
  bool Trains = false;
  /// Power at the site's meter (IT power for a system without a site).
  std::optional<double> Power;
  std::optional<double> CostRate, CarbonRate, WaterRate;
  /// Of a sum: how many members gave each figure (an infeasible member
  /// gives none: nothing of it runs); Served counts the members whose
  /// tokens served are in the sum, Metered those whose power is at a
  /// meter.
  unsigned Priced = 0, Carbon = 0, Water = 0, Served = 0, Powered = 0,
           Metered = 0;
};

struct FleetResult {
  std::string Name;
  std::vector<FleetRow> Members, Sites;
  FleetRow Total;
  std::vector<query::FleetPool> Pools;
};

/// The fleet's table from its members' results (\p Results indexed by graph).
FleetResult fleetResult(const query::Fleet &F,
                        const std::vector<ScenarioResult> &Results);

} // namespace mlsc

#endif
