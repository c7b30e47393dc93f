//===- Diagnostics.cpp - Diagnostic kinds, engine and rendering -----------===//

#include "frontend/Diagnostics.h"

#include <algorithm>

namespace mlsc {

static const DiagKindInfo KindTable[] = {
#define DIAGNOSTIC(Kind, Sev, Summary)                                         \
  {DiagKind::Kind, #Kind, Severity::Sev, Summary},
#include "frontend/Diagnostics.def"
};

llvm::ArrayRef<DiagKindInfo> allDiagKinds() { return KindTable; }

const DiagKindInfo &diagKindInfo(DiagKind Kind) {
  return KindTable[static_cast<unsigned>(Kind)];
}

Diagnostic &Diagnostic::note(DiagKind NoteKind, llvm::SMRange At,
                             std::string Text) {
  Diagnostic N;
  N.Kind = NoteKind;
  N.Level = Severity::Note;
  N.Loc = At.Start;
  N.Range = At;
  N.Message = std::move(Text);
  Notes.push_back(std::move(N));
  return *this;
}

Diagnostic &Diagnostic::fixIt(llvm::SMRange At, std::string Replacement) {
  FixIts.emplace_back(At, Replacement);
  return *this;
}

Diagnostic &DiagnosticEngine::report(DiagKind Kind, llvm::SMRange Range,
                                     std::string Message) {
  return add(Kind, Range, "", std::move(Message));
}

Diagnostic &DiagnosticEngine::reportFile(DiagKind Kind, llvm::StringRef File,
                                         std::string Message) {
  return add(Kind, llvm::SMRange(), File, std::move(Message));
}

Diagnostic &DiagnosticEngine::add(DiagKind Kind, llvm::SMRange Range,
                                  llvm::StringRef File, std::string Message) {
  if (!Seen.emplace(static_cast<unsigned>(Kind), Range.Start.getPointer(),
                    Range.End.getPointer(), File.str(), Message)
           .second) {
    Dropped = Diagnostic();
    return Dropped;
  }
  Diagnostic D;
  D.Kind = Kind;
  D.Level = diagKindInfo(Kind).Level;
  D.Loc = Range.Start;
  D.Range = Range;
  D.File = File.str();
  D.Message = std::move(Message);
  if (D.Level == Severity::Error)
    ++ErrorCount;
  Diags.push_back(std::move(D));
  return Diags.back();
}

static llvm::SourceMgr::DiagKind toLLVM(Severity S) {
  switch (S) {
  case Severity::Error:
    return llvm::SourceMgr::DK_Error;
  case Severity::Warning:
    return llvm::SourceMgr::DK_Warning;
  case Severity::Note:
    return llvm::SourceMgr::DK_Note;
  }
  return llvm::SourceMgr::DK_Error;
}

static const char *severityWord(Severity S) {
  switch (S) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  }
  return "error";
}

void DiagnosticEngine::render(const Diagnostic &D,
                              llvm::raw_ostream &OS) const {
  std::string Text = D.Message;
  if (D.Level != Severity::Note)
    Text += std::string(" [") + diagKindInfo(D.Kind).Name + "]";
  if (!D.Loc.isValid()) {
    OS << (D.File.empty() ? std::string("mlsc") : D.File) << ": "
       << severityWord(D.Level) << ": " << Text << "\n";
  } else {
    llvm::SmallVector<llvm::SMRange, 1> Ranges;
    if (D.Range.isValid() && D.Range.Start != D.Range.End)
      Ranges.push_back(D.Range);
    SM.PrintMessage(OS, SM.GetMessage(D.Loc, toLLVM(D.Level), Text, Ranges,
                                      D.FixIts),
                    /*ShowColors=*/false);
  }
  for (const Diagnostic &N : D.Notes)
    render(N, OS);
}

void DiagnosticEngine::flush(llvm::raw_ostream &OS) {
  // Print in source order (file-level diagnostics first, then by buffer and
  // position), whatever pass reported them; ties keep report order.
  std::vector<const Diagnostic *> Pending;
  for (; Printed < Diags.size(); ++Printed)
    Pending.push_back(&Diags[Printed]);
  auto key = [&](const Diagnostic *D) {
    if (!D->Loc.isValid())
      return std::make_pair(0u, static_cast<const char *>(nullptr));
    return std::make_pair(SM.FindBufferContainingLoc(D->Loc),
                          D->Loc.getPointer());
  };
  std::stable_sort(Pending.begin(), Pending.end(),
                   [&](const Diagnostic *A, const Diagnostic *B) {
                     return key(A) < key(B);
                   });
  for (const Diagnostic *D : Pending)
    render(*D, OS);
  OS.flush();
}

} // namespace mlsc
