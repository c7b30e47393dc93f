//===- Sensitivity.cpp - `mlsc sensitivity`: what a scenario hangs on -----===//

#include "tools/mlsc/Driver.h"
#include "tools/mlsc/Json.h"
#include "tools/mlsc/Plots.h"

#include "runtime/Format.h"
#include "runtime/Sensitivity.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

namespace mlsc::driver {

namespace {

struct MetricSensitivity {
  std::string Name;
  double Value;
  Dimension Dim;
  std::vector<Elasticity> Elasticities;
};

} // namespace

int sensitivityCommand(const DriverOptions &O,
                       std::unique_ptr<llvm::MemoryBuffer> Buf) {
  std::unique_ptr<Compilation> C = compileForEval(O, std::move(Buf));
  if (!C)
    return InputErrors;
  llvm::StringRef Target = O.Target;
  const graph::Graph *G = nullptr;
  std::string Metric;
  for (const graph::Graph &Gr : C->Graphs)
    if (Target == Gr.Scenario || (Target.startswith(Gr.Scenario + ".") &&
                                  Target.size() > Gr.Scenario.size() + 1)) {
      G = &Gr;
      if (Target != Gr.Scenario)
        Metric = Target.drop_front(Gr.Scenario.size() + 1).str();
    }
  if (!G) {
    std::vector<std::string> Names;
    for (const graph::Graph &Gr : C->Graphs)
      Names.push_back(Gr.Scenario);
    return usage(DiagKind::UnknownTarget,
                 fmt::format("no scenario `{}`; the file has {}", Target.str(),
                             llvm::join(Names, ", ")));
  }
  std::vector<std::string> Metrics;
  if (!Metric.empty()) {
    if (!G->findNamed(Metric)) {
      std::vector<std::string> Names;
      for (MetricId M : G->Metrics)
        Names.push_back(metricInfo(M).Name);
      return usage(DiagKind::UnknownTarget,
                   fmt::format("scenario `{}` computes no `{}`; it has {}",
                               G->Scenario, Metric, llvm::join(Names, ", ")));
    }
    if (G->node(*G->findNamed(Metric)).IsBool)
      return usage(DiagKind::UnknownTarget,
                   fmt::format("`{}` is true or false; an elasticity needs a "
                               "number",
                               Metric));
    Metrics.push_back(Metric);
  } else {
    for (MetricId M : G->Metrics)
      if (!G->node(G->get(M)).IsBool)
        Metrics.push_back(metricInfo(M).Name);
  }

  // The results first, then the renderer.
  Evaluator E(*G);
  std::vector<MetricSensitivity> Results;
  for (const std::string &M : Metrics) {
    graph::NodeId Id = *G->findNamed(M);
    std::vector<Elasticity> Es = elasticities(E, Id);
    Results.push_back({M, E.value(Id), G->node(Id).Dim, std::move(Es)});
  }
  // The flips of the phase the metric belongs to: `prefill_time` and
  // `prefill.compute_time` bind in the prefill, not in the decode step.
  // (Phase prefixes are not prefixes of one another: one phase matches.)
  std::optional<PhaseId> Phase;
  for (const PhaseInfo &P : allPhases())
    if (!Metric.empty() && G->has(P.Id, PhaseMetricId::ComputeTime) &&
        (Metric == metricInfo(P.StepTime).Name ||
         llvm::StringRef(Metric).startswith(std::string(P.Prefix) + ".")))
      Phase = P.Id;
  std::vector<FactorFlips> Flips = bindingFlips(E, Phase);
  BindingWall B = bindingWall(E, Phase);

  // A tornado per metric and the factors' flips, as SVG or Vega specs.
  if (O.Format == OutputFormat::Svg || O.Format == OutputFormat::Vega) {
    std::vector<Plot> Plots;
    for (size_t K = 0; K < Results.size(); ++K)
      for (Plot &P : sensitivityPlots(
               G->Scenario, Results[K].Name, Results[K].Elasticities,
               K + 1 == Results.size() ? Flips : std::vector<FactorFlips>{},
               *G))
        Plots.push_back(std::move(P));
    const Plot *P = selectPlot(Plots, O.Plot, O.Target);
    return P ? printPlot(*P, O.Format == OutputFormat::Svg) : UsageError;
  }
  llvm::raw_ostream &OS = llvm::outs();
  if (O.Format == OutputFormat::Json) {
    llvm::json::OStream J(OS, 2);
    J.object([&] {
      formatVersion(J);
      J.attribute("scenario", G->Scenario);
      J.attributeArray("metrics", [&] {
        for (const MetricSensitivity &M : Results)
          J.object([&] {
            J.attribute("metric", M.Name);
            number(J, "value", M.Value);
            J.attribute("unit", M.Dim.str());
            J.attributeArray("elasticities", [&] {
              for (const Elasticity &El : M.Elasticities)
                J.object([&] {
                  J.attribute("input", El.Name);
                  number(J, "elasticity", El.Value);
                });
            });
          });
      });
      if (B.Known)
        J.attribute("binding_wall", B.Short);
      else
        J.attribute("binding_wall", nullptr);
      J.attributeArray("calibrated_factors", [&] {
        for (const FactorFlips &F : Flips)
          J.object([&] {
            J.attribute("factor", F.Name);
            number(J, "value", F.Value);
            J.attributeArray("range", [&] {
              number(J, F.Low);
              number(J, F.High);
            });
            J.attribute("robust", F.Flips.empty());
            J.attributeArray("flips", [&] {
              for (const FlipPoint &P : F.Flips)
                J.object([&] {
                  number(J, "at", P.At);
                  J.attribute("from", wallShortName(P.From));
                  J.attribute("to", wallShortName(P.To));
                });
            });
          });
      });
    });
    OS << "\n";
    return Success;
  }
  size_t Shown = Metric.empty() ? 5 : SIZE_MAX;
  OS << "sensitivity of scenario " << G->Scenario
     << " (elasticity d ln metric / d ln input: the % change of the metric "
        "per 1% change of the input)\n";
  for (const MetricSensitivity &M : Results) {
    OS << "\n" << M.Name << " = " << formatQuantity(M.Value, M.Dim) << "\n";
    const std::vector<Elasticity> &Es = M.Elasticities;
    if (Es.empty())
      OS << "  (no input moves it)\n";
    for (size_t K = 0; K < Es.size() && K < Shown; ++K)
      OS << fmt::format("  {:>+9.4f}  {}\n", Es[K].Value, Es[K].Name);
    if (Es.size() > Shown)
      OS << fmt::format("  ... {} more (name the metric to see all)\n",
                        Es.size() - Shown);
  }
  if (!B.Known)
    return Success;
  OS << "\nbinding wall " << B.label() << " (" << phaseInfo(B.Phase).Prefix
     << " step); across each calibrated factor's plausible range:\n";
  for (const FactorFlips &F : Flips) {
    // A factor with a unit (a fixed cost in seconds) is shown with it.
    const Dimension &Dim = G->node(F.Leaf).Dim;
    auto show = [&](double V) {
      return Dim.isDimensionless() ? formatNumber(V) : formatQuantity(V, Dim);
    };
    std::string Where =
        F.Flips.empty()
            ? fmt::format("{} throughout (robust)", wallShortName(F.WallAtLow))
            : "";
    for (const FlipPoint &P : F.Flips)
      Where +=
          fmt::format("{}{} below {}, {} above", Where.empty() ? "" : "; ",
                      wallShortName(P.From), show(P.At), wallShortName(P.To));
    OS << fmt::format("  {} = {} in [{}, {}]: {}\n", F.Name, show(F.Value),
                      show(F.Low), show(F.High), Where);
  }
  return Success;
}

} // namespace mlsc::driver
