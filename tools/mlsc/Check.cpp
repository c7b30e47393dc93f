//===- Check.cpp - `mlsc check`: every SLA condition and assert -----------===//

#include "tools/mlsc/Driver.h"
#include "tools/mlsc/Json.h"
#include "tools/mlsc/Render.h"

#include "runtime/Format.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <tuple>

namespace mlsc::driver {

namespace {

/// One line of `mlsc check`.
struct CheckLine {
  std::string Scenario; ///< "" for an assert decided at compile time
  std::string Kind;     ///< "assert", "sla", "feasibility"
  std::string Text, Location, Message, Reason;
  Verdict V = Verdict::Unknown;
  std::optional<double> Margin; ///< ConditionResult::Margin
};

/// "over by 2.4%" (a comparison past its limit) or "2.4% within" (its
/// headroom).
std::string marginText(double M) {
  return M > 0 ? "over by " + formatNumber(100 * M) + "%"
               : formatNumber(-100 * M) + "% within";
}

/// A location's file, line and column, for source order.
std::tuple<std::string, unsigned, unsigned> position(llvm::StringRef L) {
  auto [Rest, Col] = L.rsplit(':');
  auto [File, Line] = Rest.rsplit(':');
  unsigned LineNo = 0, ColNo = 0;
  Line.getAsInteger(10, LineNo);
  Col.getAsInteger(10, ColNo);
  return {File.str(), LineNo, ColNo};
}

} // namespace

int checkCommand(const DriverOptions &O,
                 std::unique_ptr<llvm::MemoryBuffer> Buf) {
  std::unique_ptr<Compilation> C = compileForEval(O, std::move(Buf));
  if (!C)
    return InputErrors;
  std::vector<CheckLine> Lines;
  for (const ir::Assert &A : C->Program.Asserts)
    if (A.Folded)
      Lines.push_back({"", "assert", ir::sourceText(A.Condition->Range),
                       location(C->SM, A.Range), A.Message, "",
                       A.Folded->Number != 0 ? Verdict::Pass : Verdict::Fail,
                       std::nullopt});
  for (const graph::Graph &G : C->Graphs) {
    Evaluator E(G);
    E.run();
    ScenarioResult R = scenarioResult(E, C->SM);
    if (!R.Feasible)
      Lines.push_back({R.Scenario, "feasibility", "", R.Location, "",
                       "the scenario does not fit its devices (see `mlsc "
                       "eval`)",
                       Verdict::Fail, std::nullopt});
    for (const ConditionResult &Cond : R.Conditions) {
      // A pass prints its values too, so a log says by how much.
      Lines.push_back(
          {R.Scenario, Cond.IsAssert ? "assert" : "sla", Cond.Text,
           Cond.Location, Cond.Message,
           Cond.Infeasible ? "the scenario is infeasible" : Cond.Detail, Cond.V,
           Cond.Infeasible ? std::nullopt : Cond.Margin});
    }
  }
  // In source order (compile-time asserts and each scenario's conditions
  // interleaved as the file writes them).
  std::stable_sort(Lines.begin(), Lines.end(),
                   [](const CheckLine &A, const CheckLine &B) {
                     return position(A.Location) < position(B.Location);
                   });
  unsigned Pass = 0, Fail = 0, Unknown = 0;
  for (const CheckLine &L : Lines)
    (L.V == Verdict::Pass ? Pass : L.V == Verdict::Fail ? Fail : Unknown)++;
  llvm::raw_ostream &OS = llvm::outs();
  if (O.Format == OutputFormat::Json) {
    llvm::json::OStream J(OS, 2);
    J.object([&] {
      formatVersion(J);
      J.attributeArray("results", [&] {
        for (const CheckLine &L : Lines)
          J.object([&] {
            if (L.Scenario.empty())
              J.attribute("scenario", nullptr);
            else
              J.attribute("scenario", L.Scenario);
            J.attribute("kind", L.Kind);
            if (L.Kind != "feasibility")
              J.attribute("text", L.Text);
            J.attribute("location", L.Location);
            J.attribute("verdict", llvm::StringRef(verdictWord(L.V)).lower());
            if (!L.Reason.empty() && L.V != Verdict::Pass)
              J.attribute("reason", L.Reason);
            if (L.Margin)
              number(J, "margin", *L.Margin);
            if (!L.Message.empty())
              J.attribute("message", L.Message);
          });
      });
      J.attribute("pass", static_cast<int64_t>(Pass));
      J.attribute("fail", static_cast<int64_t>(Fail));
      J.attribute("unknown", static_cast<int64_t>(Unknown));
    });
    OS << "\n";
  } else {
    for (const CheckLine &L : Lines) {
      OS << L.Location << ": " << verdictWord(L.V) << " ";
      if (L.Kind == "feasibility") {
        OS << "scenario " << L.Scenario
           << " is infeasible (run `mlsc eval` for the reason)\n";
        continue;
      }
      OS << L.Kind << " `" << L.Text << "`";
      if (!L.Message.empty())
        OS << " \"" << L.Message << "\"";
      if (!L.Reason.empty())
        OS << ": " << L.Reason;
      if (L.Margin)
        OS << (L.Reason.empty() ? ": " : ", ") << marginText(*L.Margin);
      OS << "\n";
    }
    OS << Pass << " passed, " << Fail << " failed, " << Unknown << " unknown\n";
  }
  return Fail || Unknown ? CheckFailed : Success;
}

} // namespace mlsc::driver
