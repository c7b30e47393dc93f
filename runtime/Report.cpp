//===- Report.cpp - Scorecards, explanations and dumps --------------------===//

#include "runtime/Report.h"
#include "runtime/Format.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

namespace mlsc {

using graph::Graph;
using graph::Op;
using json = nlohmann::ordered_json;

std::string location(llvm::SourceMgr &SM, llvm::SMRange R) {
  if (!R.isValid())
    return "";
  unsigned Buf = SM.FindBufferContainingLoc(R.Start);
  if (!Buf)
    return "";
  auto LC = SM.getLineAndColumn(R.Start, Buf);
  return fmt::format(
      "{}:{}:{}",
      llvm::sys::path::filename(
          SM.getMemoryBuffer(Buf)->getBufferIdentifier()).str(),
      LC.first, LC.second);
}

Verdict verdict(const graph::Condition &C, const Evaluator &E) {
  if (C.NodeId < 0)
    return Verdict::Unknown;
  return E.value(static_cast<uint32_t>(C.NodeId)) != 0 ? Verdict::Pass
                                                        : Verdict::Fail;
}

static const char *verdictWord(Verdict V) {
  return V == Verdict::Pass ? "PASS" : V == Verdict::Fail ? "FAIL" : "UNKNOWN";
}

json quantityJSON(double SI, const Dimension &D, bool IsBool) {
  json J;
  if (IsBool) {
    J["value"] = SI != 0;
    J["unit"] = "bool";
  } else {
    J["value"] = SI;
    J["unit"] = D.str();
  }
  J["display"] = formatQuantity(SI, D, IsBool);
  return J;
}

namespace {

/// Reads named values of an evaluated scenario graph.
struct View {
  const Evaluator &E;
  const Graph &G;
  explicit View(const Evaluator &E) : E(E), G(E.graph()) {}

  bool has(llvm::StringRef Name) const { return G.find(Name) >= 0; }
  /// The value of a named node; NaN when the graph has no such node, so a
  /// report that asks for a value its workload lacks prints `nan`, never
  /// reads out of bounds.
  double operator[](llvm::StringRef Name) const {
    int Id = G.find(Name);
    return Id < 0 ? std::nan("") : E.value(static_cast<uint32_t>(Id));
  }
  std::string show(llvm::StringRef Name) const {
    int Id = G.find(Name);
    if (Id < 0)
      return "n/a";
    const graph::Node &N = G.Nodes[Id];
    return formatQuantity((*this)[Name], N.Dim, N.IsBool);
  }
};

/// The Performance level: FAIL when an SLA condition fails or the queue in
/// front of the replicas is unstable, WARN when a condition cannot be
/// evaluated yet, else PASS. Text and JSON scorecards share it.
const char *performanceStatus(const View &V) {
  bool AnyFail = V.has("queue_stable") && V["queue_stable"] == 0;
  bool AnyUnknown = false;
  for (const graph::Condition &C : V.G.Conditions)
    if (!C.IsAssert) {
      AnyFail |= verdict(C, V.E) == Verdict::Fail;
      AnyUnknown |= verdict(C, V.E) == Verdict::Unknown;
    }
  return AnyFail ? "FAIL" : AnyUnknown ? "WARN" : "PASS";
}

/// Which wall binds a phase, and by how much: the largest of its compute,
/// memory and tensor-parallel communication times.
struct Bound {
  bool Compute;       ///< compute (wall 1) rather than memory (wall 2)
  bool Communication; ///< communication (wall 14) beats both
  double Margin;      ///< binding time / the runner-up
  const char *Wall;
  const char *RunnerUp;
};

Bound bound(const View &V, const std::string &Phase) {
  double C = V[Phase + ".compute_time"], M = V[Phase + ".memory_time"];
  double X = V.has(Phase + ".comm_time") ? V[Phase + ".comm_time"] : 0;
  struct Entry {
    double T;
    const char *Name, *Short;
  } E[] = {{C, "wall 1: compute", "compute"},
           {M, "wall 2: memory", "memory"},
           {X, "wall 14: communication", "communication"}};
  std::stable_sort(std::begin(E), std::end(E),
                   [](const Entry &A, const Entry &B) { return A.T > B.T; });
  Bound R;
  R.Compute = C >= M;
  R.Communication = X > C && X > M;
  R.Margin = E[1].T > 0 ? E[0].T / E[1].T : 0;
  R.Wall = E[0].Name;
  R.RunnerUp = E[1].Short;
  return R;
}

std::string boundText(const View &V, const std::string &Phase) {
  double C = V[Phase + ".compute_time"], M = V[Phase + ".memory_time"];
  bool IsCompute = C >= M;
  double Lo = std::min(C, M);
  std::string S = fmt::format(
      "{}-bound: intensity {} {} the ridge {}; {} time is {}x smaller",
      IsCompute ? "compute" : "memory", V.show(Phase + ".intensity"),
      IsCompute ? "above" : "below", V.show("ridge_point"),
      IsCompute ? "memory" : "compute",
      formatNumber(Lo > 0 ? std::max(C, M) / Lo : 0));
  if (V.has(Phase + ".comm_time") && V[Phase + ".comm_time"] > 0)
    S += "; TP all-reduces add " + V.show(Phase + ".comm_time");
  return S;
}

/// The comparison's operands, for `(6.211 ms vs 40.00 ms)`.
std::string operands(const graph::Condition &C, const Evaluator &E) {
  if (C.NodeId < 0)
    return "";
  const Graph &G = E.graph();
  const graph::Node &N = G.Nodes[C.NodeId];
  if (N.Kind < Op::Lt || N.Kind > Op::Ne)
    return "";
  uint32_t L = G.inputOf(C.NodeId, 0), R = G.inputOf(C.NodeId, 1);
  return fmt::format("{} vs {}",
                     formatQuantity(E.value(L), G.Nodes[L].Dim,
                                    G.Nodes[L].IsBool),
                     formatQuantity(E.value(R), G.Nodes[R].Dim,
                                    G.Nodes[R].IsBool));
}

void row(llvm::raw_ostream &OS, llvm::StringRef Label, llvm::StringRef Value,
         llvm::StringRef Note = "") {
  OS << "  " << Label;
  OS.indent(Label.size() < 20 ? 20 - Label.size() : 1);
  OS << Value;
  if (!Note.empty())
    OS << "   " << Note;
  OS << "\n";
}

} // namespace

namespace {

/// The levels of a CNN or encoder scenario: batches of samples per device.
bool printSampleLevels(const View &V, llvm::raw_ostream &OS) {
  bool Feasible = V["feasible"] != 0;
  OS << "\nFeasibility  " << (Feasible ? "PASS" : "FAIL") << "\n";
  row(OS, "memory per device",
      fmt::format("{} of weights {} {}", V.show("memory_per_device"),
                  Feasible ? "in" : "exceed", V.show("device_memory")),
      "[wall 2: memory capacity]");
  OS << "\n";
  if (!Feasible) {
    OS << "Performance  not evaluated: the scenario does not fit "
          "(feasibility failed)\n";
    return false;
  }
  OS << "Performance  " << performanceStatus(V) << "\n";
  row(OS, "batch time", V.show("batch_time"), boundText(V, "batch"));
  row(OS, "throughput", V.show("sample_throughput"),
      "per device; " + V.show("system_sample_throughput") + " in all");
  Bound D = bound(V, "batch");
  row(OS, "binding wall",
      fmt::format("{} (batch of {}), {}x ahead of {}", D.Wall,
                  formatNumber(V["batch"]), formatNumber(D.Margin),
                  D.RunnerUp));
  OS << "\nMacro        (power at nameplate; cost and carbon come with walls "
        "17-18)\n";
  row(OS, "power", V.show("power"),
      "devices x TDP + node overhead: an upper bound [wall 18]");
  return true;
}

} // namespace

void printScorecard(const Evaluator &E, llvm::SourceMgr &SM,
                    llvm::raw_ostream &OS) {
  View V(E);
  const Graph &G = E.graph();
  OS << "scenario " << G.Scenario << "\n";
  bool Feasible = true;
  if (G.Training) {
    OS << "  training workloads are not evaluated yet: the training walls "
          "(communication, checkpointing) come in later work\n";
  } else if (V.has("sample_throughput")) {
    Feasible = printSampleLevels(V, OS);
  } else if (V.has("feasible")) {
    Feasible = V["feasible"] != 0;
    OS << "\nFeasibility  " << (Feasible ? "PASS" : "FAIL") << "\n";
    double Mem = V["memory_per_device"], Cap = V["device_memory"];
    std::string MemText =
        V["memory_fits"] != 0
            ? fmt::format("{} of {} ({}%)", V.show("memory_per_device"),
                          V.show("device_memory"),
                          formatNumber(100 * Mem / Cap))
            : fmt::format("{} exceeds {} by {}", V.show("memory_per_device"),
                          V.show("device_memory"),
                          formatQuantity(Mem - Cap,
                                         Dimension::base(BaseDim::Data)));
    row(OS, "memory per device", MemText, "[wall 2: memory capacity]");
    if (V.has("max_concurrent_sequences"))
      row(OS, "concurrent seqs",
          fmt::format("up to {} per replica in a paged KV cache; batch {}{}",
                      formatNumber(V["max_concurrent_sequences"]),
                      formatNumber(V["batch"]),
                      V["batch_fits"] != 0 ? "" : " does not fit"),
          "[wall 5: batching]");
    row(OS, "parallelism",
        fmt::format("tp {} x pp {} on {} device{}", formatNumber(V["tp"]),
                    formatNumber(V["pp"]), formatNumber(V["devices"]),
                    V["devices"] == 1 ? "" : "s"),
        V["parallelism_fits"] != 0 ? "" : "FAIL: more shards than devices");
    OS << "\n";
    if (!Feasible) {
      OS << "Performance  not evaluated: the scenario does not fit "
            "(feasibility failed)\n";
    } else {
      bool Unstable = V.has("queue_stable") && V["queue_stable"] == 0;
      OS << "Performance  " << performanceStatus(V) << "\n";
      row(OS, "prefill time", V.show("prefill_time"),
          boundText(V, "prefill"));
      row(OS, "decode step time", V.show("decode_step_time"),
          boundText(V, "decode"));
      if (V.has("speculative.time_per_token"))
        row(OS, "TPOT",
            V.show("speculative.time_per_token"),
            fmt::format("speculative decoding: {} tokens per target step, "
                        "draft step {}",
                        formatNumber(V["speculative.tokens_per_step"]),
                        V.show("draft.decode_step_time")));
      row(OS, "throughput", V.show("throughput"), "per replica");
      if (V.has("max_batch_under_tpot"))
        row(OS, "best batch",
            fmt::format("{} (the largest whose decode step meets the TPOT "
                        "limit; communication not counted)",
                        formatNumber(V["max_batch_under_tpot"])),
            "[wall 5: batching]");
      if (!V.has("utilisation")) {
        row(OS, "queueing", "not modelled: the workload has no `arrival` rate",
            "[wall 7: tail latency]");
      } else {
        std::string Slots = fmt::format(
            "{} slots ({} replica{} x batch {})", formatNumber(V["servers"]),
            formatNumber(V["replicas"]), V["replicas"] == 1 ? "" : "s",
            formatNumber(V["servers"] / V["replicas"]));
        row(OS, "queue",
            Unstable ? fmt::format("UNSTABLE: utilisation {}% of {} (>= 100%); "
                                   "waits grow without bound",
                                   formatNumber(100 * V["utilisation"]), Slots)
                     : fmt::format("utilisation {}% of {}",
                                   formatNumber(100 * V["utilisation"]),
                                   Slots),
            "[wall 7: tail latency]");
        if (!Unstable) {
          row(OS, "TTFT p50 / p99",
              V.show("ttft.p50") + " / " + V.show("ttft.p99"),
              "p99.9 " + V.show("ttft.p999"));
          row(OS, "latency p50 / p99",
              V.show("latency.p50") + " / " + V.show("latency.p99"),
              "p99.9 " + V.show("latency.p999"));
        }
      }
      Bound D = bound(V, "decode");
      std::string Crossover;
      if (!D.Compute && !D.Communication &&
          V.has("decode.crossover_batch")) {
        double BStar = V["decode.crossover_batch"];
        double Batch = V["batch"];
        Crossover =
            std::isfinite(BStar)
                ? fmt::format("; compute would bind at {}x the batch "
                              "(batch {})",
                              formatNumber(BStar / Batch), formatNumber(BStar))
                : "; compute never binds: KV reads grow faster than FLOPs";
      }
      row(OS, "binding wall",
          fmt::format("{} (decode step), {}x ahead of {}{}", D.Wall,
                      formatNumber(D.Margin), D.RunnerUp, Crossover));
    }
    if (Feasible && V.has("power")) {
      OS << "\nMacro        (energy at nameplate power; cost and carbon come "
            "with walls 17-18)\n";
      row(OS, "power", V.show("power"),
          "devices x TDP + node overhead: an upper bound [wall 18]");
      row(OS, "energy per token", V.show("energy_per_token"),
          "at " + V.show("system_throughput") + " over all replicas");
    } else {
      OS << "\nMacro        not evaluated: cost and carbon come with walls "
            "17-18\n";
    }
  }
  if (!G.Conditions.empty()) {
    OS << "\nConditions\n";
    for (const graph::Condition &C : G.Conditions) {
      Verdict Vd = Feasible ? verdict(C, E) : Verdict::Unknown;
      std::string Detail = C.NodeId < 0
                               ? "`" + C.Missing + "` is not computed yet"
                           : !Feasible ? "not evaluated: infeasible"
                                       : operands(C, E);
      OS << "  " << (C.IsAssert ? "assert " : "sla    ") << C.Text;
      OS.indent(C.Text.size() < 30 ? 30 - C.Text.size() : 1);
      OS << verdictWord(Vd);
      if (!Detail.empty())
        OS << "  (" << Detail << ")";
      OS << "  " << location(SM, C.Range) << "\n";
    }
  }
  if (!G.Unavailable.empty() && !G.Training)
    OS << "\nnot computed yet: " << llvm::join(G.Unavailable, ", ") << "\n";
}

json scorecardJSON(const Evaluator &E, llvm::SourceMgr &SM) {
  View V(E);
  const Graph &G = E.graph();
  json J;
  J["scenario"] = G.Scenario;
  J["mode"] = G.Training ? "training" : "inference";
  bool Feasible = !V.has("feasible") || V["feasible"] != 0;
  if (V.has("feasible")) {
    json F;
    F["status"] = Feasible ? "PASS" : "FAIL";
    F["memory_per_device"] =
        quantityJSON(V["memory_per_device"], G.Nodes[G.find("memory_per_device")].Dim);
    F["device_memory"] = quantityJSON(V["device_memory"],
                                      G.Nodes[G.find("device_memory")].Dim);
    F["memory_fits"] = V["memory_fits"] != 0;
    if (V.has("parallelism_fits"))
      F["parallelism_fits"] = V["parallelism_fits"] != 0;
    if (V.has("batch_fits")) {
      F["max_concurrent_sequences"] = V["max_concurrent_sequences"];
      F["batch_fits"] = V["batch_fits"] != 0;
    }
    J["feasibility"] = F;
  }
  json P;
  json Metrics = json::object();
  if (Feasible)
    for (const std::string &M : G.Metrics) {
      const graph::Node &N = G.Nodes[G.find(M)];
      Metrics[M] = quantityJSON(V[M], N.Dim, N.IsBool);
    }
  std::string Phase = V.has("decode_step_time") ? "decode" : "batch";
  if (V.has(Phase + ".compute_time") && Feasible) {
    P["status"] = performanceStatus(V);
    P["metrics"] = Metrics;
    Bound D = bound(V, Phase);
    json W;
    W["wall"] = D.Communication ? "communication"
                : D.Compute     ? "compute"
                                : "memory";
    W["number"] = D.Communication ? 14 : D.Compute ? 1 : 2;
    W["phase"] = Phase;
    W["margin"] = D.Margin;
    if (!D.Compute && !D.Communication && V.has("decode.crossover_batch")) {
      double BStar = V["decode.crossover_batch"];
      W["crossover_batch"] = std::isfinite(BStar) ? json(BStar) : json(nullptr);
    }
    P["binding_wall"] = W;
  } else {
    P["status"] = "NOT_EVALUATED";
    P["reason"] = G.Training ? "training walls are not implemented yet"
                             : "infeasible";
  }
  J["performance"] = P;
  json Conds = json::array();
  for (const graph::Condition &C : G.Conditions) {
    json CJ;
    CJ["kind"] = C.IsAssert ? "assert" : "sla";
    CJ["text"] = C.Text;
    CJ["location"] = location(SM, C.Range);
    Verdict Vd = Feasible ? verdict(C, E) : Verdict::Unknown;
    CJ["verdict"] = Vd == Verdict::Pass   ? "pass"
                    : Vd == Verdict::Fail ? "fail"
                                          : "unknown";
    if (!C.Message.empty())
      CJ["message"] = C.Message;
    if (C.NodeId < 0)
      CJ["missing_metric"] = C.Missing;
    Conds.push_back(CJ);
  }
  J["conditions"] = Conds;
  J["unavailable_metrics"] = G.Unavailable;
  return J;
}

// ---------------------------------------------------------------- explain

namespace {

/// The `kind` of a source record (`datasheet`, `estimate`, ...), or "".
std::string sourceKind(const ir::Entity *Source) {
  if (!Source)
    return "";
  const ir::Field *K = Source->field("kind");
  return K && K->Folded ? K->Folded->Text : "";
}

std::string originText(const graph::LeafOrigin &O, llvm::SourceMgr &SM) {
  std::string S;
  if (O.Assumed)
    S = "default " + O.Spelling;
  else
    S = "literal " + O.Spelling;
  std::string Loc = location(SM, O.Range);
  if (!Loc.empty())
    S += " at " + Loc;
  if (O.Source)
    S += " from " + O.Source->Name;
  for (const std::string &N : O.Notes)
    S += " (" + N + ")";
  if (sourceKind(O.Source) == "estimate")
    S += " [estimate]";
  if (O.Calibrated)
    S += " [calibrated factor]";
  if (O.Assumed)
    S += " [assumed]";
  return S;
}

std::string label(const Graph &G, uint32_t Id) {
  const graph::Node &N = G.Nodes[Id];
  if (!N.Name.empty())
    return N.Name;
  if (N.Kind == Op::Apply)
    return N.F->Name;
  if (N.Kind == Op::Leaf)
    return "constant";
  return std::string("(") + graph::opSpelling(N.Kind) + ")";
}

class Explainer {
public:
  Explainer(const Evaluator &E, llvm::SourceMgr &SM, llvm::raw_ostream &OS)
      : E(E), G(E.graph()), SM(SM), OS(OS) {}

  void node(uint32_t Id, const std::string &Prefix, bool Last, bool Root) {
    const graph::Node &N = G.Nodes[Id];
    std::string Head = Root ? "" : Prefix + (Last ? "└─ " : "├─ ");
    OS << Head << label(G, Id) << " = "
       << formatQuantity(E.value(Id), N.Dim, N.IsBool);
    if (N.Kind == Op::Leaf) {
      OS << "   " << originText(G.Origins[N.Origin], SM) << "\n";
      return;
    }
    bool Repeat = !N.Name.empty() && !Shown.insert(Id).second;
    if (N.Kind == Op::Apply) {
      const WallInfo *W = wallInfo(N.F->W);
      OS << "   [wall " << W->Number << ": " << W->Name << "] "
         << N.F->Equation;
      if (!Repeat)
        OS << "  (" << N.F->Citation << ")";
    }
    if (Repeat) {
      OS << "   (derivation shown above)\n";
      return;
    }
    OS << "\n";
    std::string Child = Root ? "" : Prefix + (Last ? "   " : "│  ");
    for (uint32_t I = 0; I < N.NumInputs; ++I)
      node(G.inputOf(Id, I), Child, I + 1 == N.NumInputs, false);
  }

  json nodeJSON(uint32_t Id) {
    const graph::Node &N = G.Nodes[Id];
    json J;
    J["name"] = label(G, Id);
    J["value"] = quantityJSON(E.value(Id), N.Dim, N.IsBool);
    if (N.Kind == Op::Leaf) {
      const graph::LeafOrigin &O = G.Origins[N.Origin];
      json Or;
      Or["written"] = O.Spelling;
      Or["location"] = O.Range.isValid() ? json(location(SM, O.Range))
                                         : json(nullptr);
      Or["source"] = O.Source ? json(O.Source->Name) : json(nullptr);
      Or["source_kind"] =
          O.Source ? json(sourceKind(O.Source)) : json(nullptr);
      Or["estimate"] = sourceKind(O.Source) == "estimate";
      Or["notes"] = O.Notes;
      Or["assumed"] = O.Assumed;
      Or["calibrated"] = O.Calibrated;
      J["origin"] = Or;
      return J;
    }
    if (!N.Name.empty() && !Shown.insert(Id).second) {
      J["see"] = N.Name;
      return J;
    }
    if (N.Kind == Op::Apply) {
      json F;
      F["name"] = N.F->Name;
      F["wall"] = wallInfo(N.F->W)->Number;
      F["equation"] = N.F->Equation;
      F["citation"] = N.F->Citation;
      J["formula"] = F;
    } else {
      J["op"] = graph::opSpelling(N.Kind);
    }
    json In = json::array();
    for (uint32_t I = 0; I < N.NumInputs; ++I)
      In.push_back(nodeJSON(G.inputOf(Id, I)));
    J["inputs"] = In;
    return J;
  }

private:
  const Evaluator &E;
  const Graph &G;
  llvm::SourceMgr &SM;
  llvm::raw_ostream &OS;
  std::set<uint32_t> Shown;
};

} // namespace

void printExplain(const Evaluator &E, uint32_t Node, llvm::SourceMgr &SM,
                  llvm::raw_ostream &OS) {
  OS << E.graph().Scenario << ".";
  Explainer(E, SM, OS).node(Node, "", true, true);
}

json explainJSON(const Evaluator &E, uint32_t Node, llvm::SourceMgr &SM) {
  llvm::raw_null_ostream Null;
  json J;
  J["scenario"] = E.graph().Scenario;
  J["tree"] = Explainer(E, SM, Null).nodeJSON(Node);
  return J;
}

// ----------------------------------------------------------- leaves

namespace {

/// The leaves a node depends on, each once, in first-reached order.
std::vector<uint32_t> leavesOf(const Graph &G, uint32_t Root) {
  std::vector<uint32_t> Leaves, Stack{Root};
  std::vector<bool> Seen(G.Nodes.size(), false);
  while (!Stack.empty()) {
    uint32_t Id = Stack.back();
    Stack.pop_back();
    if (Seen[Id])
      continue;
    Seen[Id] = true;
    const graph::Node &N = G.Nodes[Id];
    if (N.Kind == Op::Leaf) {
      Leaves.push_back(Id);
      continue;
    }
    for (uint32_t I = N.NumInputs; I-- > 0;)
      Stack.push_back(G.inputOf(Id, I));
  }
  return Leaves;
}

enum class LeafClass { Imported, Main, Assumed, Constant };

LeafClass classify(const graph::LeafOrigin &O, llvm::SourceMgr &SM,
                   unsigned MainBuffer) {
  if (O.Assumed)
    return LeafClass::Assumed;
  if (!O.Range.isValid())
    return LeafClass::Constant;
  return SM.FindBufferContainingLoc(O.Range.Start) == MainBuffer
             ? LeafClass::Main
             : LeafClass::Imported;
}

} // namespace

void printLeaves(const Evaluator &E, uint32_t Node, llvm::SourceMgr &SM,
                 unsigned MainBuffer, llvm::raw_ostream &OS) {
  const Graph &G = E.graph();
  std::vector<uint32_t> Leaves = leavesOf(G, Node);
  static const char *const Headings[] = {
      "from imported modules (registries)", "from the scenario file",
      "assumed defaults", "formula constants"};
  unsigned Count[4] = {0, 0, 0, 0}, Estimates = 0, Calibrated = 0;
  for (uint32_t Id : Leaves) {
    const graph::LeafOrigin &O = G.Origins[G.Nodes[Id].Origin];
    ++Count[static_cast<unsigned>(classify(O, SM, MainBuffer))];
    Estimates += sourceKind(O.Source) == "estimate";
    Calibrated += O.Calibrated;
  }
  llvm::StringRef File = llvm::sys::path::filename(
      SM.getMemoryBuffer(MainBuffer)->getBufferIdentifier());
  OS << G.Scenario << "." << label(G, Node) << " = "
     << formatQuantity(E.value(Node), G.Nodes[Node].Dim, G.Nodes[Node].IsBool)
     << " depends on " << Count[0] << " value" << (Count[0] == 1 ? "" : "s")
     << " from imported modules, " << Count[1] << " from " << File << ", "
     << Count[2] << " assumed default" << (Count[2] == 1 ? "" : "s")
     << " and " << Count[3] << " formula constant"
     << (Count[3] == 1 ? "" : "s") << "; " << Estimates << " estimate"
     << (Estimates == 1 ? "" : "s") << ", " << Calibrated
     << " calibrated factor" << (Calibrated == 1 ? "" : "s") << "\n";
  for (unsigned C = 0; C < 4; ++C) {
    if (!Count[C])
      continue;
    OS << "\n" << Headings[C] << ":\n";
    for (uint32_t Id : Leaves) {
      const graph::LeafOrigin &O = G.Origins[G.Nodes[Id].Origin];
      if (static_cast<unsigned>(classify(O, SM, MainBuffer)) != C)
        continue;
      OS << "  " << label(G, Id) << " = "
         << formatQuantity(E.value(Id), G.Nodes[Id].Dim, G.Nodes[Id].IsBool)
         << "   " << originText(O, SM) << "\n";
    }
  }
}

json leavesJSON(const Evaluator &E, uint32_t Node, llvm::SourceMgr &SM,
                unsigned MainBuffer) {
  const Graph &G = E.graph();
  static const char *const Classes[] = {"imported", "main", "assumed",
                                        "constant"};
  json A = json::array();
  for (uint32_t Id : leavesOf(G, Node)) {
    const graph::LeafOrigin &O = G.Origins[G.Nodes[Id].Origin];
    json J;
    J["name"] = label(G, Id);
    J["value"] = quantityJSON(E.value(Id), G.Nodes[Id].Dim, G.Nodes[Id].IsBool);
    J["class"] = Classes[static_cast<unsigned>(classify(O, SM, MainBuffer))];
    J["written"] = O.Spelling;
    J["location"] = O.Range.isValid() ? json(location(SM, O.Range))
                                      : json(nullptr);
    J["source"] = O.Source ? json(O.Source->Name) : json(nullptr);
    J["source_kind"] = O.Source ? json(sourceKind(O.Source)) : json(nullptr);
    J["estimate"] = sourceKind(O.Source) == "estimate";
    J["calibrated"] = O.Calibrated;
    J["assumed"] = O.Assumed;
    A.push_back(J);
  }
  json R;
  R["scenario"] = G.Scenario;
  R["value"] = label(G, Node);
  R["leaves"] = A;
  return R;
}

// ------------------------------------------------------------ graph dump

void printGraph(const Graph &G, llvm::SourceMgr &SM, llvm::raw_ostream &OS) {
  OS << "graph " << G.Scenario << (G.Training ? " (training)" : "") << "\n";
  for (uint32_t I = 0; I < G.Nodes.size(); ++I) {
    const graph::Node &N = G.Nodes[I];
    OS << "  %" << I << " = ";
    if (N.Kind == Op::Leaf) {
      OS << "leaf " << formatQuantity(G.LeafValues[I], N.Dim, N.IsBool)
         << "   " << originText(G.Origins[N.Origin], SM);
    } else {
      OS << (N.Kind == Op::Apply ? N.F->Name : graph::opSpelling(N.Kind))
         << "(";
      for (uint32_t K = 0; K < N.NumInputs; ++K)
        OS << (K ? ", " : "") << "%" << G.inputOf(I, K);
      OS << ") : " << (N.IsBool ? std::string("bool") : "[" + N.Dim.str() + "]");
      if (N.Kind == Op::Apply)
        OS << "   [wall " << wallInfo(N.F->W)->Number << "] "
           << N.F->Equation;
    }
    if (!N.Name.empty())
      OS << "   -> " << N.Name;
    OS << "\n";
  }
  for (const std::string &M : G.Metrics)
    OS << "  metric " << M << " = %" << G.find(M) << "\n";
  for (const graph::Condition &C : G.Conditions) {
    OS << "  " << (C.IsAssert ? "assert " : "sla ") << C.Text << " = ";
    if (C.NodeId >= 0)
      OS << "%" << C.NodeId;
    else
      OS << "unknown (`" << C.Missing << "` not computed yet)";
    OS << "\n";
  }
}

// ----------------------------------------------------------------- walls

void printWalls(llvm::raw_ostream &OS) {
  for (const WallInfo &W : allWalls()) {
    OS << llvm::format_decimal(W.Number, 2) << "  " << W.Name;
    OS.indent(std::max<int>(1, 21 - static_cast<int>(strlen(W.Name))));
    OS << W.Domain;
    OS.indent(std::max<int>(1, 11 - static_cast<int>(strlen(W.Domain))));
    OS << wallStatusName(W.Status);
    OS.indent(13 - strlen(wallStatusName(W.Status)));
    OS << W.Equation << "\n      ";
    if (strlen(W.Pass))
      OS << W.Pass << "; ";
    OS << W.Citation << "\n";
  }
}

json wallsJSON() {
  json A = json::array();
  for (const WallInfo &W : allWalls()) {
    json J;
    J["number"] = W.Number;
    J["name"] = W.Name;
    J["domain"] = W.Domain;
    J["equation"] = W.Equation;
    J["citation"] = W.Citation;
    J["pass"] = W.Pass;
    J["status"] = wallStatusName(W.Status);
    J["implemented"] = W.Status == WallStatus::Implemented ||
                       W.Status == WallStatus::Partial;
    A.push_back(J);
  }
  return A;
}

} // namespace mlsc
