//===- Fleet.cpp - A fleet's members, sites and totals --------------------===//

#include "runtime/Fleet.h"

#include <map>

namespace mlsc {

namespace {

using M = MetricId;

std::optional<double> metric(const ScenarioResult &R, MetricId Id) {
  if (!R.has(Id))
    return std::nullopt;
  return R[Id];
}

FleetRow memberRow(const query::FleetMember &Mb, const ScenarioResult &R) {
  FleetRow Row;
  Row.Name = Mb.Scenario;
  Row.Workload = Mb.Workload;
  Row.System = Mb.System;
  Row.Site = Mb.Site;
  Row.Trains = R.Training;
  Row.Mode = R.Training ? "training" : "inference";
  Row.Verdict = !R.Feasible ? "INFEASIBLE" : R.Performance;
  if (R.has(M::Devices))
    Row.Devices = R[M::Devices];
  // Nothing of an infeasible member runs: it gives no figures.
  if (!R.Feasible)
    return Row;
  for (MetricId Id :
       {M::ServedThroughput, M::TrainingThroughput, M::SystemSampleThroughput})
    if (R.has(Id)) {
      Row.Throughput = R[Id];
      Row.ThroughputDim = R.get(Id).Dim;
      break;
    }
  Row.Power = R.has(M::FacilityPower) ? metric(R, M::FacilityPower)
                                      : metric(R, M::Power);
  Row.Powered = Row.Power.has_value();
  Row.Metered = R.has(M::FacilityPower);
  Row.CostRate = metric(R, M::CostPerHour);
  Row.CarbonRate = metric(R, M::CarbonRate);
  Row.WaterRate = metric(R, M::WaterRate);
  Row.Priced = Row.CostRate.has_value();
  Row.Carbon = Row.CarbonRate.has_value();
  Row.Water = Row.WaterRate.has_value();
  return Row;
}

void add(std::optional<double> &Sum, const std::optional<double> &X) {
  if (X)
    Sum = Sum.value_or(0) + *X;
}

void accumulate(FleetRow &Sum, const FleetRow &Row) {
  ++Sum.Members;
  Sum.Devices += Row.Devices;
  // Tokens served add up; tokens trained and samples are another work.
  if (Row.Throughput && !Row.Trains && Row.ThroughputDim == Sum.ThroughputDim) {
    add(Sum.Throughput, Row.Throughput);
    ++Sum.Served;
  }
  add(Sum.Power, Row.Power);
  add(Sum.CostRate, Row.CostRate);
  add(Sum.CarbonRate, Row.CarbonRate);
  add(Sum.WaterRate, Row.WaterRate);
  Sum.Powered += Row.Powered;
  Sum.Metered += Row.Metered;
  Sum.Priced += Row.Priced;
  Sum.Carbon += Row.Carbon;
  Sum.Water += Row.Water;
}

FleetRow emptySum(std::string Name) {
  FleetRow Sum;
  Sum.Name = std::move(Name);
  Sum.Members = 0;
  Sum.ThroughputDim =
      Dimension::base(BaseDim::Token) / Dimension::base(BaseDim::Time);
  return Sum;
}

} // namespace

FleetResult fleetResult(const query::Fleet &F,
                        const std::vector<ScenarioResult> &Results) {
  FleetResult Out;
  Out.Name = F.Name;
  Out.Pools = F.Pools;
  Out.Total = emptySum(F.Name);
  std::map<std::string, FleetRow> BySite; // sorted: deterministic
  for (const query::FleetMember &Mb : F.Members) {
    FleetRow Row = memberRow(Mb, Results[Mb.Graph]);
    auto It = BySite.try_emplace(Mb.Site, emptySum(Mb.Site)).first;
    accumulate(It->second, Row);
    accumulate(Out.Total, Row);
    Out.Members.push_back(std::move(Row));
  }
  for (auto &[Site, Row] : BySite)
    Out.Sites.push_back(std::move(Row));
  return Out;
}

} // namespace mlsc
