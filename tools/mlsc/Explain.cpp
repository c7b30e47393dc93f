//===- Explain.cpp - `mlsc explain`: the derivation of one value ----------===//

#include "tools/mlsc/Driver.h"
#include "tools/mlsc/Render.h"

#include "runtime/Format.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

namespace mlsc::driver {

namespace {

/// The derivation of a `let` from the IR: a let needs no scenario. Each
/// line is a value and where it comes from; a let or field computed from
/// others shows them below it, in the order the expression reads them.
class LetExplainer {
public:
  LetExplainer(llvm::SourceMgr &SM, llvm::raw_ostream &OS) : SM(SM), OS(OS) {}

  void let(const ir::Let &L, const std::string &Indent, bool Root, bool Last) {
    std::string Line = L.Name + " = " + shown(L.Folded);
    line(Indent, Root, Last,
         Line + "   " + origin(L.Value.get(), L.Source, L.Notes));
    if (L.Value && !isLiteral(*L.Value))
      children(*L.Value, childIndent(Indent, Root, Last));
  }

private:
  llvm::SourceMgr &SM;
  llvm::raw_ostream &OS;

  static std::string shown(const std::optional<ir::Value> &V) {
    if (!V)
      return "(not a constant)";
    if (V->Kind == ir::TypeKind::Quantity)
      return formatQuantity(V->Number, V->Dim);
    return ir::valueToString(*V);
  }
  static bool isLiteral(const ir::Expr &E) {
    return E.Kind == ir::ExprKind::Number ||
           (E.Kind == ir::ExprKind::Unary &&
            E.Operands[0]->Kind == ir::ExprKind::Number);
  }
  std::string origin(const ir::Expr *E, const ir::Entity *Source,
                     const std::vector<std::string> &Notes) {
    std::string S;
    if (E)
      S = fmt::format("{} {} at {}", isLiteral(*E) ? "literal" : "derived",
                      isLiteral(*E) ? ir::sourceText(E->Range)
                                    : ir::exprToString(*E),
                      location(SM, E->Range));
    if (Source)
      S += " from " + Source->Name;
    if (!Notes.empty())
      S += " (" + llvm::join(Notes, "; ") + ")";
    return S;
  }
  static std::string childIndent(const std::string &Indent, bool Root,
                                 bool Last) {
    return Root ? "" : Indent + (Last ? "   " : "│  ");
  }
  void line(const std::string &Indent, bool Root, bool Last,
            const std::string &Text) {
    OS << (Root ? "" : Indent + (Last ? "└─ " : "├─ ")) << Text << "\n";
  }
  /// The lets and fields \p E reads, each once.
  void collect(const ir::Expr &E, std::vector<const ir::Expr *> &Out) {
    if (E.Kind == ir::ExprKind::LetRef || E.Kind == ir::ExprKind::FieldRef) {
      for (const ir::Expr *X : Out)
        if (X->Kind == E.Kind && X->LetTarget == E.LetTarget &&
            X->Target == E.Target && X->Path == E.Path)
          return;
      Out.push_back(&E);
      return;
    }
    for (const ir::ExprPtr &Op : E.Operands)
      collect(*Op, Out);
  }
  void children(const ir::Expr &E, const std::string &Indent) {
    std::vector<const ir::Expr *> Refs;
    collect(E, Refs);
    for (size_t I = 0; I < Refs.size(); ++I) {
      bool Last = I + 1 == Refs.size();
      const ir::Expr &R = *Refs[I];
      if (R.Kind == ir::ExprKind::LetRef) {
        let(*R.LetTarget, Indent, false, Last);
        continue;
      }
      std::string Path = llvm::join(R.Path, ".");
      const ir::Field *F = R.Target->field(Path);
      std::string Text = R.Target->Name + "." + Path + " = " +
                         shown(F ? F->Folded : std::nullopt);
      if (F)
        Text += "   " + origin(F->Value.get(), F->Source, F->Notes);
      line(Indent, false, Last, Text);
      if (F && F->Value && !isLiteral(*F->Value))
        children(*F->Value, Indent + (Last ? "   " : "│  "));
    }
  }
};

} // namespace

int explainCommand(const DriverOptions &O,
                   std::unique_ptr<llvm::MemoryBuffer> Buf) {
  std::unique_ptr<Compilation> C = compileForEval(O, std::move(Buf));
  if (!C)
    return InputErrors;
  // A let's derivation needs no scenario.
  if (!llvm::StringRef(O.Target).contains('.')) {
    const ir::Let *L = C->Program.LetByName.lookup(O.Target);
    const ir::Entity *E = C->Program.entity(O.Target);
    if (!L && E && E->Kind == "scenario")
      return usage(DiagKind::MissingArgument,
                   fmt::format("`{}` is a scenario: name one of its values, "
                               "as `{}.decode_step_time`",
                               O.Target, O.Target));
    if (!L)
      return usage(DiagKind::UnknownTarget,
                   fmt::format("no let `{}` in {}; explain takes "
                               "SCENARIO.METRIC or the name of a let",
                               O.Target, O.Input));
    // A let that reads a scenario's values is explained as they are.
    if (!L->Folded)
      if (auto At = letNode(*C, L->Name)) {
        Evaluator E(*At->first);
        E.run();
        llvm::raw_ostream &OS = llvm::outs();
        unsigned Main = C->Program.MainBufferId;
        if (O.Format == OutputFormat::Json) {
          llvm::json::OStream J(OS, 2);
          if (O.Leaves)
            leavesJSON(E, At->second, C->SM, Main, J);
          else
            explainJSON(E, At->second, C->SM, J);
          OS << "\n";
        } else if (O.Leaves) {
          printLeaves(E, At->second, C->SM, Main, OS);
        } else {
          printExplain(E, At->second, C->SM, OS);
        }
        return Success;
      }
    if (O.Leaves || O.Format == OutputFormat::Json)
      return usage(DiagKind::InvalidOption,
                   "--leaves and --format=json explain a scenario's values; "
                   "a constant let's derivation is text");
    LetExplainer(C->SM, llvm::outs()).let(*L, "", true, true);
    return Success;
  }
  auto [Scenario, Name] = llvm::StringRef(O.Target).split('.');
  for (const graph::Graph &G : C->Graphs) {
    if (G.Scenario != Scenario)
      continue;
    std::optional<graph::NodeId> Node = G.findNamed(Name);
    std::optional<MetricId> Metric = findMetric(Name);
    if (!Node && Metric && llvm::is_contained(G.Unavailable, *Metric))
      return usage(DiagKind::UnknownTarget,
                   fmt::format("scenario `{}` does not compute `{}`: no "
                               "implemented wall lowers it for this workload, "
                               "or an input it needs is not given (see `mlsc "
                               "eval`)",
                               Scenario.str(), Name.str()));
    if (!Node) {
      std::vector<std::string> Names;
      for (const auto &Entry : G.Named)
        Names.push_back(Entry.getKey().str());
      std::sort(Names.begin(), Names.end());
      // A close name is the likely one; else every name, to choose from.
      std::string Close = closestMatch(Name, Names);
      if (!Close.empty())
        return usage(DiagKind::UnknownTarget,
                     fmt::format("scenario `{}` has no value `{}`; did you "
                                 "mean `{}`?",
                                 Scenario.str(), Name.str(), Close));
      return usage(DiagKind::UnknownTarget,
                   fmt::format("scenario `{}` has no value `{}`; it has: {}",
                               Scenario.str(), Name.str(),
                               llvm::join(Names, ", ")));
    }
    Evaluator E(G);
    E.run();
    unsigned Main = C->Program.MainBufferId;
    llvm::raw_ostream &OS = llvm::outs();
    if (O.Format == OutputFormat::Json) {
      llvm::json::OStream J(OS, 2);
      if (O.Leaves)
        leavesJSON(E, *Node, C->SM, Main, J);
      else
        explainJSON(E, *Node, C->SM, J);
      OS << "\n";
    } else if (O.Leaves) {
      printLeaves(E, *Node, C->SM, Main, OS);
    } else {
      printExplain(E, *Node, C->SM, OS);
    }
    return Success;
  }
  std::vector<std::string> Names;
  for (const graph::Graph &G : C->Graphs)
    Names.push_back(G.Scenario);
  return usage(DiagKind::UnknownTarget,
               fmt::format("no scenario `{}` in {}; scenarios: {}",
                           Scenario.str(), O.Input,
                           Names.empty() ? "none" : llvm::join(Names, ", ")));
}

} // namespace mlsc::driver
