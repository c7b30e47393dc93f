//===- LowerToGraph.cpp - Scenarios to evaluation graphs ------------------===//
//
// Consumes the folded IR; produces one graph::Graph per scenario of the main
// file. For each scenario it finds the workload's family (a decoder LLM
// served or trained, or a CNN or encoder model) and runs that family's
// lowering steps (passes/lowering/Steps.def) over one LoweringContext: the
// steps add the walls' formulas, with the IR values they read as leaves
// (with their origins) and documented defaults where a value is not given,
// and publish the graph's metrics (ir/Metrics.def). Then the scenario's SLA
// conditions and the file's asserts become boolean nodes, and the solve
// and sweep blocks are resolved against the graphs (LowerQueries.cpp).
// Diagnoses MissingInput, DomainError, MetricUnavailable (a warning: the
// condition stays unknown) and AssertSpansScenarios.
//
//===----------------------------------------------------------------------===//

#include "passes/LowerQueries.h"
#include "passes/lowering/Steps.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <set>

namespace mlsc {

namespace {

/// The family whose steps lower a workload of \p Model in \p Mode.
WorkloadFamily familyOf(LoweringContext &Ctx, const ir::Entity &Workload,
                        const ir::Entity *Model) {
  std::optional<ModelFamily> F =
      Model ? Ctx.enumField<ModelFamily>(*Model, "family") : std::nullopt;
  if (F == ModelFamily::Cnn || F == ModelFamily::Encoder)
    return WorkloadFamily::PerSample;
  if (Ctx.enumField<WorkloadMode>(Workload, "mode") == WorkloadMode::Training)
    return WorkloadFamily::DecoderTraining;
  return WorkloadFamily::DecoderInference;
}

void lowerScenario(LoweringContext &Ctx) {
  Ctx.Workload = Ctx.entity(Ctx.Scenario, "workload");
  Ctx.SystemEntity = Ctx.entity(Ctx.Scenario, "system");
  if (!Ctx.Workload || !Ctx.SystemEntity)
    return; // already diagnosed by build-ir
  Ctx.Model = Ctx.entity(*Ctx.Workload, "model");
  Ctx.Precision = Ctx.entity(*Ctx.Workload, "precision");
  Ctx.Sys = Ctx.system(*Ctx.SystemEntity);
  Ctx.Family = familyOf(Ctx, *Ctx.Workload, Ctx.Model);
  Ctx.G.DecoderTraining = Ctx.Family == WorkloadFamily::DecoderTraining;
  if (Ctx.Model && Ctx.Precision && Ctx.Sys)
    runSteps(Ctx);
  Ctx.reportMissing();
  Ctx.finishMetrics();
}

/// Lowers an SLA condition or an assert of this scenario.
void condition(LoweringContext &Ctx, const ir::Expr &E, llvm::SMRange R,
               bool IsAssert, const std::string &Message) {
  graph::Condition Cond;
  Cond.Range = R;
  Cond.Text = ir::sourceText(E.Range);
  Cond.IsAssert = IsAssert;
  Cond.Message = Message;
  std::string Missing;
  Cond.At = Ctx.expr(E, Missing);
  if (!Cond.At && !Missing.empty()) {
    Cond.Missing = Missing;
    // A metric of this scenario that its workload has no use for (a
    // training figure in a serving scenario) is not a missing wall.
    auto [Scenario, Name] = llvm::StringRef(Missing).split('.');
    std::optional<MetricId> M = findMetric(Name);
    bool Inapplicable = Scenario == Ctx.G.Scenario && M &&
                        !llvm::is_contained(Ctx.G.Unavailable, *M);
    bool NotLowered =
        Scenario == Ctx.G.Scenario && M && !Ctx.G.NotLowered.empty();
    bool NotSimulated = M && metricInfo(*M).Where == Applies::Simulated &&
                        !(Ctx.G.Sim && Ctx.G.Sim->Requested);
    // A queueing figure (wall 7) of a serving scenario without an arrival
    // rate: the queue is what is missing, not the wall.
    bool NeedsArrival = Scenario == Ctx.G.Scenario && M &&
                        metricInfo(*M).W == Wall::TailLatency &&
                        metricInfo(*M).Where != Applies::Simulated &&
                        Ctx.G.has(MetricId::DecodeStepTime) &&
                        !Ctx.G.has(MetricId::Utilisation);
    // A let that reads another scenario's values, in this one's SLA.
    bool Elsewhere = !IsAssert && Scenario != Ctx.G.Scenario &&
                     Ctx.C.Program.entity(Scenario) &&
                     Ctx.C.Program.entity(Scenario)->Kind == "scenario";
    Ctx.C.Diags.report(
        DiagKind::MetricUnavailable, E.Range,
        Elsewhere
            ? fmt::format("`{}` is a value of scenario `{}`, and an SLA of "
                          "`{}` reads its own scenario's values; write this "
                          "condition as an assert; it stays unknown here",
                          Missing, Scenario.str(), Ctx.G.Scenario)
        : NotSimulated
            ? fmt::format("`{}` comes from the serving simulator, and "
                          "scenario `{}` has no `simulate` block (give it "
                          "`simulate {{ requests = 10000 }}`); this condition "
                          "stays unknown",
                          Missing, Scenario.str())
        : NotLowered
            ? fmt::format("`{}` is not computed: {}; this condition stays "
                          "unknown",
                          Missing, Ctx.G.NotLowered)
        : NeedsArrival
            ? fmt::format("`{}` needs a queue: the workload of scenario `{}` "
                          "has no `arrival` rate (give it one, e.g. "
                          "`arrival = 10 req/s`, wall 7); this condition "
                          "stays unknown",
                          Missing, Scenario.str())
        : Inapplicable
            ? fmt::format("`{}` does not apply to this scenario's workload "
                          "(`mlsc eval` lists the metrics it has); this "
                          "condition stays unknown",
                          Missing)
            : fmt::format("`{}` is not computed yet: no implemented wall "
                          "provides it (see `mlsc walls`); this condition "
                          "stays unknown",
                          Missing));
  }
  Ctx.G.Conditions.push_back(std::move(Cond));
}

/// Scenarios whose metrics an expression reads.
/// Each let is read once: `let b = a + a` over a chain of lets would
/// otherwise cost 2^n.
void scenariosOf(const ir::Expr &E, std::set<const ir::Entity *> &Out,
                 std::set<const ir::Let *> &Seen) {
  if (E.Kind == ir::ExprKind::MetricRef)
    Out.insert(E.Target);
  if (E.Kind == ir::ExprKind::LetRef && E.LetTarget->Value &&
      Seen.insert(E.LetTarget).second)
    scenariosOf(*E.LetTarget->Value, Out, Seen);
  for (const ir::ExprPtr &O : E.Operands)
    scenariosOf(*O, Out, Seen);
}
void scenariosOf(const ir::Expr &E, std::set<const ir::Entity *> &Out) {
  std::set<const ir::Let *> Seen;
  scenariosOf(E, Out, Seen);
}

} // namespace

std::vector<std::string> scenariosRead(const ir::Expr &E) {
  std::set<const ir::Entity *> Used;
  scenariosOf(E, Used);
  std::vector<std::string> Names;
  for (const ir::Entity *S : Used)
    Names.push_back(S->Name);
  std::sort(Names.begin(), Names.end());
  return Names;
}

bool runLowerToGraph(Compilation &C) {
  if (C.Diags.hasErrors())
    return false; // lowering assumes a well-typed program
  std::vector<const ir::Entity *> Scenarios;
  for (const auto &E : C.Program.Entities)
    if (E->Kind == "scenario" &&
        C.SM.FindBufferContainingLoc(E->NameRange.Start) ==
            C.Program.MainBufferId)
      Scenarios.push_back(E.get());
  C.Graphs.resize(Scenarios.size());
  std::vector<std::unique_ptr<LoweringContext>> Contexts;
  for (size_t I = 0; I < Scenarios.size(); ++I) {
    Contexts.push_back(
        std::make_unique<LoweringContext>(C, *Scenarios[I], C.Graphs[I]));
    lowerScenario(*Contexts.back());
    if (const ir::Field *Sla = Scenarios[I]->field("sla"))
      for (const ir::ExprPtr &Cond : Sla->Conditions)
        condition(*Contexts.back(), *Cond, Cond->Range, false, "");
  }
  for (const ir::Assert &A : C.Program.Asserts) {
    if (A.Folded)
      continue; // constant: decided at compile time
    std::set<const ir::Entity *> Used;
    scenariosOf(*A.Condition, Used);
    if (Used.size() > 1) {
      std::vector<std::string> Names;
      for (const ir::Entity *E : Used)
        Names.push_back("`" + E->Name + "`");
      std::sort(Names.begin(), Names.end());
      C.Diags.report(DiagKind::AssertSpansScenarios, A.Range,
                     fmt::format("assert reads the metrics of {}; write one "
                                 "assert per scenario",
                                 llvm::join(Names, " and ")));
      continue;
    }
    auto It = Used.empty() ? Scenarios.end()
                           : std::find(Scenarios.begin(), Scenarios.end(),
                                       *Used.begin());
    if (It == Scenarios.end())
      continue; // a scenario of an imported module is not evaluated
    condition(*Contexts[It - Scenarios.begin()], *A.Condition, A.Range, true,
              A.Message);
  }
  // A let of the file that reads one scenario's metrics is a value of that
  // scenario's graph, under its name (unless a value of the graph has it):
  // `mlsc explain FILE LET` and `mlsc eval -e` read it there.
  for (const auto &L : C.Program.Lets) {
    if (L->Folded || !L->Value ||
        C.SM.FindBufferContainingLoc(L->NameRange.Start) !=
            C.Program.MainBufferId)
      continue;
    std::set<const ir::Entity *> Used;
    scenariosOf(*L->Value, Used);
    auto It = Used.size() == 1
                  ? std::find(Scenarios.begin(), Scenarios.end(), *Used.begin())
                  : Scenarios.end();
    if (It == Scenarios.end())
      continue;
    LoweringContext &Ctx = *Contexts[It - Scenarios.begin()];
    std::string Missing;
    if (std::optional<graph::NodeId> N = Ctx.expr(*L->Value, Missing)) {
      Ctx.G.Lets.try_emplace(L->Name, *N);
      if (Ctx.G.node(*N).Name.empty())
        Ctx.G.node(*N).Name = L->Name;
    }
  }
  lowerQueries(C, Scenarios, Contexts);
  lowerFleets(C, Scenarios);
  return !C.Diags.hasErrors();
}

} // namespace mlsc
