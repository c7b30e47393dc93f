//===- RenderTables.cpp - Rendering solve and sweep results ---------------===//

#include "tools/mlsc/RenderTables.h"
#include "tools/mlsc/Json.h"

#include "runtime/Format.h"
#include "runtime/Parallel.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>

#include <cmath>

namespace mlsc::driver {

using query::Query;
using query::Term;
using query::Variable;

namespace {

std::string show(double V, const Dimension &D, bool IsBool = false) {
  return formatQuantity(V, D, IsBool);
}

/// A CSV field, quoted (RFC 4180) when it holds a comma, quote or newline.
std::string csvField(const std::string &S) {
  if (S.find_first_of(",\"\n\r") == std::string::npos)
    return S;
  std::string Q = "\"";
  for (char Ch : S) {
    if (Ch == '"')
      Q += '"';
    Q += Ch;
  }
  return Q + "\"";
}

/// A JSON string literal.
std::string quoted(llvm::StringRef S) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  llvm::json::OStream(OS).value(S);
  return OS.str();
}

std::string rangeText(const Variable &V) {
  if (!V.Continuous && V.Values.size() <= 8) {
    std::vector<std::string> Items;
    for (double X : V.Values)
      Items.push_back(show(X, V.Dim));
    return "{" + llvm::join(Items, ", ") + "}";
  }
  return fmt::format("[{}, {}]", show(V.Lo, V.Dim), show(V.Hi, V.Dim));
}

/// The row naming a condition the solver adds.
const char *implicitLabel(const Term &C) {
  return C.Text == "feasible" ? "feasible" : "queue stable";
}

std::string conditionsText(const Query &Q) {
  std::vector<std::string> Texts;
  for (const Term &C : Q.Conditions)
    if (!C.Implicit)
      Texts.push_back("`" + C.Text + "`");
  return Texts.empty() ? "the feasibility checks" : llvm::join(Texts, " and ");
}

std::string bindingText(const BindingWall &B) {
  if (!B.Known)
    return "";
  return fmt::format("{} ({} step), {}x ahead of {}", B.label(),
                     phaseInfo(B.Phase).Prefix, formatNumber(B.Margin),
                     B.RunnerUp);
}

void row(llvm::raw_ostream &OS, llvm::StringRef Label, llvm::StringRef Value) {
  OS << "  " << Label;
  OS.indent(Label.size() < 14 ? 14 - Label.size() : 1);
  OS << Value << "\n";
}

/// A table's columns: the variables, then the terms it reports.
struct Column {
  std::string Name;
  Dimension Dim;
  bool IsBool = false;
  const std::vector<std::string> *Labels = nullptr; ///< entity options
  bool Choice = false; ///< Labels are a choice's symbols, not entities
};

std::vector<Column> columnsOf(const Query &Q) {
  const std::vector<Term> &Terms =
      Q.K == Query::Kind::Sweep ? Q.Report : Q.Objectives;
  std::vector<Column> Cols;
  for (const Variable &V : Q.Vars)
    Cols.push_back(
        {V.Name, V.Dim, false, V.isEntity() ? &V.Labels : nullptr, V.Choice});
  for (const Term &T : Terms)
    Cols.push_back({T.Text, T.Dim, T.IsBool});
  return Cols;
}

const std::string &label(const Column &C, double X) {
  return (*C.Labels)[static_cast<size_t>(X)];
}

const char *unitOf(const Column &C) {
  return C.Labels   ? (C.Choice ? "choice" : "entity")
         : C.IsBool ? "bool"
                    : nullptr;
}

/// A number of a Pareto front in `mlsc solve`'s JSON, as it has always
/// been printed there: whole values without a fraction, others with the
/// digits of every other JSON number.
std::string paretoNumber(double X) {
  if (!std::isfinite(X))
    return "null";
  std::string Short = fmt::format("{}", X);
  if (Short.find_first_of(".e") == std::string::npos)
    return Short;
  return jsonNumber(X);
}

} // namespace

namespace {
/// The `closest` row where the queue is what fails there.
std::string queueClosestText(llvm::StringRef At) {
  return fmt::format("at {}: the queue has no steady state (the requests "
                     "arrive faster than the replicas serve them)",
                     At);
}

/// The `blocked by` row when the queue saturates (queueSaturation).
std::string queueBlockedText(llvm::StringRef Reason) {
  return fmt::format("the queue: {} (>= 100%), so waits grow without bound "
                     "[wall 7: tail latency]",
                     Reason);
}
} // namespace

void printSolve(const Query &Q, const SolveResult &R, llvm::raw_ostream &OS) {
  const Variable &V = Q.Vars.front();
  const char *Verb = Q.Direction < 0 ? "minimize" : "maximize";
  OS << "solve " << Q.Name << ": " << Verb << " " << V.Name << " in "
     << rangeText(V) << " such that " << conditionsText(Q) << "\n";
  std::string Monotone =
      R.Monotone
          ? fmt::format("monotone over {} samples", R.Samples)
          : fmt::format("not monotone over {} samples: the conditions hold "
                        "on a stretch inside the range; the answer is the "
                        "{} edge of the {} stretch the samples found",
                        R.Samples, Q.Direction < 0 ? "lower" : "upper",
                        Q.Direction < 0 ? "first" : "last");
  if (!R.Found) {
    bool Queue = R.FailingCondition >= 0 &&
                 Q.Conditions[R.FailingCondition].Implicit &&
                 Q.Conditions[R.FailingCondition].Text == "queue_stable";
    OS << "  infeasible    no " << V.Name << " in " << rangeText(V)
       << (Queue ? " keeps the queue stable" : " meets " + conditionsText(Q))
       << "\n";
    if (!R.InvalidAtClosest.empty()) {
      row(OS, "closest",
          fmt::format("at {}: {}", show(R.Closest, V.Dim), R.InvalidAtClosest));
    } else if (R.FailingCondition >= 0) {
      const Term &C = Q.Conditions[R.FailingCondition];
      const std::string &Why = R.Conditions[R.FailingCondition].Operands;
      row(OS, "closest",
          C.Implicit && C.Text != "feasible"
              ? queueClosestText(show(R.Closest, V.Dim))
              : fmt::format("at {}: `{}` fails{}", show(R.Closest, V.Dim),
                            C.Text, Why.empty() ? "" : " (" + Why + ")"));
    }
    if (!R.OutsideFloor.empty())
      row(OS, "blocked by", R.OutsideFloor);
    else if (!R.QueueReason.empty())
      row(OS, "blocked by", queueBlockedText(R.QueueReason));
    else if (R.Binding.Known)
      row(OS, "blocked by", bindingText(R.Binding));
    row(OS, "evaluations", fmt::format("{} ({})", R.Evaluations, Monotone));
    return;
  }
  std::string Precision = V.Continuous && !V.Integer
                              ? fmt::format("to {:g}%", 100 * Q.Tolerance)
                              : "exact";
  row(OS, "answer", fmt::format("{}   ({})", show(R.Answer, V.Dim), Precision));
  for (size_t K = 0; K < Q.Conditions.size(); ++K) {
    const Term &C = Q.Conditions[K];
    const SolveResult::ConditionAt &At = R.Conditions[K];
    row(OS, !C.Implicit ? "holds" : implicitLabel(C),
        C.Implicit ? (At.Holds ? "yes" : "no")
                   : fmt::format(
                         "{}{}", C.Text,
                         At.Operands.empty() ? "" : "  (" + At.Operands + ")"));
  }
  if (!R.InvalidBeyond.empty()) {
    row(OS, "limited by",
        fmt::format("at {}, {}", show(R.Beyond, V.Dim), R.InvalidBeyond));
  } else if (R.LimitingCondition >= 0) {
    const Term &C = Q.Conditions[R.LimitingCondition];
    row(OS, "limited by",
        C.Text == "feasible"
            ? fmt::format("feasibility: at {} the scenario does not fit "
                          "(see `mlsc eval`)",
                          show(R.Beyond, V.Dim))
        : C.Implicit ? fmt::format("the queue: at {} the requests arrive "
                                   "faster than the replicas serve them "
                                   "(no steady state; see `mlsc eval`)",
                                   show(R.Beyond, V.Dim))
                     : fmt::format("`{}`: at {} it fails", C.Text,
                                   show(R.Beyond, V.Dim)));
  }
  if (R.Binding.Known)
    row(OS, "binding wall", bindingText(R.Binding));
  if (!std::isnan(R.ClosedForm))
    row(OS, "closed form",
        fmt::format("{} = {} (inverse roofline); the solver is {:+.3f}% "
                    "from it",
                    R.ClosedFormRule, show(R.ClosedForm, V.Dim),
                    100 * (R.Answer / R.ClosedForm - 1)));
  row(OS, "evaluations", fmt::format("{} ({})", R.Evaluations, Monotone));
}

void solveJSON(const Query &Q, const SolveResult &R, llvm::StringRef Scenario,
               llvm::json::OStream &J) {
  const Variable &V = Q.Vars.front();
  auto value = [&](llvm::StringRef Key, double X) {
    J.attributeObject(Key, [&] {
      number(J, "value", X);
      J.attribute("unit", V.Dim.str());
      J.attribute("display", show(X, V.Dim));
    });
  };
  J.object([&] {
    J.attribute("solve", Q.Name);
    J.attribute("scenario", Scenario);
    J.attribute("variable", V.Name);
    J.attribute("direction", Q.Direction < 0 ? "minimize" : "maximize");
    J.attributeObject("range", [&] {
      number(J, "low", V.Lo);
      number(J, "high", V.Hi);
      J.attribute("unit", V.Dim.str());
    });
    J.attribute("found", R.Found);
    if (R.Found) {
      value("answer", R.Answer);
    } else {
      J.attribute("answer", nullptr);
      value("closest", R.Closest);
      if (!R.InvalidAtClosest.empty())
        J.attribute("invalid_at_closest", R.InvalidAtClosest);
      else if (R.FailingCondition >= 0)
        J.attribute("failing_condition", Q.Conditions[R.FailingCondition].Text);
      if (!R.OutsideFloor.empty())
        J.attribute("outside_engine", R.OutsideFloor);
      if (!R.QueueReason.empty())
        J.attribute("queue_reason", R.QueueReason);
    }
    J.attributeArray("conditions", [&] {
      for (size_t K = 0; K < Q.Conditions.size(); ++K)
        J.object([&] {
          J.attribute("text", Q.Conditions[K].Text);
          J.attribute("holds", R.Conditions[K].Holds);
        });
    });
    if (R.Binding.Known)
      J.attributeObject("binding_wall", [&] {
        J.attribute("wall", R.Binding.Short);
        J.attribute("number", static_cast<int64_t>(R.Binding.Number));
        J.attribute("phase", phaseInfo(R.Binding.Phase).Prefix);
        number(J, "margin", R.Binding.Margin);
      });
    if (!R.InvalidBeyond.empty())
      J.attributeObject("limited_by", [&] {
        J.attribute("invalid", R.InvalidBeyond);
        number(J, "at", R.Beyond);
      });
    else if (R.LimitingCondition >= 0)
      J.attributeObject("limited_by", [&] {
        J.attribute("condition", Q.Conditions[R.LimitingCondition].Text);
        number(J, "at", R.Beyond);
      });
    if (!std::isnan(R.ClosedForm))
      J.attributeObject("closed_form", [&] {
        number(J, "value", R.ClosedForm);
        J.attribute("unit", V.Dim.str());
        J.attribute("rule", R.ClosedFormRule);
      });
    J.attribute("evaluations", static_cast<int64_t>(R.Evaluations));
    J.attribute("monotone", R.Monotone);
  });
}

namespace {

/// A CSV number: empty when not a number, `inf` and `-inf` as such.
void csvNumber(fmt::memory_buffer &B, double X) {
  if (!std::isnan(X))
    fmt::format_to(std::back_inserter(B), "{}", X);
}

class CSVWriter final : public TableWriter {
public:
  CSVWriter(const Query &Q, llvm::raw_ostream &OS, unsigned Threads)
      : Cols(columnsOf(Q)), OS(OS), Threads(Threads) {
    std::vector<std::string> Head;
    for (const Column &C : Cols)
      Head.push_back(
          csvField(C.Dim.isDimensionless() || C.IsBool || C.Labels
                       ? C.Name
                       : fmt::format("{} [{}]", C.Name, C.Dim.str())));
    Head.push_back("binding_wall");
    OS << llvm::join(Head, ",") << "\n";
  }

  void rows(llvm::ArrayRef<GridRow> Rows) override {
    // Large blocks are formatted in chunks on every core, then written in
    // order: the bytes do not depend on the thread count.
    size_t N = Rows.size();
    unsigned Chunks = N < 65536 ? 1 : std::max(1u, Threads);
    Parts.resize(Chunks);
    parallelChunks(N, Chunks, 1, [&](unsigned Chunk, size_t Begin, size_t End) {
      fmt::memory_buffer &B = Parts[Chunk];
      B.clear();
      for (size_t I = Begin; I < End; ++I) {
        const GridRow &Row = Rows[I];
        for (size_t K = 0; K < Row.Vars.size(); ++K) {
          if (Cols[K].Labels)
            fmt::format_to(std::back_inserter(B), "{}",
                           csvField(label(Cols[K], Row.Vars[K])));
          else
            csvNumber(B, Row.Vars[K]);
          B.push_back(',');
        }
        for (double X : Row.Values) {
          csvNumber(B, X);
          B.push_back(',');
        }
        fmt::format_to(std::back_inserter(B), "{}\n",
                       wallShortName(Row.Binding));
      }
    });
    for (unsigned C = 0; C < Chunks; ++C)
      OS.write(Parts[C].data(), Parts[C].size());
  }

  void finish(const GridResult &) override {}

private:
  std::vector<Column> Cols;
  llvm::raw_ostream &OS;
  unsigned Threads;
  std::vector<fmt::memory_buffer> Parts;
};

/// The columns and each row are compact arrays on one line, so that a
/// table of many points stays a line per point; the counts follow the
/// rows, which are written as they come.
class JSONWriter final : public TableWriter {
public:
  JSONWriter(const Query &Q, llvm::StringRef Scenario, llvm::raw_ostream &OS)
      : Q(Q), Cols(columnsOf(Q)), OS(OS), J(OS, 2) {
    std::string Columns = "[";
    for (size_t K = 0; K < Cols.size(); ++K) {
      const char *Unit = unitOf(Cols[K]);
      Columns += fmt::format("{}{{\"name\": {}, \"unit\": {}}}", K ? ", " : "",
                             quoted(Cols[K].Name),
                             quoted(Unit ? Unit : Cols[K].Dim.str()));
    }
    Columns += ", {\"name\": \"binding_wall\", \"unit\": \"\"}]";
    J.objectBegin();
    if (Q.K == Query::Kind::Sweep)
      formatVersion(J);
    J.attribute(Q.K == Query::Kind::Sweep ? "sweep" : "solve", Q.Name);
    J.attribute("scenario", Scenario);
    J.attribute("points", static_cast<int64_t>(gridPoints(Q)));
    J.attributeBegin("columns");
    J.rawValue(Columns);
    J.attributeEnd();
    J.attributeBegin("rows");
    J.arrayBegin();
  }

  void rows(llvm::ArrayRef<GridRow> Rows) override {
    fmt::memory_buffer B;
    for (const GridRow &Row : Rows) {
      B.clear();
      B.push_back('[');
      bool First = true;
      auto sep = [&] {
        if (!First)
          fmt::format_to(std::back_inserter(B), ", ");
        First = false;
      };
      for (size_t K = 0; K < Row.Vars.size(); ++K) {
        sep();
        if (Cols[K].Labels)
          fmt::format_to(std::back_inserter(B), "{}",
                         quoted(label(Cols[K], Row.Vars[K])));
        else if (std::isfinite(Row.Vars[K]))
          fmt::format_to(std::back_inserter(B), "{}", Row.Vars[K]);
        else
          fmt::format_to(std::back_inserter(B), "null");
      }
      for (double X : Row.Values) {
        sep();
        if (std::isfinite(X))
          fmt::format_to(std::back_inserter(B), "{}", X);
        else
          fmt::format_to(std::back_inserter(B), "null");
      }
      fmt::format_to(std::back_inserter(B), ", \"{}\"]",
                     wallShortName(Row.Binding));
      J.rawValue(llvm::StringRef(B.data(), B.size()));
    }
  }

  void finish(const GridResult &R) override {
    J.arrayEnd();
    J.attributeEnd();
    J.attribute("kept", static_cast<int64_t>(R.Kept));
    J.attribute("invalid", static_cast<int64_t>(R.Invalid));
    if (R.Invalid)
      J.attributeObject("first_invalid", [&] {
        J.attribute("point", pointText(Q, R.FirstInvalidVars));
        J.attribute("reason", R.FirstInvalidReason);
      });
    J.objectEnd();
    OS << "\n";
  }

private:
  const Query &Q;
  std::vector<Column> Cols;
  llvm::raw_ostream &OS;
  llvm::json::OStream J;
};

} // namespace

TableWriter::~TableWriter() = default;

std::unique_ptr<TableWriter> tableWriter(TableFormat F, const Query &Q,
                                         llvm::StringRef Scenario,
                                         llvm::raw_ostream &OS,
                                         unsigned Threads) {
  if (F == TableFormat::JSON)
    return std::make_unique<JSONWriter>(Q, Scenario, OS);
  if (F == TableFormat::CSV)
    return std::make_unique<CSVWriter>(Q, OS, Threads);
  return nullptr;
}

std::string gridCSV(const Query &Q, const GridResult &R, unsigned Threads) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  CSVWriter W(Q, OS, Threads);
  W.rows(R.Rows);
  W.finish(R);
  OS.flush();
  return Out;
}

std::string pointText(const Query &Q, llvm::ArrayRef<double> Vars) {
  std::vector<Column> Cols = columnsOf(Q);
  std::vector<std::string> Parts;
  for (size_t K = 0; K < Vars.size() && K < Q.Vars.size(); ++K)
    Parts.push_back(fmt::format("{} = {}", Cols[K].Name,
                                Cols[K].Labels ? label(Cols[K], Vars[K])
                                               : show(Vars[K], Cols[K].Dim)));
  return llvm::join(Parts, ", ");
}

std::string invalidText(const Query &Q, const GridResult &R) {
  if (!R.Invalid)
    return "";
  return fmt::format("{} {} outside what a field can be (first at {}: {})",
                     R.Invalid, R.Invalid == 1 ? "point" : "points",
                     pointText(Q, R.FirstInvalidVars), R.FirstInvalidReason);
}

std::string missText(const Query &Q, const GridResult &R) {
  if (!R.Miss)
    return "";
  const GridMiss &M = *R.Miss;
  const Term &C = Q.Conditions[M.Failing];
  // The headline names a condition only when it is the first to fail at
  // every point that misses.
  int Only = -1;
  for (size_t K = 0; K < M.FailsFirst.size(); ++K)
    if (M.FailsFirst[K])
      Only = Only == -1 ? static_cast<int>(K) : -2;
  std::string What = "meets all its conditions";
  if (Only >= 0) {
    const Term &O = Q.Conditions[Only];
    What = O.IsBool && O.Text == "queue_stable" ? "keeps the queue stable"
           : O.IsBool && O.Text == "feasible"   ? "fits (is feasible)"
                                                : "meets `" + O.Text + "`";
  }
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  OS << "  infeasible    no point of the grid " << What << "\n";
  std::vector<std::string> Counts;
  for (size_t K = 0; K < Q.Conditions.size(); ++K)
    if (M.FailsFirst[K])
      Counts.push_back(
          fmt::format("`{}` at {}", Q.Conditions[K].Text, M.FailsFirst[K]));
  row(OS, "fails first",
      fmt::format("{} of {} points", llvm::join(Counts, ", "), R.Points));
  std::string At = pointText(Q, M.Vars);
  row(OS, "closest",
      !M.QueueReason.empty()
          ? queueClosestText(At)
          : fmt::format("at {}: `{}` fails{}", At, C.Text,
                        M.Operands.empty() ? "" : " (" + M.Operands + ")"));
  if (!M.QueueReason.empty())
    row(OS, "blocked by", queueBlockedText(M.QueueReason));
  return Out;
}

void paretoJSON(const Query &Q, const GridResult &R, llvm::StringRef Scenario,
                llvm::json::OStream &J) {
  std::vector<Column> Cols = columnsOf(Q);
  auto num = [&](double X) {
    std::string Text = paretoNumber(X);
    J.rawValue([&](llvm::raw_ostream &OS) { OS << Text; });
  };
  J.object([&] {
    J.attribute("solve", Q.Name);
    J.attribute("scenario", Scenario);
    J.attribute("points", static_cast<int64_t>(R.Points));
    J.attribute("kept", static_cast<int64_t>(R.Kept));
    if (R.Invalid) {
      J.attribute("invalid", static_cast<int64_t>(R.Invalid));
      J.attributeObject("first_invalid", [&] {
        J.attribute("point", pointText(Q, R.FirstInvalidVars));
        J.attribute("reason", R.FirstInvalidReason);
      });
    }
    if (R.Miss) {
      const GridMiss &M = *R.Miss;
      J.attributeObject("miss", [&] {
        J.attributeArray("fails_first", [&] {
          for (size_t K = 0; K < Q.Conditions.size(); ++K)
            if (M.FailsFirst[K])
              J.object([&] {
                J.attribute("condition", Q.Conditions[K].Text);
                J.attribute("points", static_cast<int64_t>(M.FailsFirst[K]));
              });
        });
        J.attributeObject("closest", [&] {
          J.attribute("point", pointText(Q, M.Vars));
          J.attribute("condition", Q.Conditions[M.Failing].Text);
          if (!M.Operands.empty())
            J.attribute("operands", M.Operands);
          if (!M.QueueReason.empty())
            J.attribute("queue_reason", M.QueueReason);
        });
      });
    }
    J.attributeArray("columns", [&] {
      for (const Column &C : Cols)
        J.object([&] {
          J.attribute("name", C.Name);
          const char *Unit = unitOf(C);
          J.attribute("unit", Unit ? std::string(Unit) : C.Dim.str());
        });
      J.object([&] {
        J.attribute("name", "binding_wall");
        J.attribute("unit", "");
      });
    });
    J.attributeArray("rows", [&] {
      for (const GridRow &Row : R.Rows)
        J.array([&] {
          for (size_t K = 0; K < Row.Vars.size(); ++K)
            if (Cols[K].Labels)
              J.value(label(Cols[K], Row.Vars[K]));
            else
              num(Row.Vars[K]);
          for (double X : Row.Values)
            num(X);
          J.value(wallShortName(Row.Binding));
        });
    });
  });
}

std::string bestVsRunnerUp(const Query &Q, const GridResult &R,
                           const std::vector<RowPart> &Parts) {
  if (Q.SortBy.empty() || R.Rows.size() < 2)
    return "";
  const Term &Key = Q.SortBy.front();
  auto keyValue = [&](const GridRow &Row) -> std::optional<double> {
    for (size_t K = 0; K < Q.Report.size(); ++K)
      if (Q.Report[K].Node == Key.Node)
        return Row.Values[K];
    return std::nullopt;
  };
  std::string Out = "best vs runner-up";
  std::optional<double> A = keyValue(R.Rows[0]), B = keyValue(R.Rows[1]);
  if (A && B)
    Out += fmt::format(" ({} {} against {})", Key.Text, show(*A, Key.Dim),
                       show(*B, Key.Dim));
  std::vector<std::string> Why;
  for (const RowPart &P : Parts) {
    double D = P.RunnerUp - P.Best;
    double Scale = std::max(std::fabs(P.Best), std::fabs(P.RunnerUp));
    if (Why.size() == 2 || !(std::fabs(D) > 1e-9 * Scale) || Scale == 0)
      continue;
    Why.push_back(fmt::format("{} is {} ({} against {})", P.Name,
                              D > 0 ? "longer" : "shorter",
                              show(P.RunnerUp, P.Dim), show(P.Best, P.Dim)));
  }
  if (Why.empty()) {
    std::vector<std::string> Differ;
    std::vector<Column> Cols = columnsOf(Q);
    for (size_t K = 0; K < R.Rows[0].Vars.size(); ++K)
      if (R.Rows[0].Vars[K] != R.Rows[1].Vars[K])
        Differ.push_back(Cols[K].Name);
    Out += ": they tie on every part of the step; they differ in " +
           llvm::join(Differ, ", ") + "\n";
    return Out;
  }
  Out += ": the runner-up's " + llvm::join(Why, "; its ") + "\n";
  return Out;
}

std::string gridText(const Query &Q, const GridResult &R) {
  std::vector<Column> Cols = columnsOf(Q);
  std::vector<std::vector<std::string>> Cells;
  std::vector<std::string> Head;
  for (const Column &C : Cols)
    Head.push_back(C.Name);
  Head.push_back("binding wall");
  Cells.push_back(Head);
  for (const GridRow &Row : R.Rows) {
    std::vector<std::string> Line;
    for (size_t K = 0; K < Row.Vars.size(); ++K)
      Line.push_back(Cols[K].Labels ? label(Cols[K], Row.Vars[K])
                                    : show(Row.Vars[K], Cols[K].Dim));
    for (size_t K = 0; K < Row.Values.size(); ++K) {
      const Column &C = Cols[Row.Vars.size() + K];
      Line.push_back(show(Row.Values[K], C.Dim, C.IsBool));
    }
    Line.push_back(wallShortName(Row.Binding));
    Cells.push_back(std::move(Line));
  }
  return alignedColumns(Cells, 0, 3);
}

std::string alignedColumns(const std::vector<std::vector<std::string>> &Rows,
                           unsigned Indent, unsigned Gap) {
  std::vector<size_t> Width;
  for (const auto &Line : Rows) {
    Width.resize(std::max(Width.size(), Line.size()), 0);
    for (size_t K = 0; K < Line.size(); ++K)
      Width[K] = std::max(Width[K], Line[K].size());
  }
  std::string Out;
  for (const auto &Line : Rows) {
    std::string Text(Indent, ' ');
    for (size_t K = 0; K < Line.size(); ++K)
      Text += Line[K] + std::string(Width[K] - Line[K].size() + Gap, ' ');
    Out += llvm::StringRef(Text).rtrim().str() + "\n";
  }
  return Out;
}

TableFormat formatForPath(llvm::StringRef Path) {
  if (Path.endswith_insensitive(".csv"))
    return TableFormat::CSV;
  if (Path.endswith_insensitive(".json"))
    return TableFormat::JSON;
  return TableFormat::Text;
}

} // namespace mlsc::driver
