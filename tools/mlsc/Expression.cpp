//===- Expression.cpp - `mlsc eval FILE -e EXPR` --------------------------===//
//
// Like `cue eval -e`: the value of an expression over the file's names,
// lets and scenario values, with its unit. Each expression becomes a let
// at the end of the file, so it is resolved, typed and checked as any let
// is (its errors are located on that line); a constant is folded at
// compile time, and one that reads a scenario's values is lowered into
// that scenario's graph (lower-to-graph) and evaluated with it.
//
//===----------------------------------------------------------------------===//

#include "tools/mlsc/Driver.h"
#include "tools/mlsc/Json.h"

#include "runtime/Evaluator.h"
#include "runtime/Format.h"
#include "runtime/sim/Simulator.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

namespace mlsc::driver {

namespace {

/// What one expression came to.
struct ExprValue {
  std::optional<ir::Value> Folded; ///< a constant
  double SI = 0;                   ///< else: from a scenario's graph
  Dimension Dim;
  bool IsBool = false;
};

std::string shown(const ExprValue &V) {
  if (!V.Folded)
    return formatQuantity(V.SI, V.Dim, V.IsBool);
  if (V.Folded->Kind == ir::TypeKind::Quantity)
    return formatQuantity(V.Folded->Number, V.Folded->Dim);
  return ir::valueToString(*V.Folded);
}

} // namespace

std::optional<std::pair<const graph::Graph *, graph::NodeId>>
letNode(const Compilation &C, llvm::StringRef Name) {
  for (const graph::Graph &G : C.Graphs)
    if (auto It = G.Lets.find(Name); It != G.Lets.end())
      return std::make_pair(&G, It->second);
  return std::nullopt;
}

int expressionCommand(const DriverOptions &O,
                      std::unique_ptr<llvm::MemoryBuffer> Buf) {
  std::string Text = Buf->getBuffer().str();
  if (!Text.empty() && Text.back() != '\n')
    Text += '\n';
  std::vector<std::string> Names;
  // Diagnostics in the appended lets are located in the expressions as
  // given (`-e 2:1:10`), not on lines past the file's end.
  DiagnosticEngine::CommandLineLines Appended;
  Appended.Start = Text.size();
  for (size_t I = 0; I < O.Expressions.size(); ++I) {
    Names.push_back(fmt::format("mlsc_e{}", I + 1));
    std::string Prefix = fmt::format("let {} = ", Names.back());
    Text += Prefix + O.Expressions[I] + "\n";
    Appended.Labels.push_back(fmt::format("-e {}", I + 1));
    Appended.Prefixes.push_back(Prefix.size());
  }
  std::unique_ptr<Compilation> C = compileForEval(
      O, llvm::MemoryBuffer::getMemBufferCopy(Text, Buf->getBufferIdentifier()),
      &Appended);
  if (!C)
    return InputErrors;
  // One expression each, nothing after it (`1; assert false`).
  for (size_t I = 0; I < Names.size(); ++I) {
    const ir::Let *L = C->Program.LetByName.lookup(Names[I]);
    if (!L || !L->Value ||
        llvm::StringRef(ir::sourceText(L->Value->Range)).trim() !=
            llvm::StringRef(O.Expressions[I]).trim())
      return usage(DiagKind::InvalidOption,
                   fmt::format("-e takes one expression, and `{}` is more "
                               "(a declaration, `;`, a comment or a source)",
                               O.Expressions[I]));
  }
  std::vector<ExprValue> Values;
  for (const std::string &Name : Names) {
    const ir::Let *L = C->Program.LetByName.lookup(Name);
    auto noValue = [&](const std::string &Why) {
      C->Diags.report(DiagKind::NotEvaluable,
                      L && L->Value ? L->Value->Range : llvm::SMRange(),
                      "this expression has no value: " + Why);
      C->Diags.flush(llvm::errs());
      return InputErrors;
    };
    ExprValue V;
    if (L && L->Folded) {
      V.Folded = L->Folded;
    } else if (auto At = letNode(*C, Name)) {
      Evaluator E(*At->first);
      E.run();
      // A simulated value (`chat.simulated.ttft.p99`) comes from the
      // scenario's simulation, as the scorecard's does.
      if (sim::readsSimulated(*At->first, {At->second})) {
        std::string Why;
        sim::simulateInto(E, Why);
        if (!Why.empty())
          return noValue("it reads simulated values, and the scenario is "
                         "not simulated: " +
                         Why);
      }
      V.SI = E.value(At->second);
      V.Dim = At->first->node(At->second).Dim;
      V.IsBool = At->first->node(At->second).IsBool;
    } else {
      std::vector<std::string> Read =
          L && L->Value ? scenariosRead(*L->Value) : std::vector<std::string>();
      for (std::string &S : Read)
        S = "`" + S + "`";
      std::string Why =
          Read.size() > 1
              ? fmt::format("it reads the values of scenarios {}, and an "
                            "expression is evaluated with one scenario",
                            llvm::join(Read, " and "))
          : Read.size() == 1
              ? fmt::format("it reads a value scenario {} does not compute "
                            "(`mlsc eval` lists what it does), or combines "
                            "its values in a way its evaluation graph does "
                            "not express (a list, a string comparison)",
                            Read.front())
              : std::string("it is not a constant and reads no scenario");
      return noValue(Why);
    }
    Values.push_back(std::move(V));
  }
  llvm::raw_ostream &OS = llvm::outs();
  if (O.Format == OutputFormat::Json) {
    llvm::json::OStream J(OS, 2);
    J.object([&] {
      formatVersion(J);
      J.attributeArray("values", [&] {
        for (size_t I = 0; I < Values.size(); ++I)
          J.object([&] {
            J.attribute("expression", O.Expressions[I]);
            const ExprValue &V = Values[I];
            J.attributeBegin("value");
            if (!V.Folded)
              quantity(J, V.SI, V.Dim, V.IsBool);
            else if (V.Folded->Kind == ir::TypeKind::Quantity)
              quantity(J, V.Folded->Number, V.Folded->Dim, false);
            else if (V.Folded->Kind == ir::TypeKind::Bool)
              quantity(J, V.Folded->Number, Dimension(), true);
            else if (V.Folded->Kind == ir::TypeKind::String ||
                     V.Folded->Kind == ir::TypeKind::Enum)
              J.value(V.Folded->Text);
            else
              J.value(ir::valueToString(*V.Folded));
            J.attributeEnd();
          });
      });
    });
    OS << "\n";
    return Success;
  }
  for (const ExprValue &V : Values)
    OS << shown(V) << "\n";
  return Success;
}

} // namespace mlsc::driver
