//===- RenderFleet.cpp - A fleet's table, as text and JSON ----------------===//
//
// Renders a FleetResult (runtime/Fleet.h): the members, each site's sums,
// the fleet's, and the nodes each fleet cluster gives its members
// (docs/json-output.md, "Fleets"). Reads only the result model.
//
//===----------------------------------------------------------------------===//

#include "tools/mlsc/Json.h"
#include "tools/mlsc/Render.h"

#include "runtime/Format.h"

#include "llvm/ADT/StringRef.h"

#include <fmt/format.h>

namespace mlsc::driver {

namespace {

const Dimension &watt() {
  static const Dimension D =
      Dimension::base(BaseDim::Energy) / Dimension::base(BaseDim::Time);
  return D;
}
const Dimension &usdPerSecond() {
  static const Dimension D =
      Dimension::base(BaseDim::Money) / Dimension::base(BaseDim::Time);
  return D;
}
const Dimension &kgPerSecond() {
  static const Dimension D =
      Dimension::base(BaseDim::Mass) / Dimension::base(BaseDim::Time);
  return D;
}
const Dimension &m3PerSecond() {
  static const Dimension D =
      *Dimension::base(BaseDim::Length).pow(3) / Dimension::base(BaseDim::Time);
  return D;
}

/// A figure, "-" when there is none; a sum some members did not give says
/// how many did ("1,200 USD/h (2 of 3)").
std::string cell(const std::optional<double> &X, const Dimension &D,
                 unsigned Gave = 1, unsigned Of = 1) {
  if (!X)
    return "-";
  std::string S = formatQuantity(*X, D);
  if (Gave < Of)
    S += fmt::format(" ({} of {})", Gave, Of);
  return S;
}

std::vector<std::string> cells(const FleetRow &R, bool Member) {
  std::string Work = "-";
  if (R.Throughput)
    Work = formatQuantity(*R.Throughput, R.ThroughputDim) +
           (Member && R.Trains ? " trained" : "");
  return {
      R.Name.empty() ? "(no site)" : R.Name,
      Member ? R.Workload
             : fmt::format("{} member{}", R.Members, R.Members == 1 ? "" : "s"),
      Member ? R.Mode : "",
      Member ? R.System : "",
      Member ? (R.Site.empty() ? "-" : R.Site) : "",
      formatNumber(R.Devices),
      Work,
      cell(R.Power, watt()),
      cell(R.CostRate, usdPerSecond(), R.Priced, R.Members),
      cell(R.CarbonRate, kgPerSecond(), R.Carbon, R.Members),
      cell(R.WaterRate, m3PerSecond(), R.Water, R.Members),
      Member ? R.Verdict : ""};
}

void printTable(const std::vector<std::vector<std::string>> &Table,
                llvm::raw_ostream &OS) {
  std::vector<size_t> Width(Table.front().size(), 0);
  for (const auto &Line : Table)
    for (size_t I = 0; I < Line.size(); ++I)
      Width[I] = std::max(Width[I], Line[I].size());
  for (const auto &Line : Table) {
    std::string Text = " ";
    for (size_t I = 0; I < Line.size(); ++I)
      Text += " " + Line[I] + std::string(Width[I] - Line[I].size() + 1, ' ');
    OS << llvm::StringRef(Text).rtrim() << "\n";
  }
}

void rowJSON(const FleetRow &R, bool Member, llvm::json::OStream &J,
             llvm::StringRef Key) {
  J.object([&] {
    J.attribute(Key, R.Name);
    if (Member) {
      J.attribute("workload", R.Workload);
      J.attribute("mode", R.Mode);
      J.attribute("system", R.System);
      J.attribute("site", R.Site);
      J.attribute("verdict", R.Verdict);
    } else {
      J.attribute("members", static_cast<int64_t>(R.Members));
    }
    number(J, "devices", R.Devices);
    auto opt = [&](llvm::StringRef Key, const std::optional<double> &X,
                   const Dimension &D) {
      J.attributeBegin(Key);
      if (X)
        quantity(J, *X, D);
      else
        J.value(nullptr);
      J.attributeEnd();
    };
    opt(Member && R.Trains ? "training_throughput" : "served_throughput",
        R.Throughput, R.ThroughputDim);
    opt("power", R.Power, watt());
    opt("cost_per_hour", R.CostRate, usdPerSecond());
    opt("carbon_rate", R.CarbonRate, kgPerSecond());
    opt("water_rate", R.WaterRate, m3PerSecond());
    if (!Member) {
      J.attribute("priced", static_cast<int64_t>(R.Priced));
      J.attribute("with_carbon", static_cast<int64_t>(R.Carbon));
      J.attribute("with_water", static_cast<int64_t>(R.Water));
    }
  });
}

} // namespace

void printFleet(const FleetResult &F, llvm::raw_ostream &OS) {
  OS << fmt::format("Fleet {}: {} member{} at {} site{}\n", F.Name,
                    F.Members.size(), F.Members.size() == 1 ? "" : "s",
                    F.Sites.size(), F.Sites.size() == 1 ? "" : "s");
  std::vector<std::vector<std::string>> Table{
      {"member", "workload", "mode", "system", "site", "devices", "throughput",
       "power", "cost", "CO2e", "water", "verdict"}};
  for (const FleetRow &R : F.Members)
    Table.push_back(cells(R, true));
  Table.push_back(std::vector<std::string>(Table.front().size(), ""));
  Table.back()[0] = "by site";
  for (const FleetRow &R : F.Sites)
    Table.push_back(cells(R, false));
  Table.push_back(cells(F.Total, false));
  Table.back()[0] = "fleet";
  printTable(Table, OS);
  OS << "  throughput: tokens served (a sum counts those only); power at "
        "the site's meter (PUE); cost, CO2e (location-based) and water an "
        "hour [walls 17-18]\n";
  for (const query::FleetPool &P : F.Pools) {
    double Idle = P.Nodes - P.Used;
    OS << fmt::format(
        "  cluster {}{}: {} nodes, {} taken by members, {} idle{}\n", P.Cluster,
        P.Site.empty() ? "" : " (" + P.Site + ")", formatNumber(P.Nodes),
        formatNumber(P.Used), formatNumber(Idle),
        Idle > 0 ? " (their cost and power are not in the sums)" : "");
  }
}

void fleetJSON(const FleetResult &F, llvm::json::OStream &J) {
  J.object([&] {
    J.attribute("fleet", F.Name);
    J.attributeArray("members", [&] {
      for (const FleetRow &R : F.Members)
        rowJSON(R, true, J, "scenario");
    });
    J.attributeArray("sites", [&] {
      for (const FleetRow &R : F.Sites)
        rowJSON(R, false, J, "site");
    });
    J.attributeBegin("total");
    rowJSON(F.Total, false, J, "fleet");
    J.attributeEnd();
    J.attributeArray("clusters", [&] {
      for (const query::FleetPool &P : F.Pools)
        J.object([&] {
          J.attribute("cluster", P.Cluster);
          J.attribute("site", P.Site);
          number(J, "nodes", P.Nodes);
          number(J, "taken", P.Used);
          number(J, "idle", P.Nodes - P.Used);
        });
    });
  });
}

} // namespace mlsc::driver
