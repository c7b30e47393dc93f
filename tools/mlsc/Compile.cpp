//===- Compile.cpp - `mlsc compile`, --verify-diagnostics and --list-* ----===//

#include "tools/mlsc/Driver.h"
#include "tools/mlsc/Render.h"

#include "frontend/Verifier.h"
#include "ir/Units.h"
#include "runtime/Defaults.h"
#include "runtime/walls/Formulas.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <algorithm>

namespace mlsc::driver {

int compileCommand(const DriverOptions &O,
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

/// `--verify-diagnostics`: each `# -----` case compiles on its own, with
/// the other cases' lines blanked so line numbers stay those of the file.
int verifyCommand(const DriverOptions &O,
                  std::unique_ptr<llvm::MemoryBuffer> Buf) {
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
  // A case is its own text after the earlier cases' lines, blanked, so
  // that its line numbers are the file's: the newlines before it are
  // counted once, not copied character by character per case (20,000
  // cases took a minute).
  bool AllOK = true;
  size_t Before = 0, Scanned = 0;
  for (auto [Begin, End] : Cases) {
    Before += Text.slice(Scanned, Begin).count('\n');
    Scanned = Begin;
    llvm::StringRef Own = Text.slice(Begin, End);
    std::string CaseText(Before, '\n');
    CaseText.append(Own.data(), Own.size());
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

namespace {

const char *appliesWord(Applies A) {
  switch (A) {
  case Applies::Tokens:
    return "decoder inference";
  case Applies::TokensOnInput:
    return "decoder inference, given its input";
  case Applies::Samples:
    return "CNN and encoder models";
  case Applies::Training:
    return "training";
  case Applies::DecoderTraining:
    return "decoder training";
  case Applies::All:
    return "every workload";
  case Applies::TrainingOnInput:
    return "training, given its input";
  case Applies::OnNode:
    return "a system of nodes";
  case Applies::Priced:
    return "a system with a site or a rental price";
  case Applies::OnSite:
    return "a cluster with a site";
  case Applies::Simulated:
    return "a serving scenario with a `simulate` block";
  }
  return "";
}

const char *levelWord(Level L) {
  switch (L) {
  case Level::Feasibility:
    return "feasibility";
  case Level::Performance:
    return "performance";
  case Level::Macro:
    return "macro";
  case Level::None:
    return "";
  }
  return "";
}

} // namespace

int listCommand(const std::string &What) {
  llvm::raw_ostream &OS = llvm::outs();
  if (What == "diagnostics") {
    for (const DiagKindInfo &K : allDiagKinds())
      OS << K.Name << "\t"
         << (K.Level == Severity::Error     ? "error"
             : K.Level == Severity::Warning ? "warning"
                                            : "note")
         << "\t" << K.Summary << "\n";
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
           << (F.Domain == ValueDomain::Any
                   ? std::string()
                   : std::string(": ") + describeDomain(F.Domain))
           << (F.Required           ? "\trequired"
               : F.OnlyMode.empty() ? "\toptional"
                                    : "\toptional, " + F.OnlyMode + " only")
           << "\t" << F.Doc << "\n";
      for (const MetricSchema &M : K.Metrics)
        OS << "  metric " << M.Path << "\t"
           << (M.IsBool ? std::string("true or false") : M.Dim.describe())
           << "\t" << M.Doc << "\n";
    }
  } else if (What == "formulas") {
    // In wall order; within a wall, in its table's order.
    std::vector<const Formula *> ByWall;
    for (const Formula &F : allFormulas())
      ByWall.push_back(&F);
    std::stable_sort(ByWall.begin(), ByWall.end(),
                     [](const Formula *A, const Formula *B) {
                       return wallInfo(A->W)->Number < wallInfo(B->W)->Number;
                     });
    for (const Formula *FP : ByWall) {
      const Formula &F = *FP;
      const WallInfo *W = wallInfo(F.W);
      OS << W->Number << "\t" << W->Name << "\t" << F.Name << "\t"
         << (F.isLibrary() ? "library" : "lowered") << "\t" << F.File << "\t"
         << F.Function << "\t" << F.Equation << "\t" << F.Citation << "\t"
         << (F.isLibrary() ? F.LibraryReason : "") << "\n";
    }
  } else if (What == "options") {
    OS << optionsTable();
  } else if (What == "defaults") {
    auto Number = [](double X) {
      return std::isnan(X) ? std::string("") : fmt::format("{:.6g}", X);
    };
    for (const DefaultInfo &D : allDefaults()) {
      double Scale = 1 / D.scale();
      OS << D.Kind << "\t" << D.Field << "\t"
         << (D.hasValue() ? Number(D.Written) : std::string("none")) << "\t"
         << D.Unit << "\t"
         << (D.hasRange()
                 ? Number(D.Low * Scale) + " to " + Number(D.High * Scale)
                 : std::string(""))
         << "\t" << wallInfo(D.W)->Number << "\t"
         << (D.Calibrated ? "calibrated" : "default") << "\t" << D.Evidence
         << "\n";
    }
  } else if (What == "metrics") {
    // Name, unit, wall, visibility, the workloads it applies to, its
    // scorecard level, description.
    for (const MetricInfo &M : allMetrics())
      OS << M.Name << "\t" << M.Unit << "\t" << static_cast<unsigned>(M.W)
         << "\t" << (M.Vis == Visibility::Public ? "public" : "internal")
         << "\t" << appliesWord(M.Where) << "\t" << levelWord(M.Shown) << "\t"
         << M.Doc << "\n";
    for (const PhaseInfo &P : allPhases())
      for (const PhaseMetricInfo &M : allPhaseMetrics())
        OS << P.Prefix << "." << M.Suffix << "\t" << M.Unit << "\t"
           << static_cast<unsigned>(M.W) << "\tphase\t\t\t" << M.Doc << "\n";
  }
  return Success;
}

} // namespace mlsc::driver
