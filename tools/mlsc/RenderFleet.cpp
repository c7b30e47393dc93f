//===- RenderFleet.cpp - A fleet's table, as text and JSON ----------------===//
//
// Renders a FleetResult (runtime/Fleet.h): the members, each site's sums,
// the fleet's, and the nodes each fleet cluster gives its members
// (docs/json-output.md, "Fleets"). Reads only the result model.
//
//===----------------------------------------------------------------------===//

#include "tools/mlsc/Json.h"
#include "tools/mlsc/Render.h"
#include "tools/mlsc/RenderTables.h"

#include "runtime/Format.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <fmt/format.h>

#include <algorithm>

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
  if (!Member && R.Throughput && R.Served < R.Members)
    Work += fmt::format(" ({} of {})", R.Served, R.Members);
  // Power without a site's PUE is IT power, and says so.
  std::string Power = "-";
  if (R.Power) {
    Power = formatQuantity(*R.Power, watt());
    unsigned IT = Member ? !R.Metered : R.Powered - R.Metered;
    std::vector<std::string> Notes;
    if (!Member && R.Powered < R.Members)
      Notes.push_back(fmt::format("{} of {}", R.Powered, R.Members));
    if (!Member && IT)
      Notes.push_back(fmt::format("{} IT", IT));
    if (Member && IT)
      Power += " IT";
    else if (!Notes.empty())
      Power += " (" + llvm::join(Notes, ", ") + ")";
  }
  return {
      R.Name.empty() ? "(no site)" : R.Name,
      Member ? R.Workload
             : fmt::format("{} member{}", R.Members, R.Members == 1 ? "" : "s"),
      Member ? R.Mode : "",
      Member ? R.System : "",
      Member ? (R.Site.empty() ? "-" : R.Site) : "",
      formatNumber(R.Devices),
      Work,
      Power,
      cell(R.CostRate, usdPerSecond(), R.Priced, R.Members),
      cell(R.CarbonRate, kgPerSecond(), R.Carbon, R.Members),
      cell(R.WaterRate, m3PerSecond(), R.Water, R.Members),
      Member ? R.Verdict : ""};
}

/// The JSON key of a row's throughput, by what it counts.
const char *throughputKey(const FleetRow &R, bool Member) {
  if (R.ThroughputDim.str() == "sample/s")
    return "sample_throughput";
  return Member && R.Trains ? "training_throughput" : "served_throughput";
}

void printTable(const std::vector<std::vector<std::string>> &Table,
                llvm::raw_ostream &OS) {
  OS << alignedColumns(Table, 2, 2);
}

void rowJSON(const FleetRow &R, bool Member, llvm::json::OStream &J,
             llvm::StringRef Key) {
  J.object([&] {
    auto name = [&](llvm::StringRef K, const std::string &V) {
      if (V.empty())
        J.attribute(K, nullptr); // no site
      else
        J.attribute(K, V);
    };
    name(Key, R.Name);
    if (Member) {
      J.attribute("workload", R.Workload);
      J.attribute("mode", R.Mode);
      J.attribute("system", R.System);
      name("site", R.Site);
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
    opt(throughputKey(R, Member), R.Throughput, R.ThroughputDim);
    opt("power", R.Power, watt());
    opt("cost_per_hour", R.CostRate, usdPerSecond());
    opt("carbon_rate", R.CarbonRate, kgPerSecond());
    opt("water_rate", R.WaterRate, m3PerSecond());
    if (!Member) {
      J.attribute("served", static_cast<int64_t>(R.Served));
      J.attribute("metered", static_cast<int64_t>(R.Metered));
      J.attribute("priced", static_cast<int64_t>(R.Priced));
      J.attribute("with_carbon", static_cast<int64_t>(R.Carbon));
      J.attribute("with_water", static_cast<int64_t>(R.Water));
    }
  });
}

} // namespace

void printFleet(const FleetResult &F, llvm::raw_ostream &OS) {
  size_t Sites =
      std::count_if(F.Sites.begin(), F.Sites.end(),
                    [](const FleetRow &R) { return !R.Name.empty(); });
  bool Unsited = Sites < F.Sites.size();
  OS << fmt::format("Fleet {}: {} member{} at {} site{}{}\n", F.Name,
                    F.Members.size(), F.Members.size() == 1 ? "" : "s", Sites,
                    Sites == 1 ? "" : "s", Unsited ? " and without one" : "");
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
  OS << "  throughput: tokens served, tokens trained or samples a second "
        "(a sum adds the tokens served); power at the site's meter (PUE), IT "
        "power without a site; cost, CO2e (location-based) and water an "
        "hour [walls 17-18]; an infeasible member gives no figures\n";
  for (const query::FleetPool &P : F.Pools) {
    double Idle = P.Nodes - P.Used;
    OS << fmt::format(
        "  cluster {}{}: {} node{}, {} taken by members, {} idle{}\n",
        P.Cluster, P.Site.empty() ? "" : " (" + P.Site + ")",
        formatNumber(P.Nodes), P.Nodes == 1 ? "" : "s", formatNumber(P.Used),
        formatNumber(Idle),
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
          if (P.Site.empty())
            J.attribute("site", nullptr);
          else
            J.attribute("site", P.Site);
          number(J, "nodes", P.Nodes);
          number(J, "taken", P.Used);
          number(J, "idle", P.Nodes - P.Used);
        });
    });
  });
}

} // namespace mlsc::driver
