//===- LowerFleets.cpp - Fleets: scenarios judged together ----------------===//
//
// Part of lower-to-graph, run after the scenarios and queries. Each `fleet`
// of the main file becomes a query::Fleet: its members are scenarios of the
// main file (their graphs are evaluated by `mlsc eval`, which sums them by
// site and over the fleet), and its clusters are pools of nodes. A member
// whose system is a fleet cluster, or derives from one (`cluster chat :
// polaris { nodes = 8 }`), takes its nodes from that cluster; more nodes
// than the cluster has is FleetOverCommitted, located at the member that
// tips it over. A member that is no scenario of the file, a cluster that
// is no cluster, or a name listed twice is MalformedFleet.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerQueries.h"

#include "runtime/Format.h"

#include <fmt/format.h>

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <set>

namespace mlsc {

namespace {

/// The entity a Terms line names (`chat_alcf`), or null.
const ir::Entity *named(const ir::Expr &E) {
  return E.Kind == ir::ExprKind::EntityRef ? E.Target : nullptr;
}

/// The folded entity a field holds, or null.
const ir::Entity *entityField(const ir::Entity &E, llvm::StringRef Path) {
  const ir::Field *F = E.field(Path);
  return F && F->Folded && F->Folded->Kind == ir::TypeKind::Entity
             ? F->Folded->Ref
             : nullptr;
}

double numberField(const ir::Entity &E, llvm::StringRef Path) {
  const ir::Field *F = E.field(Path);
  return F && F->Folded && F->Folded->Kind == ir::TypeKind::Quantity
             ? F->Folded->Number
             : 0;
}

class FleetLowering {
public:
  FleetLowering(Compilation &C, const ir::Entity &F,
                const std::vector<const ir::Entity *> &Scenarios,
                llvm::DenseMap<const ir::Entity *, const ir::Entity *> &Owners)
      : C(C), FE(F), Scenarios(Scenarios), Owners(Owners) {}

  std::optional<query::Fleet> run() {
    query::Fleet Fl;
    Fl.Name = FE.Name;
    Fl.NameRange = FE.NameRange;
    std::vector<const ir::Entity *> PoolEntities;
    if (const ir::Field *Cl = FE.field("clusters")) {
      for (const ir::ExprPtr &E : Cl->Conditions) {
        const ir::Entity *P = named(*E);
        if (!P || P->Kind != "cluster") {
          error(DiagKind::MalformedFleet, E->Range,
                fmt::format("`{}` is not a cluster: a fleet's `clusters` "
                            "lists the clusters it owns",
                            ir::sourceText(E->Range)));
          continue;
        }
        if (std::count(PoolEntities.begin(), PoolEntities.end(), P)) {
          error(DiagKind::MalformedFleet, E->Range,
                fmt::format("cluster `{}` is listed twice", P->Name));
          continue;
        }
        if (const ir::Entity *Owner = Owners.lookup(P)) {
          error(DiagKind::MalformedFleet, E->Range,
                fmt::format("cluster `{}` is owned by fleet `{}` too; each "
                            "cluster's nodes are counted by one fleet",
                            P->Name, Owner->Name));
          continue;
        }
        Owners[P] = &FE;
        PoolEntities.push_back(P);
        query::FleetPool Pool;
        Pool.Cluster = P->Name;
        Pool.Nodes = numberField(*P, "nodes");
        if (const ir::Entity *S = entityField(*P, "site"))
          Pool.Site = S->Name;
        Fl.Pools.push_back(Pool);
      }
    }
    // A fleet cluster derived from another would count its nodes twice.
    if (const ir::Field *Cl = FE.field("clusters"))
      for (const ir::ExprPtr &E : Cl->Conditions) {
        const ir::Entity *P = named(*E);
        if (!P || P->Kind != "cluster")
          continue;
        for (const ir::Entity *B = P->Base; B; B = B->Base)
          if (std::count(PoolEntities.begin(), PoolEntities.end(), B)) {
            error(DiagKind::MalformedFleet, E->Range,
                  fmt::format("cluster `{}` derives from `{}`, which the "
                              "fleet also owns; list `{}` once and give "
                              "members partitions of it",
                              P->Name, B->Name, B->Name));
            break;
          }
      }
    const ir::Field *Mf = FE.field("members");
    if (!Mf)
      return std::nullopt; // diagnosed by build-ir (a required field)
    if (Mf->Conditions.empty())
      error(DiagKind::MalformedFleet, Mf->Range,
            fmt::format("fleet `{}` has no members: list its scenarios, one "
                        "per line",
                        FE.Name));
    std::set<const ir::Entity *> Seen;
    for (const ir::ExprPtr &E : Mf->Conditions) {
      const ir::Entity *S = named(*E);
      if (!S || S->Kind != "scenario") {
        error(DiagKind::MalformedFleet, E->Range,
              fmt::format("`{}` is not a scenario: a fleet's `members` lists "
                          "scenarios, one per line",
                          ir::sourceText(E->Range)));
        continue;
      }
      auto It = std::find(Scenarios.begin(), Scenarios.end(), S);
      if (It == Scenarios.end()) {
        error(DiagKind::MalformedFleet, E->Range,
              fmt::format("scenario `{}` is not declared in this file, so it "
                          "is not evaluated",
                          S->Name));
        continue;
      }
      if (!Seen.insert(S).second) {
        error(DiagKind::MalformedFleet, E->Range,
              fmt::format("scenario `{}` is listed twice; a member counts "
                          "once",
                          S->Name));
        continue;
      }
      query::FleetMember M;
      M.Scenario = S->Name;
      M.Graph = It - Scenarios.begin();
      M.Range = E->Range;
      if (const ir::Entity *W = entityField(*S, "workload"))
        M.Workload = W->Name;
      const ir::Entity *Sys = entityField(*S, "system");
      if (Sys) {
        M.System = Sys->Name;
        if (Sys->Kind == "cluster") {
          M.Nodes = numberField(*Sys, "nodes");
          if (const ir::Entity *Site = entityField(*Sys, "site"))
            M.Site = Site->Name;
          // The fleet cluster it is, or derives from.
          for (const ir::Entity *B = Sys; B; B = B->Base) {
            auto P = std::find(PoolEntities.begin(), PoolEntities.end(), B);
            if (P == PoolEntities.end())
              continue;
            query::FleetPool &Pool = Fl.Pools[P - PoolEntities.begin()];
            // A partition is of the pool's nodes, where the pool stands.
            for (const char *Field : {"node", "site"})
              if (Sys != B &&
                  entityField(*Sys, Field) != entityField(*B, Field))
                error(DiagKind::MalformedFleet, E->Range,
                      fmt::format("`{}` runs on `{}`, a partition of fleet "
                                  "cluster `{}` with another `{}`; a "
                                  "partition keeps its cluster's {}",
                                  S->Name, Sys->Name, B->Name, Field, Field));
            M.Pool = Pool.Cluster;
            bool Fitted = Pool.Used <= Pool.Nodes;
            Pool.Used += M.Nodes;
            if (Fitted && Pool.Used > Pool.Nodes)
              error(DiagKind::FleetOverCommitted, E->Range,
                    fmt::format("with `{}` the fleet's members take {} nodes "
                                "of cluster `{}`, which has {}",
                                S->Name, formatNumber(Pool.Used), Pool.Cluster,
                                formatNumber(Pool.Nodes)),
                    "give the members fewer nodes, or the cluster more");
            break;
          }
        }
      }
      Fl.Members.push_back(std::move(M));
    }
    if (Failed)
      return std::nullopt;
    return Fl;
  }

public:
  /// Which fleet owns each cluster, across the file's fleets.
  using OwnerMap = llvm::DenseMap<const ir::Entity *, const ir::Entity *>;

private:
  Compilation &C;
  const ir::Entity &FE;
  const std::vector<const ir::Entity *> &Scenarios;
  OwnerMap &Owners;
  bool Failed = false;

  void error(DiagKind K, llvm::SMRange R, std::string Message,
             std::string Hint = "") {
    Diagnostic &D = C.Diags.report(K, R, std::move(Message));
    if (!Hint.empty())
      D.Message += "; " + Hint;
    Failed = true;
  }
};

} // namespace

void lowerFleets(Compilation &C,
                 const std::vector<const ir::Entity *> &Scenarios) {
  FleetLowering::OwnerMap Owners;
  for (const auto &E : C.Program.Entities) {
    if (E->Kind != "fleet" || C.SM.FindBufferContainingLoc(
                                  E->NameRange.Start) != C.Program.MainBufferId)
      continue;
    if (std::optional<query::Fleet> F =
            FleetLowering(C, *E, Scenarios, Owners).run())
      C.Fleets.push_back(std::move(*F));
  }
}

} // namespace mlsc
