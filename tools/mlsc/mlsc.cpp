//===- mlsc.cpp - The mlsc driver -----------------------------------------===//
//
// Reads a command and options, runs the pipeline, evaluates, prints what was
// asked. Exit codes:
//   0  success (for `check`: every condition holds)
//   1  the input has errors (diagnostics were printed)
//   2  usage error (bad option, missing file argument, unknown metric)
//   3  `check`: a condition failed or could not be evaluated
// Documented in docs/driver.md.
//
//===----------------------------------------------------------------------===//

#include "frontend/Verifier.h"
#include "ir/Units.h"
#include "passes/Pipeline.h"
#include "runtime/Audit.h"
#include "runtime/Evaluator.h"
#include "runtime/Report.h"
#include "runtime/walls/Formulas.h"
#include "tools/mlsc/Driver.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <ctime>

namespace mlsc::driver {

std::unique_ptr<Compilation>
compileForEval(const DriverOptions &O,
               std::unique_ptr<llvm::MemoryBuffer> Buf) {
  auto C = std::make_unique<Compilation>();
  C->Options = O.Compile;
  bool OK = compile(*C, std::move(Buf));
  C->Diags.flush(llvm::errs());
  return OK ? std::move(C) : nullptr;
}

} // namespace mlsc::driver

namespace {

using namespace mlsc;
using namespace mlsc::driver;

const char *const HelpText = R"(usage: mlsc [COMMAND] [options] FILE

commands:
  compile FILE            (the default) compile and print the typed IR
  eval FILE               evaluate every scenario of FILE: a scorecard each
  check FILE              evaluate every SLA condition and assert; exit 3 when
                          one fails or cannot be evaluated
  explain FILE SCENARIO.METRIC
                          the derivation of one value down to its literals;
                          --leaves lists just the values it depends on
  solve FILE [NAME]       run the file's solve blocks (or one): the smallest
                          or largest value of a leaf that meets conditions,
                          or a Pareto front; exit 3 when one has no answer
  sweep FILE [NAME]       run the file's sweep blocks: a table of every
                          point, filtered, sorted, on every core
  sensitivity FILE SCENARIO[.METRIC]
                          elasticities of the metrics with respect to every
                          input, and where each calibrated factor's plausible
                          range flips the binding wall
  walls                   the 22 walls: equation, citation, status
  audit [PATH...]         every value in PATH (files or folders; default:
                          the bundled registries) with its source; flags
                          values without a source (exit 3), estimates, and
                          sources not verified in --max-age-years (2)

FILE may be `-` for stdin.

options:
  --format=text|json      output format of eval, check, explain, walls;
                          audit also takes csv
  --leaves                explain: list only the values it depends on
  --jobs=N                sweep, solve over a grid: threads (default: every
                          core); the output does not depend on it
  --output=FILE           sweep: write the table to FILE (atomically) in the
                          format its extension names (.csv, .json, text)
  --no-progress           sweep: no progress bar on stderr
  --as-of=YYYY-MM-DD      audit: the date staleness is judged from (today)
  --emit=KIND             compile: tokens, ast, ir (default) or graph
  --print-ir-after=PASS   print the IR after PASS (or `all`) to stdout
  --print-imported        include imported modules' entities in IR dumps
  --verify-diagnostics    check diagnostics against `# expected-...` comments;
                          `# -----` lines split FILE into independent cases
  -I DIR                  search DIR for imported modules (repeatable)
  --data-dir=DIR          where stdlib/ and registries/ live
                          (default: $MLSC_DATA_DIR, then the install tree)
  --no-prelude            do not import stdlib/prelude.mls implicitly
  --list-diagnostics      list every diagnostic kind
  --list-passes           list the pipeline's passes
  --list-units            list the unit table
  --list-schemas          list every entity kind with its fields and metrics
  --list-formulas         list every formula of the wall tables
  --list-metrics          list every metric of the graph contract
  --version               print the version
  --help                  print this help

exit codes: 0 success, 1 errors in the input, 2 usage error,
            3 a checked condition failed or could not be evaluated
)";

int usage(const std::string &Message) {
  llvm::errs() << "mlsc: error: " << Message << "\n"
               << "run `mlsc --help` for usage\n";
  return UsageError;
}

/// Parses argv; returns an exit code on failure, or -1 to continue.
int parseArgs(int Argc, char **Argv, DriverOptions &O) {
  for (int I = 1; I < Argc; ++I) {
    llvm::StringRef A = Argv[I];
    auto value = [&](llvm::StringRef Flag, std::string &Out) {
      if (A.consume_front(Flag)) {
        if (A.consume_front("=")) {
          Out = A.str();
          return true;
        }
        if (A.empty() && I + 1 < Argc) {
          Out = Argv[++I];
          return true;
        }
      }
      return false;
    };
    std::string V;
    if (A == "--help" || A == "-h") {
      O.Help = true;
    } else if (A == "--version") {
      O.Version = true;
    } else if (A == "--verify-diagnostics") {
      O.Verify = true;
    } else if (A == "--leaves") {
      O.Leaves = true;
    } else if (A == "--no-progress") {
      O.Progress = false;
    } else if (value("--jobs", V)) {
      if (llvm::StringRef(V).getAsInteger(10, O.Jobs) || O.Jobs < 1 ||
          O.Jobs > 1024)
        return usage("--jobs needs a whole number of threads, 1-1024");
    } else if (value("--output", V)) {
      O.Output = V;
    } else if (A == "--no-prelude") {
      O.Compile.LoadPrelude = false;
    } else if (A == "--print-imported") {
      O.Compile.PrintImported = true;
    } else if (A.startswith("--list-")) {
      O.ListWhat = A.drop_front(7).str();
    } else if (A.startswith("-I")) {
      std::string Dir = A.drop_front(2).str();
      if (Dir.empty()) {
        if (I + 1 >= Argc)
          return usage("`-I` needs a directory");
        Dir = Argv[++I];
      }
      O.Compile.IncludeDirs.push_back(Dir);
    } else if (value("--emit", V)) {
      if (V != "tokens" && V != "ast" && V != "ir" && V != "graph")
        return usage("unknown --emit kind `" + V +
                     "`; expected tokens, ast, ir or graph");
      O.Emit = V;
    } else if (value("--format", V)) {
      if (V != "text" && V != "json" && V != "csv")
        return usage("unknown --format `" + V +
                     "`; expected text, json or csv (audit)");
      O.Json = V == "json";
      O.Csv = V == "csv";
    } else if (value("--max-age-years", V)) {
      if (llvm::StringRef(V).getAsInteger(10, O.MaxAgeYears) ||
          O.MaxAgeYears < 0 || O.MaxAgeYears > 100)
        return usage("--max-age-years needs a whole number of years, 0-100");
    } else if (value("--as-of", V)) {
      if (V.size() != 10 || V[4] != '-' || V[7] != '-')
        return usage("--as-of needs a date YYYY-MM-DD");
      O.AsOf = V;
    } else if (value("--print-ir-after", V)) {
      bool Known = V == "all";
      for (const PassInfo &P : allPasses())
        Known = Known || V == P.Flag;
      if (!Known) {
        std::vector<std::string> Names;
        for (const PassInfo &P : allPasses())
          Names.push_back(P.Flag);
        return usage("unknown pass `" + V + "`; the passes are " +
                     llvm::join(Names, ", "));
      }
      O.Compile.PrintIRAfter = V;
    } else if (value("--data-dir", V)) {
      O.Compile.DataDir = V;
    } else if (A.startswith("-") && A != "-") {
      return usage("unknown option `" + A.str() + "`");
    } else if (I == 1 && (A == "compile" || A == "eval" || A == "check" ||
                          A == "explain" || A == "walls" || A == "audit" ||
                          A == "solve" || A == "sweep" || A == "sensitivity")) {
      O.Command = A.str();
    } else if (O.Command == "audit") {
      O.AuditPaths.push_back(A.str());
    } else if (O.Input.empty()) {
      O.Input = A.str();
    } else if ((O.Command == "explain" || O.Command == "sensitivity") &&
               O.Metric.empty()) {
      O.Metric = A.str();
    } else if ((O.Command == "solve" || O.Command == "sweep") &&
               O.QueryName.empty()) {
      O.QueryName = A.str();
    } else {
      return usage("unexpected argument `" + A.str() + "`");
    }
  }
  return -1;
}

int list(const std::string &What) {
  llvm::raw_ostream &OS = llvm::outs();
  if (What == "diagnostics") {
    for (const DiagKindInfo &K : allDiagKinds())
      OS << K.Name << "\t"
         << (K.Level == Severity::Error     ? "error"
             : K.Level == Severity::Warning ? "warning"
                                            : "note")
         << "\t" << K.Summary << "\n";
  } else if (What == "formulas") {
    for (const Formula &F : allFormulas()) {
      const WallInfo *W = wallInfo(F.W);
      OS << W->Number << "\t" << W->Name << "\t" << F.Name << "\t"
         << (F.isLibrary() ? "library" : "lowered") << "\t" << F.File << "\t"
         << F.Function << "\t" << F.Equation << "\t" << F.Citation << "\t"
         << (F.isLibrary() ? F.LibraryReason : "") << "\n";
    }
  } else if (What == "metrics") {
    for (const MetricInfo &M : allMetrics())
      OS << M.Name << "\t" << M.Unit << "\t" << static_cast<unsigned>(M.W)
         << "\t" << (M.Vis == Visibility::Public ? "public" : "internal")
         << "\t" << M.Doc << "\n";
    for (const PhaseInfo &P : allPhases())
      for (const PhaseMetricInfo &M : allPhaseMetrics())
        OS << P.Prefix << "." << M.Suffix << "\t" << M.Unit << "\t"
           << static_cast<unsigned>(M.W) << "\tphase\t" << M.Doc << "\n";
  } else if (What == "passes") {
    for (const PassInfo &P : allPasses())
      OS << P.Flag << "\t" << P.Summary << "\n";
  } else if (What == "units") {
    for (const UnitTableRow &U : unitTable())
      OS << U.Symbol << "\t" << U.Prefixes << "\t"
         << fmt::format("{:.12g}", U.Scale) << " " << U.Dim.str() << "\t"
         << U.Meaning << "\n";
  } else if (What == "schemas") {
    for (const KindSchema &K : allKinds()) {
      OS << K.Name << "\t" << K.Doc << "\n";
      if (!K.VariantField.empty())
        OS << "  variants of `" << K.VariantField
           << "`: " << llvm::join(K.Variants, ", ") << "\n";
      for (const FieldSchema &F : K.Fields)
        OS << "  field " << F.Path << "\t" << describeFieldType(F)
           << (F.Required ? "\trequired" : "\toptional") << "\t" << F.Doc
           << "\n";
      for (const MetricSchema &M : K.Metrics)
        OS << "  metric " << M.Path << "\t"
           << (M.IsBool ? std::string("true or false") : M.Dim.describe())
           << "\t" << M.Doc << "\n";
    }
  } else {
    return usage("unknown list `--list-" + What +
                 "`; expected diagnostics, passes, units, schemas, formulas "
                 "or metrics");
  }
  return Success;
}

std::unique_ptr<llvm::MemoryBuffer> readInput(const std::string &Path,
                                              std::string &Error) {
  auto Buf =
      llvm::MemoryBuffer::getFileOrSTDIN(Path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/true);
  if (!Buf) {
    Error = Buf.getError().message();
    return nullptr;
  }
  return std::move(*Buf);
}

/// Compiles one buffer and prints what was asked; returns the exit code.
int compileAndEmit(const DriverOptions &O,
                   std::unique_ptr<llvm::MemoryBuffer> Buf) {
  Compilation C;
  C.Options = O.Compile;
  C.DumpStream = &llvm::outs();
  if (O.Emit == "tokens" || O.Emit == "ast") {
    unsigned Id = C.SM.AddNewSourceBuffer(std::move(Buf), llvm::SMLoc());
    if (O.Emit == "tokens") {
      dumpTokens(Id, C.Diags, llvm::outs(), C.Options.Limits);
    } else {
      std::unique_ptr<ast::Module> M =
          parseModule(Id, C.Diags, C.Options.Limits);
      if (!C.Diags.hasErrors())
        printAST(*M, C.SM, llvm::outs());
    }
    llvm::outs().flush();
    C.Diags.flush(llvm::errs());
    return C.Diags.hasErrors() ? InputErrors : Success;
  }
  bool OK = compile(C, std::move(Buf));
  if (OK && C.Options.PrintIRAfter.empty()) {
    if (O.Emit == "graph")
      for (const graph::Graph &G : C.Graphs)
        printGraph(G, C.SM, llvm::outs());
    else
      ir::printProgram(C.Program, C.SM, llvm::outs(), C.Options.PrintImported);
  }
  llvm::outs().flush();
  C.Diags.flush(llvm::errs());
  return OK ? Success : InputErrors;
}

int eval(const DriverOptions &O, std::unique_ptr<llvm::MemoryBuffer> Buf) {
  std::unique_ptr<Compilation> C = compileForEval(O, std::move(Buf));
  if (!C)
    return InputErrors;
  nlohmann::ordered_json All = nlohmann::ordered_json::array();
  for (size_t I = 0; I < C->Graphs.size(); ++I) {
    Evaluator E(C->Graphs[I]);
    E.run();
    if (O.Json) {
      All.push_back(scorecardJSON(E, C->SM));
      continue;
    }
    if (I)
      llvm::outs() << "\n";
    printScorecard(E, C->SM, llvm::outs());
  }
  // Asserts over constants only were decided at compile time.
  nlohmann::ordered_json Asserts = nlohmann::ordered_json::array();
  bool Header = false;
  for (const ir::Assert &A : C->Program.Asserts) {
    if (!A.Folded)
      continue;
    std::string Text = ir::sourceText(A.Condition->Range);
    bool Holds = A.Folded->Number != 0;
    std::string Where = location(C->SM, A.Range);
    if (O.Json) {
      Asserts.push_back({{"text", Text},
                         {"location", Where},
                         {"verdict", Holds ? "pass" : "fail"}});
      continue;
    }
    if (!Header)
      llvm::outs() << (C->Graphs.empty() ? "" : "\n") << "Asserts\n";
    Header = true;
    llvm::outs() << "  " << Text << "   " << (Holds ? "PASS" : "FAIL") << "  "
                 << Where << "\n";
  }
  if (O.Json)
    llvm::outs() << nlohmann::ordered_json{{"scenarios", All},
                                           {"asserts", Asserts}}
                        .dump(2)
                 << "\n";
  else if (C->Graphs.empty() && !Header)
    llvm::outs() << "no scenario to evaluate in " << O.Input << "\n";
  return Success;
}

int check(const DriverOptions &O, std::unique_ptr<llvm::MemoryBuffer> Buf) {
  std::unique_ptr<Compilation> C = compileForEval(O, std::move(Buf));
  if (!C)
    return InputErrors;
  unsigned Pass = 0, Fail = 0, Unknown = 0;
  nlohmann::ordered_json Results = nlohmann::ordered_json::array();
  for (const ir::Assert &A : C->Program.Asserts) {
    if (!A.Folded)
      continue;
    bool Holds = A.Folded->Number != 0;
    (Holds ? Pass : Fail)++;
    std::string Where = location(C->SM, A.Range);
    std::string Text = ir::sourceText(A.Condition->Range);
    if (O.Json) {
      nlohmann::ordered_json J{{"scenario", nullptr},
                               {"kind", "assert"},
                               {"text", Text},
                               {"location", Where},
                               {"verdict", Holds ? "pass" : "fail"}};
      if (!A.Message.empty())
        J["message"] = A.Message;
      Results.push_back(J);
      continue;
    }
    llvm::outs() << Where << ": " << (Holds ? "PASS" : "FAIL") << " assert `"
                 << Text << "`";
    if (!A.Message.empty())
      llvm::outs() << " \"" << A.Message << "\"";
    llvm::outs() << "\n";
  }
  for (const graph::Graph &G : C->Graphs) {
    Evaluator E(G);
    E.run();
    bool Feasible =
        !G.has(MetricId::Feasible) || E.value(MetricId::Feasible) != 0;
    if (!Feasible) {
      ++Fail;
      std::string Where =
          location(C->SM, C->Program.entity(G.Scenario)->NameRange);
      if (O.Json)
        Results.push_back({{"scenario", G.Scenario},
                           {"kind", "feasibility"},
                           {"location", Where},
                           {"verdict", "fail"}});
      else
        llvm::outs() << Where << ": FAIL scenario " << G.Scenario
                     << " is infeasible (run `mlsc eval` for the reason)\n";
    }
    for (const graph::Condition &Cond : G.Conditions) {
      Verdict V = Feasible ? verdict(Cond, E) : Verdict::Unknown;
      (V == Verdict::Pass ? Pass : V == Verdict::Fail ? Fail : Unknown)++;
      const char *Word = V == Verdict::Pass   ? "PASS"
                         : V == Verdict::Fail ? "FAIL"
                                              : "UNKNOWN";
      std::string Where = location(C->SM, Cond.Range);
      std::string Why = !Cond.At ? "`" + Cond.Missing + "` is not computed yet"
                        : !Feasible ? "the scenario is infeasible"
                                    : "";
      if (O.Json) {
        nlohmann::ordered_json J{{"scenario", G.Scenario},
                                 {"kind", Cond.IsAssert ? "assert" : "sla"},
                                 {"text", Cond.Text},
                                 {"location", Where},
                                 {"verdict", llvm::StringRef(Word).lower()}};
        if (!Why.empty())
          J["reason"] = Why;
        if (!Cond.Message.empty())
          J["message"] = Cond.Message;
        Results.push_back(J);
        continue;
      }
      llvm::outs() << Where << ": " << Word << " "
                   << (Cond.IsAssert ? "assert" : "sla") << " `" << Cond.Text
                   << "`";
      if (!Cond.Message.empty())
        llvm::outs() << " \"" << Cond.Message << "\"";
      if (!Why.empty())
        llvm::outs() << ": " << Why;
      llvm::outs() << "\n";
    }
  }
  if (O.Json)
    llvm::outs() << nlohmann::ordered_json{{"results", Results},
                                           {"pass", Pass},
                                           {"fail", Fail},
                                           {"unknown", Unknown}}
                        .dump(2)
                 << "\n";
  else
    llvm::outs() << Pass << " passed, " << Fail << " failed, " << Unknown
                 << " unknown\n";
  return Fail || Unknown ? CheckFailed : Success;
}

int explain(const DriverOptions &O, std::unique_ptr<llvm::MemoryBuffer> Buf) {
  if (O.Metric.empty())
    return usage("explain needs SCENARIO.METRIC after the file");
  std::unique_ptr<Compilation> C = compileForEval(O, std::move(Buf));
  if (!C)
    return InputErrors;
  auto [Scenario, Metric] = llvm::StringRef(O.Metric).split('.');
  for (const graph::Graph &G : C->Graphs) {
    if (G.Scenario != Scenario)
      continue;
    std::optional<graph::NodeId> Node = G.findNamed(Metric);
    if (!Node) {
      std::vector<std::string> Names;
      for (const auto &Entry : G.Named)
        Names.push_back(Entry.getKey().str());
      std::sort(Names.begin(), Names.end());
      return usage(fmt::format("scenario `{}` has no value `{}`; it has: {}",
                               Scenario.str(), Metric.str(),
                               llvm::join(Names, ", ")));
    }
    Evaluator E(G);
    E.run();
    graph::NodeId Id = *Node;
    unsigned Main = C->Program.MainBufferId;
    if (O.Leaves && O.Json)
      llvm::outs() << leavesJSON(E, Id, C->SM, Main).dump(2) << "\n";
    else if (O.Leaves)
      printLeaves(E, Id, C->SM, Main, llvm::outs());
    else if (O.Json)
      llvm::outs() << explainJSON(E, Id, C->SM).dump(2) << "\n";
    else
      printExplain(E, Id, C->SM, llvm::outs());
    return Success;
  }
  std::vector<std::string> Names;
  for (const graph::Graph &G : C->Graphs)
    Names.push_back(G.Scenario);
  return usage(fmt::format("no scenario `{}` in {}; scenarios: {}",
                           Scenario.str(), O.Input,
                           Names.empty() ? "none" : llvm::join(Names, ", ")));
}

/// Every .mls file under \p Path (a file or a folder), sorted.
void expandPath(const std::string &Path, std::vector<std::string> &Out) {
  if (!llvm::sys::fs::is_directory(Path)) {
    Out.push_back(Path);
    return;
  }
  std::error_code EC;
  std::vector<std::string> Found;
  for (llvm::sys::fs::recursive_directory_iterator It(Path, EC), End;
       It != End && !EC; It.increment(EC))
    if (llvm::StringRef(It->path()).endswith(".mls"))
      Found.push_back(It->path());
  std::sort(Found.begin(), Found.end());
  Out.insert(Out.end(), Found.begin(), Found.end());
}

std::string today() {
  std::time_t Now = std::time(nullptr);
  std::tm UTC{};
  gmtime_r(&Now, &UTC);
  return fmt::format("{:04}-{:02}-{:02}", UTC.tm_year + 1900, UTC.tm_mon + 1,
                     UTC.tm_mday);
}

int audit(const DriverOptions &O) {
  std::vector<std::string> Files;
  std::vector<std::string> Roots = O.AuditPaths;
  if (Roots.empty())
    Roots.push_back(O.Compile.DataDir + "/registries");
  for (const std::string &R : Roots) {
    if (!llvm::sys::fs::exists(R)) {
      llvm::errs() << R << ": error: no such file or folder [FileNotFound]\n";
      return InputErrors;
    }
    expandPath(R, Files);
  }
  std::string AsOf = O.AsOf.empty() ? today() : O.AsOf;
  int Year = std::stoi(AsOf.substr(0, 4)) - O.MaxAgeYears;
  std::string Cutoff = fmt::format("{:04}", Year) + AsOf.substr(4);
  std::vector<std::unique_ptr<Compilation>> Kept;
  std::vector<AuditRecord> Records;
  bool Errors = false;
  std::string Prefix = O.Compile.DataDir + "/";
  for (const std::string &F : Files) {
    std::string Error;
    std::unique_ptr<llvm::MemoryBuffer> Buf = readInput(F, Error);
    if (!Buf) {
      llvm::errs() << F << ": error: cannot read file: " << Error
                   << " [FileNotFound]\n";
      Errors = true;
      continue;
    }
    auto C = std::make_unique<Compilation>();
    C->Options = O.Compile;
    if (!compile(*C, std::move(Buf)))
      Errors = true;
    C->Diags.flush(llvm::errs());
    std::string Shown =
        llvm::StringRef(F).startswith(Prefix) ? F.substr(Prefix.size()) : F;
    size_t First = Records.size();
    collectAudit(C->Program, C->SM, C->Program.MainBufferId, Shown, Cutoff,
                 Records);
    // File order reads best: by line within each file.
    std::stable_sort(Records.begin() + First, Records.end(),
                     [](const AuditRecord &A, const AuditRecord &B) {
                       return A.Line < B.Line;
                     });
    Kept.push_back(std::move(C));
  }
  if (O.Json)
    llvm::outs() << auditJSON(Records).dump(2) << "\n";
  else if (O.Csv)
    printAuditCSV(Records, llvm::outs());
  else
    printAuditText(Records, Cutoff, llvm::outs());
  if (Errors)
    return InputErrors;
  return summarize(Records).Unsourced ? CheckFailed : Success;
}

/// `--verify-diagnostics`: each `# -----` case compiles on its own, with
/// the other cases' lines blanked so line numbers stay those of the file.
int verify(const DriverOptions &O, std::unique_ptr<llvm::MemoryBuffer> Buf) {
  llvm::StringRef Text = Buf->getBuffer();
  std::vector<std::pair<size_t, size_t>> Cases; // [begin, end) byte offsets
  size_t CaseBegin = 0;
  for (size_t LineStart = 0; LineStart < Text.size();) {
    size_t LineEnd = Text.find('\n', LineStart);
    if (LineEnd == llvm::StringRef::npos)
      LineEnd = Text.size();
    if (Text.slice(LineStart, LineEnd).trim() == "# -----") {
      Cases.emplace_back(CaseBegin, LineStart);
      CaseBegin = LineEnd;
    }
    LineStart = LineEnd + 1;
  }
  Cases.emplace_back(CaseBegin, Text.size());
  bool AllOK = true;
  for (auto [Begin, End] : Cases) {
    std::string CaseText;
    for (size_t I = 0; I < Text.size(); ++I)
      if ((I >= Begin && I < End) || Text[I] == '\n')
        CaseText += Text[I];
    Compilation C;
    C.Options = O.Compile;
    compile(C, llvm::MemoryBuffer::getMemBufferCopy(
                   CaseText, Buf->getBufferIdentifier()));
    DiagnosticEngine Out(C.SM);
    if (!verifyDiagnostics(C.Program.MainBufferId, C.Diags, Out)) {
      AllOK = false;
      Out.flush(llvm::errs());
    }
  }
  return AllOK ? Success : InputErrors;
}

} // namespace

int main(int Argc, char **Argv) {
  llvm::InitLLVM X(Argc, Argv);
  DriverOptions O;
  if (int Code = parseArgs(Argc, Argv, O); Code >= 0)
    return Code;
  if (O.Help) {
    llvm::outs() << HelpText;
    return Success;
  }
  if (O.Version) {
    llvm::outs() << "mlsc " << MLSC_VERSION << "\n";
    return Success;
  }
  if (!O.ListWhat.empty())
    return list(O.ListWhat);
  if (O.Command == "audit") {
    if (O.Compile.DataDir.empty())
      O.Compile.DataDir = defaultDataDir(Argv[0]);
    return audit(O);
  }
  if (O.Command == "walls") {
    if (O.Json)
      llvm::outs() << wallsJSON().dump(2) << "\n";
    else
      printWalls(llvm::outs());
    return Success;
  }
  if (O.Input.empty())
    return usage("no input file");
  if (O.Compile.DataDir.empty())
    O.Compile.DataDir = defaultDataDir(Argv[0]);
  std::string Error;
  std::unique_ptr<llvm::MemoryBuffer> Buf = readInput(O.Input, Error);
  if (!Buf) {
    llvm::errs() << O.Input << ": error: cannot read file: " << Error
                 << " [FileNotFound]\n";
    return InputErrors;
  }
  if (O.Verify)
    return verify(O, std::move(Buf));
  if (O.Command == "eval")
    return eval(O, std::move(Buf));
  if (O.Command == "check")
    return check(O, std::move(Buf));
  if (O.Command == "explain")
    return explain(O, std::move(Buf));
  if (O.Command == "solve")
    return solve(O, std::move(Buf));
  if (O.Command == "sweep")
    return sweep(O, std::move(Buf));
  if (O.Command == "sensitivity") {
    if (O.Metric.empty())
      return usage("sensitivity needs a scenario: `mlsc sensitivity FILE "
                   "SCENARIO[.METRIC]`");
    return sensitivity(O, std::move(Buf));
  }
  return compileAndEmit(O, std::move(Buf));
}
