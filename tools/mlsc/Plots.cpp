//===- Plots.cpp - Results as Vega charts ---------------------------------===//

#include "tools/mlsc/Plots.h"
#include "tools/mlsc/Driver.h"
#include "tools/mlsc/RenderTables.h"

#include "runtime/Binding.h"
#include "runtime/Format.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>

namespace mlsc::driver {

namespace json = llvm::json;

namespace {

/// The templates of tools/report/specs/, embedded by cmake/embed-specs.cmake.
struct SpecTemplate {
  const char *Name;
  const char *Text;
};
const SpecTemplate Templates[] = {
#include "mlsc/PlotSpecs.inc"
};

/// A fresh copy of template \p Name.
json::Value spec(llvm::StringRef Name) {
  for (const SpecTemplate &T : Templates)
    if (Name == T.Name) {
      llvm::Expected<json::Value> V = json::parse(T.Text);
      if (!V)
        llvm::report_fatal_error("plot template " + Name + " is not JSON: " +
                                 llvm::toString(V.takeError()));
      return std::move(*V);
    }
  llvm::report_fatal_error("no plot template " + Name);
}

/// Six significant digits: plots need no more, and the specs stay small.
double round6(double V) {
  if (V == 0 || !std::isfinite(V))
    return V;
  double Exp = std::floor(std::log10(std::fabs(V)));
  double Scale = std::pow(10.0, 5 - Exp);
  double R = std::round(V * Scale) / Scale;
  return std::isfinite(R) ? R : V;
}

json::Value num(double V) {
  if (!std::isfinite(V))
    return nullptr;
  return round6(V);
}

void setData(json::Value &Spec, llvm::StringRef Name, json::Array Values) {
  for (json::Value &D : *Spec.getAsObject()->getArray("data"))
    if (D.getAsObject()->getString("name") == Name) {
      (*D.getAsObject())["values"] = std::move(Values);
      return;
    }
  llvm::report_fatal_error("plot template has no data " + Name);
}

void setSignal(json::Value &Spec, llvm::StringRef Name, json::Value V) {
  for (json::Value &S : *Spec.getAsObject()->getArray("signals"))
    if (S.getAsObject()->getString("name") == Name) {
      (*S.getAsObject())["value"] = std::move(V);
      return;
    }
  llvm::report_fatal_error("plot template has no signal " + Name);
}

/// A chart's height from its rows (bars of a tornado, a step chart).
void setHeight(json::Value &Spec, size_t Height) {
  (*Spec.getAsObject())["height"] =
      static_cast<int64_t>(std::max<size_t>(Height, 40));
}

/// A heat map's size from its cells: 48 x 30 pixels a cell (room for a
/// value), within 240-640 by 140-480.
void setGridSize(json::Value &Spec, size_t Columns, size_t Rows) {
  (*Spec.getAsObject())["width"] =
      static_cast<int64_t>(std::clamp<size_t>(Columns * 48, 240, 640));
  (*Spec.getAsObject())["height"] =
      static_cast<int64_t>(std::clamp<size_t>(Rows * 30, 140, 480));
}

json::Object &scaleNamed(json::Value &Spec, llvm::StringRef Name) {
  for (json::Value &S : *Spec.getAsObject()->getArray("scales"))
    if (S.getAsObject()->getString("name") == Name)
      return *S.getAsObject();
  llvm::report_fatal_error("plot template has no scale " + Name);
}

/// The first axis of \p Spec on scale \p Scale.
json::Object &axisOf(json::Value &Spec, llvm::StringRef Scale) {
  for (json::Value &A : *Spec.getAsObject()->getArray("axes"))
    if (A.getAsObject()->getString("scale") == Scale)
      return *A.getAsObject();
  llvm::report_fatal_error("plot template has no axis on " + Scale);
}

/// Drops the first mark of type \p Type (a categorical line's joining
/// line).
void removeMark(json::Value &Spec, llvm::StringRef Type) {
  json::Array &Marks = *Spec.getAsObject()->getArray("marks");
  json::Array Kept;
  bool Dropped = false;
  for (json::Value &M : Marks) {
    if (!Dropped && M.getAsObject()->getString("type") == Type) {
      Dropped = true;
      continue;
    }
    Kept.push_back(std::move(M));
  }
  Marks = std::move(Kept);
}

/// One colour (and marker shape) per category in every plot: the binding
/// walls and the parts of a step as the step chart names them, a sweep's
/// point statuses. Okabe-Ito, grey for what does not fit.
struct CategoryStyle {
  const char *Name, *Colour, *Shape;
};
const CategoryStyle Categories[] = {
    {"compute", "#0072B2", "circle"},
    {"memory", "#E69F00", "square"},
    {"weight streaming", "#56B4E9", "diamond"},
    {"communication", "#009E73", "triangle-up"},
    {"software efficiency", "#CC79A7", "triangle-down"},
    {"pipeline bubble", "#D55E00", "cross"},
    {"meets the conditions", "#0072B2", "circle"},
    {"fails a condition", "#E69F00", "triangle-up"},
    {"does not fit", "#999999", "cross"},
    {"no finite value (off the scale)", "#D55E00", "diamond"},
};

/// Sets scale \p Scale's domain to the categories \p Present, in the
/// table's order, and its range to their colours (a `shape` scale: their
/// markers), so that a legend lists only what the plot has and a colour
/// means the same in every plot.
void setCategories(json::Value &Spec, llvm::StringRef Scale,
                   const std::set<std::string> &Present) {
  bool Shape = Scale == "shape";
  json::Array Domain, Range;
  for (const CategoryStyle &C : Categories)
    if (Present.count(C.Name)) {
      Domain.push_back(C.Name);
      Range.push_back(Shape ? C.Shape : C.Colour);
    }
  // A wall the table does not name (none binds a step today): black.
  for (const std::string &P : Present)
    if (llvm::none_of(Categories,
                      [&](const CategoryStyle &C) { return P == C.Name; })) {
      Domain.push_back(P);
      Range.push_back(Shape ? "circle" : "#000000");
    }
  json::Object &S = scaleNamed(Spec, Scale);
  S["domain"] = std::move(Domain);
  S["range"] = std::move(Range);
}

Plot makePlot(std::string Id, std::string Title, std::string Caption,
              json::Value Spec) {
  setSignal(Spec, "title", Title);
  return Plot{std::move(Id), std::move(Title), std::move(Caption),
              std::move(Spec)};
}

/// "HBM bandwidth [TB/s]".
std::string axisTitle(llvm::StringRef Name, const AxisUnit &U) {
  return fmt::format("{} [{}]", Name.str(), U.Unit);
}

/// A d3 number format for values up to \p MaxAbs on an axis: SI
/// prefixes for large ones (12k); otherwise Vega's default, which gives
/// ticks as many digits as their step needs (a share reads 0.6, not
/// "600m").
json::Value numberFormat(double MaxAbs) {
  if (std::fabs(MaxAbs) >= 1e4)
    return "~s";
  return nullptr; // Vega's own: as many digits as the ticks' step needs
}

/// A value on an axis.
double scaled(double V, const AxisUnit &U) { return round6(V / U.Scale); }

} // namespace

AxisUnit axisUnit(double MaxAbs, const Dimension &D) {
  double M = std::fabs(MaxAbs);
  if (!std::isfinite(M))
    M = 0;
  if (D.isDimensionless())
    return {1, "1"};
  if (D == Dimension::base(BaseDim::Time)) {
    if (M >= 2 * 86400)
      return {86400, "day"};
    if (M >= 7200)
      return {3600, "h"};
    if (M >= 120)
      return {60, "min"};
    if (M >= 1)
      return {1, "s"};
    if (M >= 1e-3)
      return {1e-3, "ms"};
    if (M >= 1e-6)
      return {1e-6, "us"};
    return {1e-9, "ns"};
  }
  std::string Symbol = D.str();
  double Pre = 1;
  // Money and mass a second read best an hour (formatQuantity's rule).
  if (Symbol == "USD/s")
    return {1.0 / 3600, "USD/h"};
  if (Symbol == "kg/s")
    return {1.0 / 3600, "kg/h"};
  if (Symbol == "USD" || Symbol.rfind("kg", 0) == 0)
    return {1, Symbol};
  static const struct {
    double Scale;
    const char *Prefix;
  } Prefixes[] = {{1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"},
                  {1e6, "M"},  {1e3, "k"},  {1, ""},     {1e-3, "m"},
                  {1e-6, "u"}, {1e-9, "n"}};
  if (M == 0)
    return {1, Symbol};
  for (const auto &P : Prefixes)
    if (M >= P.Scale) {
      Pre = P.Scale;
      return {Pre, std::string(P.Prefix) + Symbol};
    }
  return {1e-9, "n" + Symbol};
}

//===----------------------------------------------------------------------===//
// A scenario
//===----------------------------------------------------------------------===//

namespace {

/// The phases whose roofline figures the result has, the main one first.
std::vector<PhaseId> rooflinePhases(const ScenarioResult &R) {
  std::vector<PhaseId> Out;
  for (const PhaseInfo &P : allPhases())
    if (R.has(P.Id, PhaseMetricId::Flops) &&
        R.has(P.Id, PhaseMetricId::Bytes) &&
        R.has(P.Id, PhaseMetricId::ComputeTime) &&
        R.has(P.Id, PhaseMetricId::MemoryTime) &&
        R.has(P.Id, PhaseMetricId::Efficiency) &&
        R(P.Id, PhaseMetricId::Flops) > 0 &&
        R(P.Id, PhaseMetricId::Bytes) > 0 &&
        R(P.Id, PhaseMetricId::ComputeTime) > 0 &&
        R(P.Id, PhaseMetricId::MemoryTime) > 0 &&
        R(P.Id, PhaseMetricId::Efficiency) > 0)
      Out.push_back(P.Id);
  PhaseId Main = R.Binding ? R.Binding->Phase : PhaseId::Decode;
  std::stable_partition(Out.begin(), Out.end(),
                        [&](PhaseId P) { return P == Main; });
  return Out;
}

std::optional<Plot> rooflinePlot(const ScenarioResult &R) {
  std::vector<PhaseId> Phases = rooflinePhases(R);
  if (Phases.empty() || !R.has(MetricId::RidgePoint) ||
      !(R[MetricId::RidgePoint] > 0))
    return std::nullopt;
  PhaseId Main = Phases.front();
  // The ceilings, recovered from the phase's roofline terms: compute time
  // T_c = F / (peak * eta), memory time T_m = bytes / (BW * eta_mem); the
  // ridge point is peak / BW (nominal).
  auto at = [&](PhaseId P, PhaseMetricId M) { return R(P, M); };
  double Eta = at(Main, PhaseMetricId::Efficiency);
  double Peak = at(Main, PhaseMetricId::Flops) /
                (at(Main, PhaseMetricId::ComputeTime) * Eta);
  double Bw = Peak / R[MetricId::RidgePoint];
  double BwEff =
      at(Main, PhaseMetricId::Bytes) / at(Main, PhaseMetricId::MemoryTime);
  double PeakEff = Peak * Eta;
  // Intensities to cover: the ridge point and every phase, to the decades
  // around them.
  double Lo = R[MetricId::RidgePoint], Hi = Lo;
  for (PhaseId P : Phases) {
    double I = at(P, PhaseMetricId::Flops) / at(P, PhaseMetricId::Bytes);
    Lo = std::min(Lo, I);
    Hi = std::max(Hi, I);
  }
  Lo = std::pow(10, std::floor(std::log10(Lo)));
  Hi = std::pow(10, std::ceil(std::log10(Hi)));
  if (Hi <= Lo)
    Hi = Lo * 10;
  // The unit of the lowest value drawn, so that no tick needs a prefix of
  // its own (no "20m PFLOP/s").
  double Lowest = std::min(BwEff * Lo, Peak);
  for (PhaseId P : Phases)
    Lowest = std::min(Lowest,
                      at(P, PhaseMetricId::Flops) / R[phaseInfo(P).StepTime]);
  AxisUnit Y = axisUnit(Lowest, metricInfo(MetricId::ModelFlopsPerDevice).Dim);
  const Dimension &FlopRate = metricInfo(MetricId::ModelFlopsPerDevice).Dim;
  Dimension ByteRate =
      Dimension::base(BaseDim::Data) / Dimension::base(BaseDim::Time);
  json::Array Ceilings;
  auto roof = [&](const std::string &Name, double P, double W) {
    double Ridge = P / W;
    for (double X : {Lo, Ridge, Hi})
      Ceilings.push_back(json::Object{{"ceiling", Name},
                                      {"x", round6(X)},
                                      {"y", scaled(std::min(P, X * W), Y)}});
  };
  roof(fmt::format("nominal: peak {}, memory {}",
                   formatQuantity(Peak, FlopRate),
                   formatQuantity(Bw, ByteRate)),
       Peak, Bw);
  bool Training = Main == PhaseId::Train;
  roof(fmt::format("at {}'s efficiencies: {} x peak{}, {} x memory",
                   phaseInfo(Main).Prefix, formatNumber(Eta),
                   Training ? " in model FLOPs" : "", formatNumber(BwEff / Bw)),
       PeakEff, BwEff);
  json::Array Points;
  std::vector<std::pair<double, double>> Labelled;
  std::vector<size_t> LabelIndex;
  for (PhaseId P : Phases) {
    double F = at(P, PhaseMetricId::Flops);
    double I = F / at(P, PhaseMetricId::Bytes);
    double Tc = at(P, PhaseMetricId::ComputeTime);
    double Tm = at(P, PhaseMetricId::MemoryTime);
    // A decoder's bound is its kernel classes' rooflines in sequence.
    double Roof = F / (R.has(P, PhaseMetricId::RooflineTime)
                           ? at(P, PhaseMetricId::RooflineTime)
                           : std::max(Tc, Tm));
    const char *Bound = Tc >= Tm ? "compute-bound" : "memory-bound";
    std::string Name = phaseInfo(P).Prefix;
    Points.push_back(json::Object{
        {"phase", Name},
        {"marker", "roofline bound"},
        {"x", round6(I)},
        {"y", scaled(Roof, Y)},
        {"label", ""},
        {"tip", fmt::format("{} FLOP/B, {} ({})", formatNumber(I),
                            formatQuantity(Roof, FlopRate), Bound)}});
    MetricId StepMetric = phaseInfo(P).StepTime;
    if (R.has(StepMetric) && R[StepMetric] > 0) {
      double Achieved = F / R[StepMetric];
      // Phases at one point (a request's prefill is the batch's at batch
      // 1) share one label.
      std::string Label = Name;
      for (size_t K = 0; K < Labelled.size(); ++K)
        if (std::fabs(Labelled[K].first - I) <= 0.02 * I &&
            std::fabs(Labelled[K].second - Achieved) <= 0.02 * Achieved) {
          auto &Other = *Points[LabelIndex[K]].getAsObject();
          Other["label"] = Other.getString("label")->str() + ", " + Name;
          Label.clear();
          break;
        }
      if (!Label.empty()) {
        Labelled.push_back({I, Achieved});
        LabelIndex.push_back(Points.size());
      }
      Points.push_back(json::Object{
          {"phase", Name},
          {"marker", "achieved (step time)"},
          {"x", round6(I)},
          {"y", scaled(Achieved, Y)},
          {"label", Label},
          {"tip",
           fmt::format(
               "{} over the {} {}", formatQuantity(Achieved, FlopRate),
               metricInfo(StepMetric).Name,
               formatQuantity(R[StepMetric], metricInfo(StepMetric).Dim))}});
    }
  }
  json::Value S = spec("roofline");
  setData(S, "ceilings", std::move(Ceilings));
  setData(S, "phases", std::move(Points));
  double Ridge = R[MetricId::RidgePoint];
  setData(S, "ridge",
          json::Array{json::Object{
              {"x", round6(Ridge)},
              {"y", scaled(Peak, Y)},
              {"label",
               fmt::format("ridge {} FLOP/B", formatNumber(round6(Ridge)))}}});
  setSignal(S, "yTitle", axisTitle("attainable performance per device", Y));
  return makePlot(
      R.Scenario + ".roofline", "Roofline of " + R.Scenario,
      fmt::format(
          "Per device. The nominal roof is the dense peak at the workload's "
          "precision and the memory bandwidth (ridge {} FLOP/B); the second "
          "is what {}'s kernels reach (its blended efficiency{} and the "
          "memory efficiency). Each phase sits at its arithmetic intensity "
          "(FLOPs "
          "over bytes per device): a hollow marker at its roofline bound, "
          "FLOPs / max(compute, memory time); a filled one at its FLOPs over "
          "its whole step time, communication and overheads included.",
          formatNumber(round6(Ridge)), phaseInfo(Main).Prefix,
          Training ? ", counted in model FLOPs: with recomputation the "
                     "devices run more, which HFU counts"
                   : ""),
      std::move(S));
}

std::optional<Plot> memoryPlot(const ScenarioResult &R) {
  if (!R.has(MetricId::MemoryPerDevice) || !R.has(MetricId::DeviceMemory))
    return std::nullopt;
  double Total = R[MetricId::MemoryPerDevice];
  double Cap = R[MetricId::DeviceMemory];
  const struct {
    MetricId M;
    const char *Name;
  } Parts[] = {
      {MetricId::WeightsPerDevice, "weights"},
      {MetricId::KVCachePerDevice, "KV cache"},
      {MetricId::ActivationsPerDevice, "activations"},
      {MetricId::GradientsPerDevice, "gradients"},
      {MetricId::OptimizerPerDevice, "optimizer state"},
      {MetricId::TrainingStatePerDevice, "weights, gradients, optimizer"},
      {MetricId::RuntimeReserve, "runtime reserve"}};
  Dimension Bytes = metricInfo(MetricId::MemoryPerDevice).Dim;
  AxisUnit U = axisUnit(std::max(Total, Cap), Bytes);
  json::Array Rows;
  double At = 0;
  std::vector<std::string> Made;
  for (const auto &P : Parts) {
    if (!R.has(P.M) || !(R[P.M] > 0))
      continue;
    double V = R[P.M];
    Rows.push_back(json::Object{{"part", P.Name},
                                {"start", scaled(At, U)},
                                {"end", scaled(At + V, U)},
                                {"label", formatQuantity(V, Bytes)}});
    Made.push_back(formatQuantity(V, Bytes) + " " + P.Name);
    At += V;
  }
  // What the parts do not name (a model's own terms): shown, not hidden.
  if (Total - At > 1e-3 * Total) {
    Rows.push_back(json::Object{{"part", "other"},
                                {"start", scaled(At, U)},
                                {"end", scaled(Total, U)},
                                {"label", formatQuantity(Total - At, Bytes)}});
    Made.push_back(formatQuantity(Total - At, Bytes) + " other");
  }
  if (Rows.empty())
    return std::nullopt;
  json::Value S = spec("memory");
  setData(S, "parts", std::move(Rows));
  setData(S, "capacity",
          json::Array{json::Object{
              {"x", scaled(Cap, U)},
              {"label", "capacity " + formatQuantity(Cap, Bytes)}}});
  setSignal(S, "xTitle", axisTitle("memory per device", U));
  return makePlot(
      R.Scenario + ".memory", "Memory per device of " + R.Scenario,
      fmt::format("{} of {} ({:.2f}%): {}. The dashed line is the device's "
                  "capacity; wall 2 fails when the bar crosses it.",
                  formatQuantity(Total, Bytes), formatQuantity(Cap, Bytes),
                  100 * Total / Cap, llvm::join(Made, " + ")),
      std::move(S));
}

std::optional<Plot> stepPlot(const ScenarioResult &R) {
  // The candidates are the phase metrics that compete for the binding wall
  // (Metrics.def's Binds), in the contract's order, named by their wall;
  // the bubble, a communication wall's time of its own, by itself.
  struct Part {
    PhaseMetricId M;
    const char *Name;
  };
  std::vector<Part> Parts;
  for (const PhaseMetricInfo &M : allPhaseMetrics())
    if (M.Binds)
      Parts.push_back({M.Id, M.Id == PhaseMetricId::BubbleTime
                                 ? "pipeline bubble"
                                 : wallInfo(M.W)->Name});
  Dimension Time = Dimension::base(BaseDim::Time);
  std::vector<PhaseId> Phases;
  for (const PhaseInfo &P : allPhases())
    if (R.has(P.Id, PhaseMetricId::ComputeTime))
      Phases.push_back(P.Id);
  json::Array Rows;
  int64_t Order = 0;
  for (PhaseId P : Phases) {
    // The largest candidate binds (as runtime/Binding.cpp decides: the
    // earlier wins a tie). Each bar is a share of it, a decode step being a
    // thousandth of a prefill; the label gives the time.
    double Largest = -1;
    const char *Binds = "";
    for (const auto &Part : Parts)
      if (R.has(P, Part.M) && R(P, Part.M) > Largest) {
        Largest = R(P, Part.M);
        Binds = Part.Name;
      }
    if (!(Largest > 0))
      continue;
    for (const auto &Part : Parts) {
      if (!R.has(P, Part.M) || !(R(P, Part.M) > 0))
        continue;
      double V = R(P, Part.M);
      Rows.push_back(json::Object{
          {"row", fmt::format("{}: {}", phaseInfo(P).Prefix, Part.Name)},
          {"order", Order++},
          {"component", Part.Name},
          {"share", round6(V / Largest)},
          {"binding", llvm::StringRef(Binds) == Part.Name},
          {"label", formatQuantity(V, Time)}});
    }
  }
  if (Rows.empty())
    return std::nullopt;
  size_t Count = Rows.size();
  std::set<std::string> Present;
  for (const json::Value &Row : Rows)
    Present.insert(Row.getAsObject()->getString("component")->str());
  json::Value S = spec("step");
  setData(S, "parts", std::move(Rows));
  setCategories(S, "colour", Present);
  setHeight(S, 22 * Count);
  std::string Binding;
  if (R.Binding && R.Binding->Known)
    Binding = fmt::format(
        " The binding wall of the {} step is {}, {}x ahead of {}.",
        phaseInfo(R.Binding->Phase).Prefix, R.Binding->label(),
        formatNumber(round6(R.Binding->Margin)), R.Binding->RunnerUp);
  return makePlot(
      R.Scenario + ".step", "Step time of " + R.Scenario,
      "Each phase's candidate times (walls 1, 2, 4, 14, 15) as a share of "
      "its largest, which names the phase's binding wall (outlined); the "
      "labels give the times. Compute and memory overlap, so the larger of "
      "the two is the roofline time." +
          Binding,
      std::move(S));
}

/// An empirical CDF of \p Samples, at most \p Steps points.
json::Array cdfPoints(std::vector<double> Samples, const AxisUnit &U,
                      size_t Steps = 200) {
  json::Array Out;
  std::sort(Samples.begin(), Samples.end());
  size_t N = Samples.size();
  if (!N)
    return Out;
  size_t Take = std::min(N, Steps);
  Out.push_back(json::Object{{"x", scaled(Samples.front(), U)}, {"p", 0.0}});
  for (size_t K = 1; K <= Take; ++K) {
    size_t I = (K * N + Take - 1) / Take - 1; // the sample at quantile K/Take
    Out.push_back(json::Object{{"x", scaled(Samples[I], U)},
                               {"p", round6(double(I + 1) / N)}});
  }
  return Out;
}

void cdfPlots(const ScenarioResult &R, const LatencySamples &Sim,
              std::vector<Plot> &Out) {
  const struct {
    const char *Key, *Name;
    const std::vector<double> *Samples;
    std::vector<std::pair<MetricId, double>> Analytic;
  } Kinds[] = {{"ttft",
                "time to first token",
                &Sim.TTFT,
                {{MetricId::TtftP50, 0.5},
                 {MetricId::TtftP90, 0.9},
                 {MetricId::TtftP99, 0.99},
                 {MetricId::TtftP999, 0.999}}},
               {"tpot",
                "time per output token",
                &Sim.TPOT,
                {{MetricId::TpotP50, 0.5}, {MetricId::TpotP99, 0.99}}},
               {"latency",
                "end-to-end latency",
                &Sim.E2E,
                {{MetricId::LatencyP50, 0.5},
                 {MetricId::LatencyP90, 0.9},
                 {MetricId::LatencyP99, 0.99},
                 {MetricId::LatencyP999, 0.999}}}};
  Dimension Time = Dimension::base(BaseDim::Time);
  for (const auto &K : Kinds) {
    std::vector<double> Finite;
    for (double V : *K.Samples)
      if (std::isfinite(V))
        Finite.push_back(V);
    if (Finite.empty())
      continue;
    double Max = *std::max_element(Finite.begin(), Finite.end());
    for (const auto &[M, P] : K.Analytic)
      if (R.has(M) && std::isfinite(R[M]))
        Max = std::max(Max, R[M]);
    AxisUnit U = axisUnit(Max, Time);
    json::Array Analytic;
    for (const auto &[M, P] : K.Analytic)
      if (R.has(M) && std::isfinite(R[M]))
        Analytic.push_back(
            json::Object{{"x", scaled(R[M], U)},
                         {"p", P},
                         {"label", fmt::format("p{:g}", P * 100)},
                         {"tip", fmt::format("{} = {}", metricInfo(M).Name,
                                             formatQuantity(R[M], Time))}});
    size_t N = Finite.size();
    json::Value S = spec("cdf");
    setData(S, "simulated", cdfPoints(std::move(Finite), U));
    setData(S, "analytic", std::move(Analytic));
    setSignal(S, "xTitle", axisTitle(K.Name, U));
    Out.push_back(makePlot(
        fmt::format("{}.cdf.{}", R.Scenario, K.Key),
        fmt::format("{} of {}: simulated against analytic", K.Name, R.Scenario),
        fmt::format("The CDF of the {} requests the `simulate` block played "
                    "(docs/simulator.md), and the percentiles the closed "
                    "forms (walls 4 and 7) give.",
                    N),
        std::move(S)));
  }
}

} // namespace

std::vector<Plot> scenarioPlots(const ScenarioResult &R,
                                const LatencySamples *Simulated) {
  std::vector<Plot> Out;
  if (std::optional<Plot> P = rooflinePlot(R))
    Out.push_back(std::move(*P));
  if (std::optional<Plot> P = memoryPlot(R))
    Out.push_back(std::move(*P));
  if (std::optional<Plot> P = stepPlot(R))
    Out.push_back(std::move(*P));
  if (Simulated)
    cdfPlots(R, *Simulated, Out);
  return Out;
}

std::optional<Plot> fleetPlot(const FleetResult &F) {
  const struct {
    std::optional<double> FleetRow::*Field;
    MetricId Metric;
    const char *Name;
  } Figures[] = {{&FleetRow::Power, MetricId::Power, "power"},
                 {&FleetRow::CostRate, MetricId::CostPerHour, "cost"},
                 {&FleetRow::CarbonRate, MetricId::CarbonRate, "CO2e"},
                 {&FleetRow::WaterRate, MetricId::WaterRate, "water"}};
  json::Array Rows;
  int64_t Order = 0;
  std::vector<std::string> Shown;
  for (const auto &Fig : Figures) {
    const std::optional<double> &Total = F.Total.*Fig.Field;
    if (!Total || !(*Total > 0))
      continue;
    const Dimension &Dim = metricInfo(Fig.Metric).Dim;
    std::string Figure =
        fmt::format("{} ({})", Fig.Name, formatQuantity(*Total, Dim));
    Shown.push_back(Figure);
    double At = 0;
    for (const FleetRow &M : F.Members) {
      const std::optional<double> &V = M.*Fig.Field;
      if (!V || !(*V > 0))
        continue;
      Rows.push_back(json::Object{
          {"figure", Figure},
          {"order", Order},
          {"member", M.Name},
          {"site", M.Site.empty() ? std::string("no site") : M.Site},
          {"start", round6(At / *Total)},
          {"end", round6((At + *V) / *Total)},
          {"label",
           fmt::format("{}, {:.1f}% of the fleet's {}", formatQuantity(*V, Dim),
                       100 * *V / *Total, Fig.Name)}});
      At += *V;
    }
    ++Order;
  }
  if (Rows.empty())
    return std::nullopt;
  json::Value S = spec("fleet");
  setData(S, "shares", std::move(Rows));
  setHeight(S, 34 * Order);
  return makePlot(
      F.Name + ".fleet", "Fleet " + F.Name + ": who uses what",
      fmt::format("Each member's share of the fleet's {} (the totals of "
                  "`mlsc eval`'s fleet table, walls 17-18); a member that "
                  "does not fit gives no figures.",
                  llvm::join(Shown, ", ")),
      std::move(S));
}

//===----------------------------------------------------------------------===//
// Sensitivity
//===----------------------------------------------------------------------===//

std::vector<Plot> sensitivityPlots(const std::string &Scenario,
                                   const std::string &Metric,
                                   const std::vector<Elasticity> &Es,
                                   const std::vector<FactorFlips> &Flips,
                                   const graph::Graph &G, size_t Shown) {
  std::vector<Plot> Out;
  if (!Es.empty()) {
    json::Array Rows;
    for (size_t K = 0; K < Es.size() && K < Shown; ++K)
      Rows.push_back(
          json::Object{{"input", Es[K].Name},
                       {"elasticity", round6(Es[K].Value)},
                       {"rank", static_cast<int64_t>(K)},
                       {"effect", Es[K].Value > 0 ? "raises the metric"
                                                  : "lowers the metric"}});
    size_t Count = Rows.size();
    json::Value S = spec("tornado");
    setData(S, "inputs", std::move(Rows));
    setHeight(S, 22 * Count);
    setSignal(S, "xTitle",
              fmt::format("elasticity of {} (% change per 1% of the input) "
                          "[1]",
                          Metric));
    Out.push_back(makePlot(
        fmt::format("{}.{}.tornado", Scenario, Metric),
        fmt::format("What {}.{} hangs on", Scenario, Metric),
        fmt::format("The {} largest of {} elasticities d ln m / d ln x "
                    "(wall 21; central differences of 0.01%, whole-valued "
                    "counts by one): a bar of -1 means 1% more of the input "
                    "gives 1% less of the metric.",
                    Count, Es.size()),
        std::move(S)));
  }
  if (!Flips.empty()) {
    json::Array Segments, Current;
    for (size_t K = 0; K < Flips.size(); ++K) {
      const FactorFlips &F = Flips[K];
      const Dimension &Dim = G.node(F.Leaf).Dim;
      auto show = [&](double V) {
        return Dim.isDimensionless() ? formatNumber(V) : formatQuantity(V, Dim);
      };
      double Span = F.High - F.Low;
      auto pos = [&](double V) {
        return Span > 0 ? round6((V - F.Low) / Span) : 0.0;
      };
      double From = F.Low;
      unsigned Wall = F.WallAtLow;
      for (const FlipPoint &P : F.Flips) {
        Segments.push_back(json::Object{{"factor", F.Name},
                                        {"rank", static_cast<int64_t>(K)},
                                        {"start", pos(From)},
                                        {"end", pos(P.At)},
                                        {"wall", wallShortName(P.From)},
                                        {"from", show(From)},
                                        {"to", show(P.At)}});
        From = P.At;
        Wall = P.To;
      }
      Segments.push_back(json::Object{{"factor", F.Name},
                                      {"rank", static_cast<int64_t>(K)},
                                      {"start", pos(From)},
                                      {"end", 1.0},
                                      {"wall", wallShortName(Wall)},
                                      {"from", show(From)},
                                      {"to", show(F.High)}});
      Current.push_back(json::Object{
          {"factor", F.Name}, {"at", pos(F.Value)}, {"label", show(F.Value)}});
    }
    size_t Count = Flips.size();
    std::set<std::string> Walls;
    for (const json::Value &Seg : Segments)
      Walls.insert(Seg.getAsObject()->getString("wall")->str());
    json::Value S = spec("flips");
    setData(S, "segments", std::move(Segments));
    setCategories(S, "colour", Walls);
    setData(S, "current", std::move(Current));
    setHeight(S, 22 * Count);
    size_t Robust = llvm::count_if(
        Flips, [](const FactorFlips &F) { return F.Flips.empty(); });
    Out.push_back(makePlot(
        fmt::format("{}.flips", Scenario),
        fmt::format("Binding wall of {} across the calibrated factors",
                    Scenario),
        fmt::format("Each calibrated factor the scenario reads, swept over "
                    "its plausible range (runtime/Defaults.def) with the "
                    "others at their values; the colour is the binding wall "
                    "there, the black tick today's value. {} of {} leave "
                    "the binding wall where it is.",
                    Robust, Count),
        std::move(S)));
  }
  return Out;
}

//===----------------------------------------------------------------------===//
// Grids: sweeps and Pareto solves
//===----------------------------------------------------------------------===//

namespace {

/// At most this many cells a side in a heat map, points on a line.
constexpr size_t MaxBins = 48;
constexpr size_t MaxLinePoints = 400;
/// At most this many dominated points drawn in a Pareto plot (a stride
/// sample beyond it); the front is drawn whole.
constexpr size_t MaxDominated = 3000;
/// At most this many heat maps per sweep (its first numeric columns).
constexpr size_t MaxHeatMaps = 6;
/// Heat maps of at most this many cells print each cell's value.
constexpr size_t MaxLabelledCells = 144;

/// A variable's values, in grid order, and the bin each falls into.
struct Axis {
  std::vector<double> Values; ///< SI, or option indices
  std::vector<size_t> BinOf;  ///< per value index
  size_t Bins = 0;
  std::vector<std::string> Labels; ///< per bin
  std::vector<double> Centre;      ///< per bin, SI (numeric axes)
  std::unordered_map<double, size_t> Index;
  bool Categorical = false;
  bool Log = false;
  double Max = 0; ///< the largest magnitude, SI
  AxisUnit U;
};

Axis makeAxis(const query::Variable &V, size_t MaxB) {
  Axis A;
  A.Values = V.Values;
  A.Categorical = V.isEntity();
  size_t N = A.Values.size();
  for (size_t I = 0; I < N; ++I)
    A.Index.emplace(A.Values[I], I);
  A.Bins = std::min(N, MaxB);
  A.BinOf.resize(N);
  // Values are binned in sorted order, equal counts a bin.
  std::vector<size_t> Order(N);
  for (size_t I = 0; I < N; ++I)
    Order[I] = I;
  if (!A.Categorical)
    std::stable_sort(Order.begin(), Order.end(), [&](size_t L, size_t R) {
      return A.Values[L] < A.Values[R];
    });
  for (size_t K = 0; K < N; ++K)
    A.BinOf[Order[K]] = K * A.Bins / N;
  double Max = 0, Min = INFINITY, MinPos = INFINITY;
  for (double X : A.Values) {
    Max = std::max(Max, std::fabs(X));
    Min = std::min(Min, X);
    if (X > 0)
      MinPos = std::min(MinPos, X);
  }
  A.Max = Max;
  // The unit of the smallest value, so that the labels are whole where the
  // values are (512 tok, not 0.5120 ktok), unless that makes them huge.
  double UnitOf = std::isfinite(MinPos) && Max / MinPos <= 1e4 ? MinPos : Max;
  A.U = A.Categorical ? AxisUnit{1, ""} : axisUnit(UnitOf, V.Dim);
  // A range over a decade or more (batch 1 to 512) reads best on a log
  // axis.
  A.Log = !A.Categorical && Min > 0 && Max / MinPos >= 10;
  A.Labels.assign(A.Bins, "");
  A.Centre.assign(A.Bins, 0);
  std::vector<double> Lo(A.Bins, INFINITY), Hi(A.Bins, -INFINITY);
  for (size_t I = 0; I < N; ++I) {
    Lo[A.BinOf[I]] = std::min(Lo[A.BinOf[I]], A.Values[I]);
    Hi[A.BinOf[I]] = std::max(Hi[A.BinOf[I]], A.Values[I]);
  }
  auto show = [&](double V) {
    return fmt::format("{:g}", round6(V / A.U.Scale));
  };
  for (size_t B = 0; B < A.Bins; ++B) {
    if (A.Categorical) {
      for (size_t I = 0; I < N; ++I)
        if (A.BinOf[I] == B) {
          size_t Opt = static_cast<size_t>(A.Values[I]);
          A.Labels[B] =
              Opt < V.Labels.size() ? V.Labels[Opt] : formatNumber(A.Values[I]);
        }
      continue;
    }
    A.Centre[B] = (Lo[B] + Hi[B]) / 2;
    A.Labels[B] = Lo[B] == Hi[B]
                      ? show(Lo[B])
                      : fmt::format("{}-{}", show(Lo[B]), show(Hi[B]));
  }
  return A;
}

std::string axisName(const query::Variable &V, const Axis &A) {
  if (A.Categorical)
    return V.Name;
  return axisTitle(V.Name, A.U);
}

/// What the plots keep of a cell (or of a line's bin) of the grid.
struct Cell {
  size_t Points = 0;
  size_t Fit = 0;   ///< valid points that fit (have a binding wall)
  size_t Meets = 0; ///< ... and meet every condition: feasible
  /// Per column, over the valid points with a finite value there (those
  /// that do not fit too: `mlsc sweep` prints their values).
  std::vector<double> Sum, Lo, Hi;
  std::vector<size_t> N;
  std::vector<size_t> NonFinite;    ///< valid points with an infinite value
  std::map<unsigned, size_t> Walls; ///< binding wall -> points
};

/// A Pareto point: its objectives (as minimisation) and its variables.
struct ParetoPoint {
  std::array<double, 2> Obj;
  std::vector<double> Vars;
};

struct Collected {
  std::vector<Cell> Cells; ///< X bins x Y bins (Y = 1 for a line)
  /// A Pareto solve: the front of the feasible points (exact, kept as
  /// they come), and a stride sample of all of them.
  std::vector<ParetoPoint> Front, Sample;
  size_t SampleStride = 1, Meeting = 0;
};

/// The columns a cell averages: the sweep's reported numbers (not
/// conditions), or a solve's objectives.
std::vector<const query::Term *> plottedTerms(const query::Query &Q) {
  std::vector<const query::Term *> Out;
  const std::vector<query::Term> &From =
      Q.K == query::Query::Kind::Sweep ? Q.Report : Q.Objectives;
  for (const query::Term &T : From)
    if (!T.IsBool)
      Out.push_back(&T);
  return Out;
}

/// "ttft.p99 [ms]" for a term, with its axis unit for \p Max.
std::string termTitle(const query::Term &T, double Max, AxisUnit &U) {
  U = axisUnit(Max, T.Dim);
  return axisTitle(T.Text, U);
}

/// The magnitudes of a column's values: the largest, the smallest
/// positive, and whether all are positive (a log scale needs that).
struct Span {
  double Max = 0, MinPos = INFINITY;
  bool AllPositive = true;
  /// Whether the values span \p Ratio or more (100: two decades).
  bool decades(double Ratio) const {
    return AllPositive && std::isfinite(MinPos) && Max / MinPos >= Ratio;
  }
};

/// "1 point", "3 points".
std::string points(size_t N) {
  return fmt::format("{} point{}", N, N == 1 ? "" : "s");
}

} // namespace

GridPlotData gridPlots(const Evaluator &Base, const query::Query &Q,
                       unsigned Threads) {
  GridPlotData Out;
  if (Q.Vars.empty() || llvm::any_of(Q.Vars, [](const query::Variable &V) {
        return V.Values.empty();
      }))
    return Out;
  bool Pareto = Q.K == query::Query::Kind::Solve;
  if (Pareto && Q.Objectives.size() != 2)
    return Out;
  // A Pareto solve compares as minimisation (runtime/Query.cpp).
  double Sign = Q.Direction < 0 ? 1 : -1;
  std::vector<const query::Term *> Terms = plottedTerms(Q);
  // Every point kept: the plotted terms and the conditions as columns, no
  // filter, no order.
  query::Query All = Q;
  All.K = query::Query::Kind::Sweep;
  All.Report.clear();
  for (const query::Term *T : Terms)
    All.Report.push_back(*T);
  for (const query::Term &C : Q.Conditions)
    All.Report.push_back(C);
  All.Conditions.clear();
  All.SortBy.clear();
  All.Top = 0;
  All.Output.clear();
  size_t NT = Terms.size();
  bool Line = Q.Vars.size() == 1;
  Axis X = makeAxis(Q.Vars[0], Line ? MaxLinePoints : MaxBins);
  Axis Y;
  if (!Line)
    Y = makeAxis(Q.Vars[1], MaxBins);
  size_t YBins = Line ? 1 : Y.Bins;
  Collected C;
  C.Cells.assign(X.Bins * YBins, Cell{});
  for (Cell &Cl : C.Cells) {
    Cl.Sum.assign(NT, 0);
    Cl.Lo.assign(NT, INFINITY);
    Cl.Hi.assign(NT, -INFINITY);
    Cl.N.assign(NT, 0);
    Cl.NonFinite.assign(NT, 0);
  }
  auto dominates = [](const std::array<double, 2> &A,
                      const std::array<double, 2> &B) {
    return A[0] <= B[0] && A[1] <= B[1] && (A[0] < B[0] || A[1] < B[1]);
  };
  auto Sink = [&](llvm::ArrayRef<GridRow> Rows) {
    for (const GridRow &Row : Rows) {
      auto XI = X.Index.find(Row.Vars[0]);
      size_t XB = XI == X.Index.end() ? 0 : X.BinOf[XI->second];
      size_t YB = 0;
      if (!Line) {
        auto YI = Y.Index.find(Row.Vars[1]);
        YB = YI == Y.Index.end() ? 0 : Y.BinOf[YI->second];
      }
      Cell &Cl = C.Cells[YB * X.Bins + XB];
      ++Cl.Points;
      // Row.Meets: the point is valid (no field left its domain). It fits
      // when it has a binding wall, and is feasible when it also meets
      // every condition.
      bool Valid = Row.Meets;
      bool Fits = Valid && Row.Binding != 0;
      bool Meets = Fits;
      for (size_t K = NT; K < Row.Values.size(); ++K)
        Meets = Meets && Row.Values[K] != 0;
      ++Cl.Walls[Fits ? Row.Binding : 0];
      Cl.Fit += Fits;
      Cl.Meets += Meets;
      if (Valid)
        for (size_t K = 0; K < NT; ++K) {
          double V = Row.Values[K];
          if (!std::isfinite(V)) {
            ++Cl.NonFinite[K];
            continue;
          }
          Cl.Sum[K] += V;
          Cl.Lo[K] = std::min(Cl.Lo[K], V);
          Cl.Hi[K] = std::max(Cl.Hi[K], V);
          ++Cl.N[K];
        }
      if (Pareto && Meets && std::isfinite(Row.Values[0]) &&
          std::isfinite(Row.Values[1])) {
        ParetoPoint P{{Sign * Row.Values[0], Sign * Row.Values[1]}, Row.Vars};
        if (!llvm::any_of(C.Front, [&](const ParetoPoint &F) {
              return dominates(F.Obj, P.Obj) || F.Obj == P.Obj;
            })) {
          llvm::erase_if(C.Front, [&](const ParetoPoint &F) {
            return dominates(P.Obj, F.Obj);
          });
          C.Front.push_back(P);
        }
        // A sample of every feasible point: every SampleStride-th, the
        // stride doubled (and the sample halved) when it fills.
        if (C.Meeting++ % C.SampleStride == 0) {
          C.Sample.push_back(std::move(P));
          if (C.Sample.size() >= 2 * MaxDominated) {
            std::vector<ParetoPoint> Half;
            for (size_t I = 0; I < C.Sample.size(); I += 2)
              Half.push_back(std::move(C.Sample[I]));
            C.Sample.swap(Half);
            C.SampleStride *= 2;
          }
        }
      }
    }
  };
  GridResult R = runSweep(Base, All, Threads, nullptr, Sink);
  Out.Points = R.Points;
  Out.Binned = X.Bins < X.Values.size() || (!Line && Y.Bins < Y.Values.size());
  auto mean = [&](const Cell &Cl, size_t K) {
    return Cl.N[K] ? Cl.Sum[K] / Cl.N[K] : NAN;
  };
  // The magnitudes of column K's cell means (with \p WholeCellsOnly, of
  // cells none of whose values is infinite).
  auto spanOf = [&](size_t K, bool WholeCellsOnly) {
    Span Sp;
    for (const Cell &Cl : C.Cells)
      if (Cl.N[K] && !(WholeCellsOnly && Cl.NonFinite[K])) {
        double M = mean(Cl, K);
        Sp.Max = std::max(Sp.Max, std::fabs(M));
        Sp.AllPositive = Sp.AllPositive && M > 0;
        if (M > 0)
          Sp.MinPos = std::min(Sp.MinPos, M);
      }
    return Sp;
  };
  // A cell's value for a hover: the value, or the mean of several with
  // their range, and what has no finite value.
  auto valueTip = [&](const Cell &Cl, size_t K) {
    const query::Term &T = *Terms[K];
    std::string Tip;
    if (Cl.N[K] == 1)
      Tip = fmt::format("{} = {}", T.Text, formatQuantity(mean(Cl, K), T.Dim));
    else if (Cl.N[K] > 1)
      Tip = fmt::format("{} = {}, the mean of {} ({} to {})", T.Text,
                        formatQuantity(mean(Cl, K), T.Dim), points(Cl.N[K]),
                        formatQuantity(Cl.Lo[K], T.Dim),
                        formatQuantity(Cl.Hi[K], T.Dim));
    if (Cl.NonFinite[K])
      Tip +=
          fmt::format("{}{} with no finite {} (an unstable queue)",
                      Tip.empty() ? "" : "; ", points(Cl.NonFinite[K]), T.Text);
    if (!Cl.Fit)
      Tip += "; does not fit";
    else if (!Cl.Meets)
      Tip += "; fails a condition";
    return Tip;
  };
  auto regimeOf = [&](const Cell &Cl) {
    // The most frequent binding wall, the lower number on a tie; "does
    // not fit" only when no point fits.
    unsigned Best = 0;
    size_t Count = 0;
    for (const auto &[W, N] : Cl.Walls)
      if (W != 0 && N > Count) {
        Best = W;
        Count = N;
      }
    return Best ? std::string(wallShortName(Best))
                : std::string("does not fit");
  };
  std::string Binning =
      Out.Binned ? fmt::format(" The {} are binned: each {} is the mean over "
                               "its points; hover it for their range.",
                               points(R.Points), Line ? "point" : "cell")
                 : "";
  std::string Others;
  if (Q.Vars.size() > 2) {
    std::vector<std::string> Names;
    for (size_t K = 2; K < Q.Vars.size(); ++K)
      Names.push_back("`" + Q.Vars[K].Name + "`");
    Others = fmt::format(" Each cell gathers every value of {}: its colour "
                         "is their mean (hover it for their range), and it "
                         "is outlined when one of them is feasible.",
                         llvm::join(Names, ", "));
  }

  if (Pareto) {
    // Back from minimisation to the objectives' own signs.
    const query::Term &A = Q.Objectives[0], &B = Q.Objectives[1];
    llvm::sort(C.Front, [](const ParetoPoint &L, const ParetoPoint &R) {
      return L.Obj < R.Obj;
    });
    double MaxA = 0, MaxB = 0;
    for (const auto *Set : {&C.Front, &C.Sample})
      for (const ParetoPoint &P : *Set) {
        MaxA = std::max(MaxA, std::fabs(P.Obj[0]));
        MaxB = std::max(MaxB, std::fabs(P.Obj[1]));
      }
    AxisUnit UA, UB;
    std::string TA = termTitle(A, MaxA, UA), TB = termTitle(B, MaxB, UB);
    json::Array Points;
    auto point = [&](const ParetoPoint &P, bool OnFront) {
      double VA = Sign * P.Obj[0], VB = Sign * P.Obj[1];
      Points.push_back(json::Object{
          {"x", scaled(VA, UA)},
          {"y", scaled(VB, UB)},
          {"front", OnFront},
          {"tip", fmt::format("{}: {} = {}, {} = {}", pointText(Q, P.Vars),
                              A.Text, formatQuantity(VA, A.Dim), B.Text,
                              formatQuantity(VB, B.Dim))}});
    };
    for (const ParetoPoint &P : C.Sample)
      if (!llvm::any_of(C.Front, [&](const ParetoPoint &F) {
            return F.Obj == P.Obj && F.Vars == P.Vars;
          }))
        point(P, false);
    for (const ParetoPoint &P : C.Front)
      point(P, true);
    if (Points.empty())
      return Out;
    json::Value S = spec("pareto");
    setData(S, "points", std::move(Points));
    setSignal(S, "xTitle", TA);
    setSignal(S, "yTitle", TB);
    setSignal(S, "xFormat", numberFormat(MaxA / UA.Scale));
    setSignal(S, "yFormat", numberFormat(MaxB / UB.Scale));
    Out.Plots.push_back(makePlot(
        Q.Name + ".pareto", "Pareto front of " + Q.Name,
        fmt::format(
            "The {} of {} grid points that meet the conditions; the {} on "
            "the front (no other point is better in both {} and {}, each "
            "{}) are joined, the dominated ones faded{}. Hover a point for "
            "its variables.",
            C.Meeting, R.Points, C.Front.size(), A.Text, B.Text,
            Q.Direction < 0 ? "minimised" : "maximised",
            C.SampleStride > 1
                ? fmt::format(" (every {}th drawn)", C.SampleStride)
                : ""),
        std::move(S)));
    return Out;
  }

  std::string Conds;
  if (!Q.Conditions.empty()) {
    std::vector<std::string> Texts;
    for (const query::Term &T : Q.Conditions)
      if (!T.Implicit || T.Text != "queue_stable")
        Texts.push_back("`" + T.Text + "`");
    Conds = llvm::join(Texts, " and ");
  }

  if (Line) {
    for (size_t K = 0; K < NT; ++K) {
      Span Sp = spanOf(K, /*WholeCellsOnly=*/false);
      double Max = Sp.Max;
      AxisUnit U;
      std::string YTitle = termTitle(*Terms[K], Max, U);
      json::Array Rows;
      std::set<std::string> Statuses;
      size_t NoValue = 0, Unfit = 0;
      for (size_t B = 0; B < X.Bins; ++B) {
        const Cell &Cl = C.Cells[B];
        if (!Cl.Points)
          continue;
        // A point with no finite value (an unstable queue's latency) is
        // drawn at the top, off the scale; one that does not fit at its
        // value, as a cross.
        bool Has = Cl.N[K] > 0;
        if (!Has && !Cl.NonFinite[K])
          continue; // no valid point: nothing to draw
        const char *Status = !Has       ? "no finite value (off the scale)"
                             : !Cl.Fit  ? "does not fit"
                             : Cl.Meets ? "meets the conditions"
                                        : "fails a condition";
        NoValue += !Has;
        Unfit += Has && !Cl.Fit;
        Statuses.insert(Status);
        json::Value XV = X.Categorical ? json::Value(X.Labels[B])
                                       : json::Value(scaled(X.Centre[B], X.U));
        Rows.push_back(
            json::Object{{"x", std::move(XV)},
                         {"y", Has ? num(scaled(mean(Cl, K), U)) : nullptr},
                         {"status", Status},
                         {"tip", fmt::format("{} = {}: {}", Q.Vars[0].Name,
                                             X.Labels[B], valueTip(Cl, K))}});
      }
      if (Rows.empty())
        continue;
      json::Value S = spec("line");
      setData(S, "points", std::move(Rows));
      setCategories(S, "status", Statuses);
      setCategories(S, "shape", Statuses);
      if (X.Categorical) {
        // Categories are not a trend: dots, no line between them.
        scaleNamed(S, "x") = json::Object{
            {"name", "x"},
            {"type", "point"},
            {"range", "width"},
            {"padding", 0.5},
            {"domain", json::Object{{"data", "points"}, {"field", "x"}}}};
        removeMark(S, "line");
        setSignal(S, "xFormat", nullptr);
        // Dots compared by height start from zero, so that 2% does not
        // look like a collapse.
        scaleNamed(S, "y")["zero"] = true;
      } else {
        setSignal(S, "xFormat", numberFormat(X.Max / X.U.Scale));
        if (X.Log) {
          scaleNamed(S, "x")["type"] = "log";
          scaleNamed(S, "x")["nice"] = false;
          scaleNamed(S, "x")["padding"] = 12;
        }
        // Few values: a tick at each.
        if (X.Bins <= 12) {
          json::Array Ticks;
          for (size_t B = 0; B < X.Bins; ++B)
            Ticks.push_back(scaled(X.Centre[B], X.U));
          axisOf(S, "x")["values"] = std::move(Ticks);
        }
      }
      // Values over two decades or more: a log axis.
      if (Sp.decades(100)) {
        scaleNamed(S, "y")["type"] = "log";
        scaleNamed(S, "y")["zero"] = false;
      }
      setSignal(S, "xTitle", axisName(Q.Vars[0], X));
      setSignal(S, "yTitle", YTitle);
      setSignal(S, "yFormat", numberFormat(Max / U.Scale));
      Out.Plots.push_back(makePlot(
          fmt::format("{}.line.{}", Q.Name, Terms[K]->Text),
          fmt::format("{} over {} ({})", Terms[K]->Text, Q.Vars[0].Name,
                      Q.Name),
          fmt::format(
              "Sweep `{}`: {} at each of {}{}.{}{}{}", Q.Name, Terms[K]->Text,
              points(R.Points),
              Conds.empty() ? ""
                            : "; the colour says whether it is feasible (it "
                              "fits and " +
                                  Conds + " holds)",
              Unfit ? fmt::format(" {} do not fit (crosses, at the value "
                                  "`mlsc sweep` prints).",
                                  points(Unfit))
                    : "",
              NoValue ? fmt::format(" {} have no finite value (an unstable "
                                    "queue): marked at the top, off the "
                                    "scale.",
                                    points(NoValue))
                      : "",
              Binning),
          std::move(S)));
    }
    return Out;
  }

  // Two or more variables: the cells of the first two.
  auto axisData = [](const Axis &A) {
    json::Array Out;
    for (size_t B = 0; B < A.Bins; ++B)
      Out.push_back(json::Object{{"label", A.Labels[B]},
                                 {"order", static_cast<int64_t>(B)}});
    return Out;
  };
  // The outline of the feasible region: every side of a feasible cell
  // whose neighbour is not (or is off the grid). Band fractions: x 0 left,
  // 1 right; y 0 top, 1 bottom of the cell on screen, where a higher y bin
  // is drawn above.
  json::Array Edges;
  auto meets = [&](long XB, long YB) {
    if (XB < 0 || YB < 0 || XB >= long(X.Bins) || YB >= long(Y.Bins))
      return false;
    return C.Cells[YB * X.Bins + XB].Meets > 0;
  };
  for (long YB = 0; YB < long(Y.Bins); ++YB)
    for (long XB = 0; XB < long(X.Bins); ++XB) {
      if (!meets(XB, YB))
        continue;
      auto edge = [&](double Bx1, double By1, double Bx2, double By2) {
        Edges.push_back(json::Object{{"x", X.Labels[XB]},
                                     {"y", Y.Labels[YB]},
                                     {"bx1", Bx1},
                                     {"by1", By1},
                                     {"bx2", Bx2},
                                     {"by2", By2}});
      };
      if (!meets(XB - 1, YB))
        edge(0, 0, 0, 1);
      if (!meets(XB + 1, YB))
        edge(1, 0, 1, 1);
      if (!meets(XB, YB + 1))
        edge(0, 0, 1, 0);
      if (!meets(XB, YB - 1))
        edge(0, 1, 1, 1);
    }
  size_t MeetCells = 0, CellCount = 0;
  for (const Cell &Cl : C.Cells) {
    MeetCells += Cl.Meets > 0;
    CellCount += Cl.Points > 0;
  }
  std::string Outline = fmt::format(
      " The black outline surrounds the {} feasible cells (they fit{}){}.",
      MeetCells, Conds.empty() ? "" : " and " + Conds + " holds",
      MeetCells ? "" : ": none");
  auto cellTip = [&](size_t XB, size_t YB) {
    return fmt::format("{} = {}, {} = {}", Q.Vars[0].Name, X.Labels[XB],
                       Q.Vars[1].Name, Y.Labels[YB]);
  };
  auto shapeAxes = [&](json::Value &S) {
    setGridSize(S, X.Bins, Y.Bins);
    for (const auto &[Name, A] : {std::pair{"x", &X}, std::pair{"y", &Y}}) {
      json::Object &Ax = axisOf(S, Name);
      // Every label when they fit; short ones upright.
      Ax["labelOverlap"] = A->Bins > 24;
      size_t Longest = 0;
      for (const std::string &L : A->Labels)
        Longest = std::max(Longest, L.size());
      if (llvm::StringRef(Name) == "x" && Longest <= 5)
        Ax["labelAngle"] = 0, Ax["labelAlign"] = "center";
    }
  };
  bool Labelled = CellCount <= MaxLabelledCells;
  for (size_t K = 0; K < NT && K < MaxHeatMaps; ++K) {
    // A cell with a value that is not finite has no colour.
    Span Sp = spanOf(K, /*WholeCellsOnly=*/true);
    double Max = Sp.Max;
    AxisUnit U;
    std::string VTitle = termTitle(*Terms[K], Max, U);
    bool LogColour = Sp.decades(100);
    double Lo = INFINITY, Hi = -INFINITY;
    for (const Cell &Cl : C.Cells)
      if (Cl.N[K] && !Cl.NonFinite[K]) {
        double V = LogColour ? std::log(mean(Cl, K)) : mean(Cl, K);
        Lo = std::min(Lo, V);
        Hi = std::max(Hi, V);
      }
    json::Array Cells;
    for (size_t YB = 0; YB < Y.Bins; ++YB)
      for (size_t XB = 0; XB < X.Bins; ++XB) {
        const Cell &Cl = C.Cells[YB * X.Bins + XB];
        if (!Cl.Points)
          continue;
        // A cell with a point whose value is not finite has no colour: a
        // mean would hide the unstable point.
        bool Has = Cl.N[K] && !Cl.NonFinite[K];
        double M = mean(Cl, K);
        double Pos = LogColour ? std::log(M) : M;
        double Norm = Has && Hi > Lo ? (Pos - Lo) / (Hi - Lo) : 0.5;
        std::string Text;
        if (!Has)
          Text = Cl.NonFinite[K] ? "inf" : "";
        else if (Labelled)
          Text = fmt::format("{:.3g}", round6(M / U.Scale));
        if (Has && !Cl.Fit)
          Text = Labelled ? "x " + Text : "x";
        Cells.push_back(
            json::Object{{"x", X.Labels[XB]},
                         {"y", Y.Labels[YB]},
                         {"value", Has ? num(scaled(M, U)) : nullptr},
                         {"meets", Cl.Meets > 0},
                         {"fits", Cl.Fit > 0},
                         {"text", Text},
                         {"dark", Norm < 0.55},
                         {"tip", cellTip(XB, YB) + ": " + valueTip(Cl, K)}});
      }
    json::Value S = spec("heatmap");
    setData(S, "xs", axisData(X));
    setData(S, "ys", axisData(Y));
    setData(S, "cells", std::move(Cells));
    setData(S, "edges", Edges);
    if (LogColour)
      scaleNamed(S, "colour")["type"] = "log";
    shapeAxes(S);
    setSignal(S, "xTitle", axisName(Q.Vars[0], X));
    setSignal(S, "yTitle", axisName(Q.Vars[1], Y));
    setSignal(S, "valueTitle", VTitle);
    // The legend's ends: three digits, or SI prefixes for large values.
    setSignal(S, "valueFormat", Max / U.Scale >= 1e4 ? "~s" : ".3~g");
    Out.Plots.push_back(makePlot(
        fmt::format("{}.heatmap.{}", Q.Name, Terms[K]->Text),
        fmt::format("{} over {} and {} ({})", Terms[K]->Text, Q.Vars[0].Name,
                    Q.Vars[1].Name, Q.Name),
        fmt::format("Sweep `{}`, {}. The colour is {}{}; cells that are "
                    "not feasible are faded, and those that do not fit "
                    "marked x; a cell with a value that is not finite (an "
                    "unstable queue) is white, marked inf.{}{}{}",
                    Q.Name, points(R.Points), Terms[K]->Text,
                    LogColour ? " on a log scale (its values span two "
                                "decades or more)"
                              : "",
                    Outline, Others, Binning),
        std::move(S)));
  }
  // The regime map.
  json::Array Cells;
  std::map<std::string, size_t> Regimes;
  std::set<std::string> Walls;
  for (size_t YB = 0; YB < Y.Bins; ++YB)
    for (size_t XB = 0; XB < X.Bins; ++XB) {
      const Cell &Cl = C.Cells[YB * X.Bins + XB];
      if (!Cl.Points)
        continue;
      std::string Wall = regimeOf(Cl);
      ++Regimes[Wall];
      Walls.insert(Wall);
      Cells.push_back(
          json::Object{{"x", X.Labels[XB]},
                       {"y", Y.Labels[YB]},
                       {"wall", Wall},
                       {"meets", Cl.Meets > 0},
                       {"tip", fmt::format("{}: {}", cellTip(XB, YB), Wall)}});
    }
  std::vector<std::string> Counts;
  for (const auto &[Wall, N] : Regimes)
    Counts.push_back(fmt::format("{} {}", N, Wall));
  json::Value S = spec("regime");
  setData(S, "xs", axisData(X));
  setData(S, "ys", axisData(Y));
  setData(S, "cells", std::move(Cells));
  setData(S, "edges", std::move(Edges));
  setCategories(S, "colour", Walls);
  shapeAxes(S);
  setSignal(S, "xTitle", axisName(Q.Vars[0], X));
  setSignal(S, "yTitle", axisName(Q.Vars[1], Y));
  Out.Plots.push_back(makePlot(
      Q.Name + ".regime",
      fmt::format("Regime map of {}: the binding wall", Q.Name),
      fmt::format("Sweep `{}`: the wall that binds the main phase's step at "
                  "each point (cells: {}; a cell of several points shows "
                  "the wall most of them have).{}{}",
                  Q.Name, llvm::join(Counts, ", "), Outline, Others),
      std::move(S)));
  return Out;
}

//===----------------------------------------------------------------------===//
// Choosing and printing one
//===----------------------------------------------------------------------===//

const Plot *selectPlot(const std::vector<Plot> &Plots, const std::string &Name,
                       const std::string &What) {
  std::vector<std::string> Ids;
  for (const Plot &P : Plots)
    Ids.push_back(P.Id);
  if (Name.empty() && Plots.size() == 1)
    return &Plots.front();
  for (const Plot &P : Plots)
    if (P.Id == Name)
      return &P;
  if (Plots.empty()) {
    usage(DiagKind::UnknownTarget, fmt::format("{} has nothing to plot", What));
    return nullptr;
  }
  if (Name.empty())
    usage(DiagKind::MissingArgument,
          fmt::format("{} has {} plots; choose one with --plot: {}", What,
                      Plots.size(), llvm::join(Ids, ", ")));
  else
    usage(DiagKind::UnknownTarget,
          fmt::format("{} has no plot `{}`; it has {}", What, Name,
                      llvm::join(Ids, ", ")));
  return nullptr;
}

std::string specText(const Plot &P) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  OS << P.Spec;
  OS.flush();
  // LLVM prints a double with 17 digits (17.649999999999999); nlohmann's
  // serializer gives the shortest that reads back the same (17.65), as the
  // rest of mlsc's JSON does. Keys stay sorted.
  return nlohmann::json::parse(Out).dump();
}

} // namespace mlsc::driver
