//===- QueryReport.cpp - Printing solve and sweep results -----------------===//

#include "runtime/QueryReport.h"
#include "runtime/Format.h"
#include "runtime/Report.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>

#include <cmath>
#include <thread>

namespace mlsc {

using json = nlohmann::ordered_json;
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

std::string rangeText(const Variable &V) {
  if (!V.Continuous && V.Values.size() <= 8) {
    std::vector<std::string> Items;
    for (double X : V.Values)
      Items.push_back(show(X, V.Dim));
    return "{" + llvm::join(Items, ", ") + "}";
  }
  return fmt::format("[{}, {}]", show(V.Lo, V.Dim), show(V.Hi, V.Dim));
}

std::string conditionsText(const Query &Q) {
  std::vector<std::string> Texts;
  for (const Term &C : Q.Conditions)
    if (C.Text != "feasible")
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

} // namespace

void printSolve(const Query &Q, const SolveResult &R, const Evaluator &E,
                llvm::raw_ostream &OS) {
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
    OS << "  infeasible    no " << V.Name << " in " << rangeText(V) << " meets "
       << conditionsText(Q) << "\n";
    if (R.FailingCondition >= 0) {
      const Term &C = Q.Conditions[R.FailingCondition];
      std::string Why = comparisonOperands(E, C.Node);
      row(OS, "closest",
          fmt::format("at {}: `{}` fails{}", show(R.Closest, V.Dim), C.Text,
                      Why.empty() ? "" : " (" + Why + ")"));
    }
    if (R.Binding.Known)
      row(OS, "blocked by", bindingText(R.Binding));
    row(OS, "evaluations", fmt::format("{} ({})", R.Evaluations, Monotone));
    return;
  }
  std::string Precision = V.Continuous && !V.Integer
                              ? fmt::format("to {:g}%", 100 * Q.Tolerance)
                              : "exact";
  row(OS, "answer", fmt::format("{}   ({})", show(R.Answer, V.Dim), Precision));
  for (const Term &C : Q.Conditions) {
    std::string Ops = comparisonOperands(E, C.Node);
    row(OS, C.Text == "feasible" ? "feasible" : "holds",
        C.Text == "feasible"
            ? (E.value(C.Node) != 0 ? "yes" : "no")
            : fmt::format("{}{}", C.Text,
                          Ops.empty() ? "" : "  (" + Ops + ")"));
  }
  if (R.LimitingCondition >= 0) {
    const Term &C = Q.Conditions[R.LimitingCondition];
    row(OS, "limited by",
        C.Text == "feasible"
            ? fmt::format("feasibility: at {} the scenario does not fit "
                          "(see `mlsc eval`)",
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

json solveJSON(const Query &Q, const SolveResult &R, const Evaluator &E) {
  const Variable &V = Q.Vars.front();
  json J;
  J["solve"] = Q.Name;
  J["scenario"] = E.graph().Scenario;
  J["variable"] = V.Name;
  J["direction"] = Q.Direction < 0 ? "minimize" : "maximize";
  J["range"] = {{"low", V.Lo}, {"high", V.Hi}, {"unit", V.Dim.str()}};
  J["found"] = R.Found;
  if (R.Found) {
    J["answer"] = {{"value", R.Answer},
                   {"unit", V.Dim.str()},
                   {"display", show(R.Answer, V.Dim)}};
  } else {
    J["answer"] = nullptr;
    J["closest"] = {{"value", R.Closest},
                    {"unit", V.Dim.str()},
                    {"display", show(R.Closest, V.Dim)}};
    if (R.FailingCondition >= 0)
      J["failing_condition"] = Q.Conditions[R.FailingCondition].Text;
  }
  json Conds = json::array();
  for (const Term &C : Q.Conditions)
    Conds.push_back({{"text", C.Text}, {"holds", E.value(C.Node) != 0}});
  J["conditions"] = Conds;
  if (R.Binding.Known)
    J["binding_wall"] = {{"wall", R.Binding.Short},
                         {"number", R.Binding.Number},
                         {"phase", phaseInfo(R.Binding.Phase).Prefix},
                         {"margin", R.Binding.Margin}};
  if (R.LimitingCondition >= 0)
    J["limited_by"] = {{"condition", Q.Conditions[R.LimitingCondition].Text},
                       {"at", R.Beyond}};
  if (!std::isnan(R.ClosedForm))
    J["closed_form"] = {{"value", R.ClosedForm},
                        {"unit", V.Dim.str()},
                        {"rule", R.ClosedFormRule}};
  J["evaluations"] = R.Evaluations;
  J["monotone"] = R.Monotone;
  return J;
}

std::string gridTable(const Query &Q, const GridResult &R,
                      const graph::Graph &G, TableFormat F, unsigned Workers) {
  const std::vector<Term> &Terms =
      Q.K == Query::Kind::Sweep ? Q.Report : Q.Objectives;
  struct Column {
    std::string Name;
    Dimension Dim;
    bool IsBool;
    const std::vector<std::string> *Labels = nullptr; ///< entity options
  };
  std::vector<Column> Cols;
  for (const Variable &V : Q.Vars)
    Cols.push_back({V.Name, V.Dim, false, V.isEntity() ? &V.Labels : nullptr});
  for (const Term &T : Terms)
    Cols.push_back({T.Text, T.Dim, T.IsBool});
  auto label = [&](size_t Col, double X) -> const std::string & {
    return (*Cols[Col].Labels)[static_cast<size_t>(X)];
  };
  std::string Out;
  if (F == TableFormat::CSV) {
    std::vector<std::string> Head;
    for (const Column &C : Cols)
      Head.push_back(
          csvField(C.Dim.isDimensionless() || C.IsBool || C.Labels
                       ? C.Name
                       : fmt::format("{} [{}]", C.Name, C.Dim.str())));
    Head.push_back("binding_wall");
    Out += llvm::join(Head, ",") + "\n";
    // Large tables are formatted in chunks on every core, then joined in
    // order: the bytes do not depend on the thread count.
    auto format = [&](size_t Begin, size_t End, std::string &Text) {
      fmt::memory_buffer B;
      for (size_t I = Begin; I < End; ++I) {
        const GridRow &Row = R.Rows[I];
        for (size_t K = 0; K < Row.Vars.size(); ++K)
          if (Cols[K].Labels)
            fmt::format_to(std::back_inserter(B), "{},",
                           csvField(label(K, Row.Vars[K])));
          else
            fmt::format_to(std::back_inserter(B), "{},", Row.Vars[K]);
        for (double X : Row.Values)
          fmt::format_to(std::back_inserter(B), "{},", X);
        fmt::format_to(std::back_inserter(B), "{}\n",
                       wallShortName(Row.Binding));
      }
      Text.assign(B.data(), B.size());
    };
    size_t N = R.Rows.size();
    unsigned Threads = N < 65536 ? 1 : std::max(1u, Workers);
    std::vector<std::string> Parts(Threads);
    std::vector<std::thread> Pool;
    size_t Chunk = (N + Threads - 1) / Threads;
    for (unsigned T = 1; T < Threads; ++T)
      Pool.emplace_back([&, T] {
        format(std::min(N, T * Chunk), std::min(N, (T + 1) * Chunk), Parts[T]);
      });
    format(0, std::min(N, Chunk), Parts[0]);
    for (std::thread &W : Pool)
      W.join();
    size_t Size = Out.size();
    for (const std::string &P : Parts)
      Size += P.size();
    Out.reserve(Size);
    for (const std::string &P : Parts)
      Out += P;
    return Out;
  }
  if (F == TableFormat::JSON) {
    fmt::memory_buffer B;
    auto Str = [](const std::string &S) { return json(S).dump(); };
    fmt::format_to(std::back_inserter(B),
                   "{{\n  \"{}\": {},\n  \"scenario\": {},\n  \"points\": "
                   "{},\n  \"kept\": {},\n  \"columns\": [",
                   Q.K == Query::Kind::Sweep ? "sweep" : "solve", Str(Q.Name),
                   Str(G.Scenario), R.Points, R.Kept);
    for (size_t K = 0; K < Cols.size(); ++K)
      fmt::format_to(std::back_inserter(B), "{}{{\"name\": {}, \"unit\": {}}}",
                     K ? ", " : "", Str(Cols[K].Name),
                     Str(Cols[K].Labels   ? "entity"
                         : Cols[K].IsBool ? "bool"
                                          : Cols[K].Dim.str()));
    fmt::format_to(std::back_inserter(B),
                   ", {{\"name\": \"binding_wall\", \"unit\": \"\"}}],\n  "
                   "\"rows\": [");
    for (size_t I = 0; I < R.Rows.size(); ++I) {
      const GridRow &Row = R.Rows[I];
      fmt::format_to(std::back_inserter(B), "{}\n    [", I ? "," : "");
      bool First = true;
      auto num = [&](double X) {
        if (std::isfinite(X))
          fmt::format_to(std::back_inserter(B), "{}{}", First ? "" : ", ", X);
        else
          fmt::format_to(std::back_inserter(B), "{}null", First ? "" : ", ");
        First = false;
      };
      for (size_t K = 0; K < Row.Vars.size(); ++K) {
        if (Cols[K].Labels) {
          fmt::format_to(std::back_inserter(B), "{}{}", First ? "" : ", ",
                         Str(label(K, Row.Vars[K])));
          First = false;
        } else {
          num(Row.Vars[K]);
        }
      }
      for (double X : Row.Values)
        num(X);
      fmt::format_to(std::back_inserter(B), ", \"{}\"]",
                     wallShortName(Row.Binding));
    }
    fmt::format_to(std::back_inserter(B), "{}]\n}}\n",
                   R.Rows.empty() ? "" : "\n  ");
    Out.append(B.data(), B.size());
    return Out;
  }
  // Text: aligned columns of display values.
  std::vector<std::vector<std::string>> Cells;
  std::vector<std::string> Head;
  for (const Column &C : Cols)
    Head.push_back(C.Name);
  Head.push_back("binding wall");
  Cells.push_back(Head);
  for (const GridRow &Row : R.Rows) {
    std::vector<std::string> Line;
    for (size_t K = 0; K < Row.Vars.size(); ++K)
      Line.push_back(Cols[K].Labels ? label(K, Row.Vars[K])
                                    : show(Row.Vars[K], Cols[K].Dim));
    for (size_t K = 0; K < Row.Values.size(); ++K) {
      const Column &C = Cols[Row.Vars.size() + K];
      Line.push_back(show(Row.Values[K], C.Dim, C.IsBool));
    }
    Line.push_back(wallShortName(Row.Binding));
    Cells.push_back(std::move(Line));
  }
  std::vector<size_t> Width(Head.size(), 0);
  for (const auto &Line : Cells)
    for (size_t K = 0; K < Line.size(); ++K)
      Width[K] = std::max(Width[K], Line[K].size());
  for (const auto &Line : Cells) {
    std::string Text;
    for (size_t K = 0; K < Line.size(); ++K) {
      Text += Line[K];
      if (K + 1 < Line.size())
        Text += std::string(Width[K] - Line[K].size() + 3, ' ');
    }
    Out += Text + "\n";
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

bool writeFileAtomically(llvm::StringRef Path, llvm::StringRef Contents,
                         std::string &Error) {
  llvm::SmallString<256> Model(Path);
  Model += ".tmp-%%%%%%";
  int FD;
  llvm::SmallString<256> Temp;
  if (std::error_code EC = llvm::sys::fs::createUniqueFile(Model, FD, Temp)) {
    Error = fmt::format("cannot create a file next to `{}`: {}", Path.str(),
                        EC.message());
    return false;
  }
  {
    llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
    OS << Contents;
    OS.close(); // errors surface at close too (a full disk, a quota)
    if (OS.has_error()) {
      Error = fmt::format("cannot write `{}`: {}", Temp.str().str(),
                          OS.error().message());
      OS.clear_error();
      llvm::sys::fs::remove(Temp);
      return false;
    }
  }
  if (std::error_code EC = llvm::sys::fs::rename(Temp, Path)) {
    Error = fmt::format("cannot replace `{}`: {}", Path.str(), EC.message());
    llvm::sys::fs::remove(Temp);
    return false;
  }
  return true;
}

} // namespace mlsc
