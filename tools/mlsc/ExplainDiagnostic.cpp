//===- ExplainDiagnostic.cpp - `mlsc explain-diagnostic KIND` -------------===//
//
// Like `rustc --explain`: a diagnostic kind's severity and meaning (its
// summary in frontend/Diagnostics.def) and an example, the first negative
// test of test/lit/diagnostics/ that expects it (collected at build time by
// utils/gen-diagnostic-examples.py).
//
//===----------------------------------------------------------------------===//

#include "tools/mlsc/Driver.h"

#include "ir/Schema.h"

#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

namespace mlsc::driver {

namespace {

struct Example {
  DiagKind Kind;
  const char *File;
  unsigned Line;
  const char *Source, *Message;
};

const Example Examples[] = {
#define EXAMPLE(Kind, File, Line, Source, Message)                             \
  {DiagKind::Kind, File, Line, Source, Message},
#include "mlsc/DiagnosticExamples.inc"
#undef EXAMPLE
};

const char *severityName(Severity S) {
  return S == Severity::Error     ? "error"
         : S == Severity::Warning ? "warning"
                                  : "note";
}

} // namespace

int explainDiagnosticCommand(const DriverOptions &O) {
  const DiagKindInfo *Found = nullptr;
  std::vector<std::string> Names;
  for (const DiagKindInfo &K : allDiagKinds()) {
    Names.push_back(K.Name);
    // `[UnknownUnit]` and `unknownunit` name it too.
    std::string Asked = llvm::StringRef(O.Target).trim("[]").str();
    if (llvm::StringRef(K.Name).equals_insensitive(Asked))
      Found = &K;
  }
  if (!Found) {
    std::string Close = closestMatch(O.Target, Names);
    return usage(DiagKind::UnknownTarget,
                 fmt::format("no diagnostic kind `{}`{} (`mlsc "
                             "--list-diagnostics` lists them)",
                             O.Target,
                             Close.empty()
                                 ? std::string()
                                 : fmt::format("; did you mean `{}`?", Close)));
  }
  llvm::raw_ostream &OS = llvm::outs();
  std::string Summary = Found->Summary;
  if (!Summary.empty())
    Summary[0] = static_cast<char>(toupper(Summary[0]));
  OS << fmt::format("{} ({})\n\n{}.\n", Found->Name, severityName(Found->Level),
                    Summary);
  bool Shown = false;
  for (const Example &X : Examples)
    if (X.Kind == Found->Kind) {
      OS << fmt::format("\nFor example (test/lit/diagnostics/{}:{}):\n\n  "
                        "{}\n\n{}: {} [{}]\n",
                        X.File, X.Line, X.Source, severityName(Found->Level),
                        X.Message, Found->Name);
      Shown = true;
    }
  if (!Shown)
    OS << "\nIt is reported about a whole file or the command line, not at "
          "a place in a scenario file; the tests under test/lit show it.\n";
  OS << "\nMore: docs/diagnostics.md (how diagnostics read, and every "
        "kind).\n";
  return Success;
}

} // namespace mlsc::driver
