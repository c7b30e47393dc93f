//===- Explain.cpp - Explanations, leaves, graph dumps and the wall list --===//
//
// Renderers that read an evaluated graph itself: the derivation tree of
// `mlsc explain`, the leaves of `explain --leaves`, the `--emit=graph` dump,
// and the wall list of `mlsc walls`, as text and streamed JSON.
//
//===----------------------------------------------------------------------===//

#include "tools/mlsc/Json.h"
#include "tools/mlsc/Render.h"

#include "runtime/Format.h"
#include "runtime/walls/Formulas.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>

#include <cstring>
#include <set>

namespace mlsc::driver {

using graph::Graph;
using graph::NodeId;
using graph::Op;

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

std::string label(const Graph &G, NodeId Id) {
  const graph::Node &N = G.node(Id);
  if (!N.Name.empty())
    return N.Name;
  if (N.Kind == Op::Apply)
    return formula(N).Name;
  if (N.Kind == Op::Leaf)
    return "constant";
  return std::string("(") + graph::opSpelling(N.Kind) + ")";
}

/// A leaf's origin as JSON members (shared by explain and --leaves).
void originJSON(llvm::json::OStream &J, const graph::LeafOrigin &O,
                llvm::SourceMgr &SM) {
  if (O.Range.isValid())
    J.attribute("location", location(SM, O.Range));
  else
    J.attribute("location", nullptr);
  if (!O.Source.empty()) {
    J.attribute("source", O.Source);
    J.attribute("source_kind", O.SourceKind);
  } else {
    J.attribute("source", nullptr);
    J.attribute("source_kind", nullptr);
  }
  J.attribute("estimate", O.SourceKind == "estimate");
}

class Explainer {
public:
  Explainer(const Evaluator &E, llvm::SourceMgr &SM)
      : E(E), G(E.graph()), SM(SM) {}

  void node(llvm::raw_ostream &OS, NodeId Id, const std::string &Prefix,
            bool Last, bool Root) {
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
      const Formula &F = formula(N);
      const WallInfo *W = wallInfo(F.W);
      OS << "   [wall " << W->Number << ": " << W->Name << "] " << F.Equation;
      if (!Repeat)
        OS << "  (" << F.Citation << ")";
    }
    if (Repeat) {
      OS << "   (derivation shown above)\n";
      return;
    }
    OS << "\n";
    std::string Child = Root ? "" : Prefix + (Last ? "   " : "│  ");
    for (uint32_t I = 0; I < N.NumInputs; ++I)
      node(OS, G.inputOf(Id, I), Child, I + 1 == N.NumInputs, false);
  }

  void nodeJSON(llvm::json::OStream &J, NodeId Id) {
    const graph::Node &N = G.node(Id);
    J.object([&] {
      J.attribute("name", label(G, Id));
      J.attributeBegin("value");
      quantity(J, E.value(Id), N.Dim, N.IsBool);
      J.attributeEnd();
      if (N.Kind == Op::Leaf) {
        const graph::LeafOrigin &O = G.Origins[N.Origin];
        J.attributeObject("origin", [&] {
          J.attribute("written", O.Spelling);
          originJSON(J, O, SM);
          J.attributeArray("notes", [&] {
            for (const std::string &Note : O.Notes)
              J.value(Note);
          });
          J.attribute("assumed", O.Assumed);
          J.attribute("calibrated", O.Calibrated);
        });
        return;
      }
      if (!N.Name.empty() && !Shown.insert(Id).second) {
        J.attribute("see", N.Name);
        return;
      }
      if (N.Kind == Op::Apply) {
        const Formula &F = formula(N);
        J.attributeObject("formula", [&] {
          J.attribute("name", F.Name);
          J.attribute("wall", static_cast<int64_t>(wallInfo(F.W)->Number));
          J.attribute("equation", F.Equation);
          J.attribute("citation", F.Citation);
        });
      } else {
        J.attribute("op", graph::opSpelling(N.Kind));
      }
      J.attributeArray("inputs", [&] {
        for (uint32_t I = 0; I < N.NumInputs; ++I)
          nodeJSON(J, G.inputOf(Id, I));
      });
    });
  }

private:
  const Evaluator &E;
  const Graph &G;
  llvm::SourceMgr &SM;
  std::set<NodeId> Shown;
};

/// The leaves a node depends on, each once, in first-reached order.
std::vector<NodeId> leavesOf(const Graph &G, NodeId Root) {
  std::vector<NodeId> Leaves, Stack{Root};
  std::vector<bool> Seen(G.size(), false);
  while (!Stack.empty()) {
    NodeId Id = Stack.back();
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

/// Where a wall lives: its formula table(s) in the library, or the file of
/// an analysis wall's algorithm; "" for a planned wall.
std::string wallFiles(const WallInfo &W) {
  std::vector<std::string> Files;
  for (const Formula &F : allFormulas())
    if (F.W == W.Id && !llvm::is_contained(Files, F.File))
      Files.push_back(F.File);
  if (std::strlen(W.Algorithm))
    Files.push_back(W.Algorithm);
  return llvm::join(Files, ", ");
}

} // namespace

void printExplain(const Evaluator &E, NodeId Node, llvm::SourceMgr &SM,
                  llvm::raw_ostream &OS) {
  OS << E.graph().Scenario << ".";
  Explainer(E, SM).node(OS, Node, "", true, true);
}

void explainJSON(const Evaluator &E, NodeId Node, llvm::SourceMgr &SM,
                 llvm::json::OStream &J) {
  J.object([&] {
    formatVersion(J);
    J.attribute("scenario", E.graph().Scenario);
    J.attributeBegin("tree");
    Explainer(E, SM).nodeJSON(J, Node);
    J.attributeEnd();
  });
}

void printLeaves(const Evaluator &E, NodeId Node, llvm::SourceMgr &SM,
                 unsigned MainBuffer, llvm::raw_ostream &OS) {
  const Graph &G = E.graph();
  std::vector<NodeId> Leaves = leavesOf(G, Node);
  static const char *const Headings[] = {
      "from imported modules (registries)", "from the scenario file",
      "assumed defaults", "formula constants"};
  unsigned Count[4] = {0, 0, 0, 0}, Estimates = 0, Calibrated = 0;
  for (NodeId Id : Leaves) {
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
    for (NodeId Id : Leaves) {
      const graph::LeafOrigin &O = G.Origins[G.node(Id).Origin];
      if (static_cast<unsigned>(classify(O, SM, MainBuffer)) != C)
        continue;
      OS << "  " << label(G, Id) << " = "
         << formatQuantity(E.value(Id), G.node(Id).Dim, G.node(Id).IsBool)
         << "   " << originText(O, SM) << "\n";
    }
  }
}

void leavesJSON(const Evaluator &E, NodeId Node, llvm::SourceMgr &SM,
                unsigned MainBuffer, llvm::json::OStream &J) {
  const Graph &G = E.graph();
  static const char *const Classes[] = {"imported", "main", "assumed",
                                        "constant"};
  J.object([&] {
    formatVersion(J);
    J.attribute("scenario", G.Scenario);
    J.attribute("value", label(G, Node));
    J.attributeArray("leaves", [&] {
      for (NodeId Id : leavesOf(G, Node)) {
        const graph::LeafOrigin &O = G.Origins[G.node(Id).Origin];
        J.object([&] {
          J.attribute("name", label(G, Id));
          J.attributeBegin("value");
          quantity(J, E.value(Id), G.node(Id).Dim, G.node(Id).IsBool);
          J.attributeEnd();
          J.attribute(
              "class",
              Classes[static_cast<unsigned>(classify(O, SM, MainBuffer))]);
          J.attribute("written", O.Spelling);
          originJSON(J, O, SM);
          J.attribute("calibrated", O.Calibrated);
          J.attribute("assumed", O.Assumed);
        });
      }
    });
  });
}

void printGraph(const Graph &G, llvm::SourceMgr &SM, llvm::raw_ostream &OS) {
  OS << "graph " << G.Scenario << (G.DecoderTraining ? " (training)" : "")
     << "\n";
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
        OS << (K ? ", " : "") << "%" << G.inputOf(NodeId(I), K).index();
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

void printWalls(llvm::raw_ostream &OS) {
  for (const WallInfo &W : allWalls()) {
    OS << llvm::format_decimal(W.Number, 2) << "  " << W.Name;
    OS.indent(std::max<int>(1, 21 - static_cast<int>(std::strlen(W.Name))));
    OS << W.Domain;
    OS.indent(std::max<int>(1, 11 - static_cast<int>(std::strlen(W.Domain))));
    WallStatus Status = wallStatus(W);
    OS << wallStatusName(Status);
    OS.indent(13 - std::strlen(wallStatusName(Status)));
    OS << W.Equation << "\n      ";
    std::string Files = wallFiles(W);
    if (!Files.empty())
      OS << Files << "; ";
    OS << W.Citation << "\n";
  }
}

void wallsJSON(llvm::json::OStream &J) {
  J.object([&] {
    formatVersion(J);
    J.attributeArray("walls", [&] {
      for (const WallInfo &W : allWalls())
        J.object([&] {
          J.attribute("number", static_cast<int64_t>(W.Number));
          J.attribute("name", W.Name);
          J.attribute("domain", W.Domain);
          J.attribute("equation", W.Equation);
          J.attribute("citation", W.Citation);
          J.attribute("files", wallFiles(W));
          WallStatus Status = wallStatus(W);
          J.attribute("status", wallStatusName(Status));
          J.attribute("implemented", Status == WallStatus::Implemented ||
                                         Status == WallStatus::Partial);
        });
    });
  });
}

} // namespace mlsc::driver
