//===- Report.cpp - Explanations, leaves, graph dumps and the wall list ---===//

#include "runtime/Report.h"
#include "runtime/Format.h"
#include "runtime/walls/Formulas.h"

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

// ---------------------------------------------------------------- explain

namespace {

std::string originText(const graph::LeafOrigin &O, llvm::SourceMgr &SM) {
  std::string S;
  if (O.Assumed)
    S = "default " + O.Spelling;
  else
    S = "literal " + O.Spelling;
  std::string Loc = location(SM, O.Range);
  if (!Loc.empty())
    S += " at " + Loc;
  if (!O.Source.empty())
    S += " from " + O.Source;
  for (const std::string &N : O.Notes)
    S += " (" + N + ")";
  if (O.SourceKind == "estimate")
    S += " [estimate]";
  if (O.Calibrated)
    S += " [calibrated factor]";
  if (O.Assumed)
    S += " [assumed]";
  return S;
}

std::string label(const Graph &G, graph::NodeId Id) {
  const graph::Node &N = G.node(Id);
  if (!N.Name.empty())
    return N.Name;
  if (N.Kind == Op::Apply)
    return formula(N).Name;
  if (N.Kind == Op::Leaf)
    return "constant";
  return std::string("(") + graph::opSpelling(N.Kind) + ")";
}

class Explainer {
public:
  Explainer(const Evaluator &E, llvm::SourceMgr &SM, llvm::raw_ostream &OS)
      : E(E), G(E.graph()), SM(SM), OS(OS) {}

  void node(graph::NodeId Id, const std::string &Prefix, bool Last, bool Root) {
    const graph::Node &N = G.node(Id);
    std::string Head = Root ? "" : Prefix + (Last ? "└─ " : "├─ ");
    OS << Head << label(G, Id) << " = "
       << formatQuantity(E.value(Id), N.Dim, N.IsBool);
    if (N.Kind == Op::Leaf) {
      OS << "   " << originText(G.Origins[N.Origin], SM) << "\n";
      return;
    }
    bool Repeat = !N.Name.empty() && !Shown.insert(Id).second;
    if (N.Kind == Op::Apply) {
      const WallInfo *W = wallInfo(formula(N).W);
      OS << "   [wall " << W->Number << ": " << W->Name << "] "
         << formula(N).Equation;
      if (!Repeat)
        OS << "  (" << formula(N).Citation << ")";
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

  json nodeJSON(graph::NodeId Id) {
    const graph::Node &N = G.node(Id);
    json J;
    J["name"] = label(G, Id);
    J["value"] = quantityJSON(E.value(Id), N.Dim, N.IsBool);
    if (N.Kind == Op::Leaf) {
      const graph::LeafOrigin &O = G.Origins[N.Origin];
      json Or;
      Or["written"] = O.Spelling;
      Or["location"] =
          O.Range.isValid() ? json(location(SM, O.Range)) : json(nullptr);
      Or["source"] = !O.Source.empty() ? json(O.Source) : json(nullptr);
      Or["source_kind"] =
          !O.Source.empty() ? json(O.SourceKind) : json(nullptr);
      Or["estimate"] = O.SourceKind == "estimate";
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
      F["name"] = formula(N).Name;
      F["wall"] = wallInfo(formula(N).W)->Number;
      F["equation"] = formula(N).Equation;
      F["citation"] = formula(N).Citation;
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
  std::set<graph::NodeId> Shown;
};

} // namespace

void printExplain(const Evaluator &E, graph::NodeId Node, llvm::SourceMgr &SM,
                  llvm::raw_ostream &OS) {
  OS << E.graph().Scenario << ".";
  Explainer(E, SM, OS).node(Node, "", true, true);
}

json explainJSON(const Evaluator &E, graph::NodeId Node, llvm::SourceMgr &SM) {
  llvm::raw_null_ostream Null;
  json J;
  J["scenario"] = E.graph().Scenario;
  J["tree"] = Explainer(E, SM, Null).nodeJSON(Node);
  return J;
}

// ----------------------------------------------------------- leaves

namespace {

/// The leaves a node depends on, each once, in first-reached order.
std::vector<graph::NodeId> leavesOf(const Graph &G, graph::NodeId Root) {
  std::vector<graph::NodeId> Leaves, Stack{Root};
  std::vector<bool> Seen(G.Nodes.size(), false);
  while (!Stack.empty()) {
    graph::NodeId Id = Stack.back();
    Stack.pop_back();
    if (Seen[Id.index()])
      continue;
    Seen[Id.index()] = true;
    const graph::Node &N = G.node(Id);
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

void printLeaves(const Evaluator &E, graph::NodeId Node, llvm::SourceMgr &SM,
                 unsigned MainBuffer, llvm::raw_ostream &OS) {
  const Graph &G = E.graph();
  std::vector<graph::NodeId> Leaves = leavesOf(G, Node);
  static const char *const Headings[] = {
      "from imported modules (registries)", "from the scenario file",
      "assumed defaults", "formula constants"};
  unsigned Count[4] = {0, 0, 0, 0}, Estimates = 0, Calibrated = 0;
  for (graph::NodeId Id : Leaves) {
    const graph::LeafOrigin &O = G.Origins[G.node(Id).Origin];
    ++Count[static_cast<unsigned>(classify(O, SM, MainBuffer))];
    Estimates += O.SourceKind == "estimate";
    Calibrated += O.Calibrated;
  }
  llvm::StringRef File = llvm::sys::path::filename(
      SM.getMemoryBuffer(MainBuffer)->getBufferIdentifier());
  OS << G.Scenario << "." << label(G, Node) << " = "
     << formatQuantity(E.value(Node), G.node(Node).Dim, G.node(Node).IsBool)
     << " depends on " << Count[0] << " value" << (Count[0] == 1 ? "" : "s")
     << " from imported modules, " << Count[1] << " from " << File << ", "
     << Count[2] << " assumed default" << (Count[2] == 1 ? "" : "s") << " and "
     << Count[3] << " formula constant" << (Count[3] == 1 ? "" : "s") << "; "
     << Estimates << " estimate" << (Estimates == 1 ? "" : "s") << ", "
     << Calibrated << " calibrated factor" << (Calibrated == 1 ? "" : "s")
     << "\n";
  for (unsigned C = 0; C < 4; ++C) {
    if (!Count[C])
      continue;
    OS << "\n" << Headings[C] << ":\n";
    for (graph::NodeId Id : Leaves) {
      const graph::LeafOrigin &O = G.Origins[G.node(Id).Origin];
      if (static_cast<unsigned>(classify(O, SM, MainBuffer)) != C)
        continue;
      OS << "  " << label(G, Id) << " = "
         << formatQuantity(E.value(Id), G.node(Id).Dim, G.node(Id).IsBool)
         << "   " << originText(O, SM) << "\n";
    }
  }
}

json leavesJSON(const Evaluator &E, graph::NodeId Node, llvm::SourceMgr &SM,
                unsigned MainBuffer) {
  const Graph &G = E.graph();
  static const char *const Classes[] = {"imported", "main", "assumed",
                                        "constant"};
  json A = json::array();
  for (graph::NodeId Id : leavesOf(G, Node)) {
    const graph::LeafOrigin &O = G.Origins[G.node(Id).Origin];
    json J;
    J["name"] = label(G, Id);
    J["value"] = quantityJSON(E.value(Id), G.node(Id).Dim, G.node(Id).IsBool);
    J["class"] = Classes[static_cast<unsigned>(classify(O, SM, MainBuffer))];
    J["written"] = O.Spelling;
    J["location"] =
        O.Range.isValid() ? json(location(SM, O.Range)) : json(nullptr);
    J["source"] = !O.Source.empty() ? json(O.Source) : json(nullptr);
    J["source_kind"] = !O.Source.empty() ? json(O.SourceKind) : json(nullptr);
    J["estimate"] = O.SourceKind == "estimate";
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
      OS << "leaf " << formatQuantity(G.LeafValues[I], N.Dim, N.IsBool) << "   "
         << originText(G.Origins[N.Origin], SM);
    } else {
      OS << (N.Kind == Op::Apply ? formula(N).Name : graph::opSpelling(N.Kind))
         << "(";
      for (uint32_t K = 0; K < N.NumInputs; ++K)
        OS << (K ? ", " : "") << "%" << G.inputOf(graph::NodeId(I), K).index();
      OS << ") : "
         << (N.IsBool ? std::string("bool") : "[" + N.Dim.str() + "]");
      if (N.Kind == Op::Apply)
        OS << "   [wall " << wallInfo(formula(N).W)->Number << "] "
           << formula(N).Equation;
    }
    if (!N.Name.empty())
      OS << "   -> " << N.Name;
    OS << "\n";
  }
  for (MetricId M : G.Metrics)
    OS << "  metric " << metricInfo(M).Name << " = %" << G.get(M).index()
       << "\n";
  for (const graph::Condition &C : G.Conditions) {
    OS << "  " << (C.IsAssert ? "assert " : "sla ") << C.Text << " = ";
    if (C.At)
      OS << "%" << C.At->index();
    else
      OS << "unknown (`" << C.Missing << "` not computed yet)";
    OS << "\n";
  }
}

// ----------------------------------------------------------------- walls

namespace {

/// Where a wall lives: its formula table(s) in the library, or the file of
/// an analysis wall's algorithm; "" for a planned wall.
std::string wallFiles(const WallInfo &W) {
  std::vector<std::string> Files;
  for (const Formula &F : allFormulas())
    if (F.W == W.Id && !llvm::is_contained(Files, F.File))
      Files.push_back(F.File);
  if (strlen(W.Algorithm))
    Files.push_back(W.Algorithm);
  return llvm::join(Files, ", ");
}

} // namespace

void printWalls(llvm::raw_ostream &OS) {
  for (const WallInfo &W : allWalls()) {
    OS << llvm::format_decimal(W.Number, 2) << "  " << W.Name;
    OS.indent(std::max<int>(1, 21 - static_cast<int>(strlen(W.Name))));
    OS << W.Domain;
    OS.indent(std::max<int>(1, 11 - static_cast<int>(strlen(W.Domain))));
    WallStatus Status = wallStatus(W);
    OS << wallStatusName(Status);
    OS.indent(13 - strlen(wallStatusName(Status)));
    OS << W.Equation << "\n      ";
    std::string Files = wallFiles(W);
    if (!Files.empty())
      OS << Files << "; ";
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
    J["files"] = wallFiles(W);
    WallStatus Status = wallStatus(W);
    J["status"] = wallStatusName(Status);
    J["implemented"] =
        Status == WallStatus::Implemented || Status == WallStatus::Partial;
    A.push_back(J);
  }
  return A;
}

} // namespace mlsc
