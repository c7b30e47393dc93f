//===- Diagnostics.cpp - Diagnostic kinds, engine and rendering -----------===//

#include "frontend/Diagnostics.h"

#include <fmt/format.h>

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

/// Longest source line echoed under a diagnostic. A longer line (minified or
/// generated input) is not echoed: each diagnostic on it would repeat the line
/// and a caret line as long, so output would grow with the square of the
/// line's length (20,000 errors on one 80 KB line printed 1.2 GB).
static constexpr size_t MaxEchoedLine = 4096;

const DiagnosticEngine::LineIndex &
DiagnosticEngine::lineIndex(unsigned BufferId) const {
  auto [It, Inserted] = LineIndexes.try_emplace(BufferId);
  if (Inserted) {
    llvm::StringRef Buffer = SM.getMemoryBuffer(BufferId)->getBuffer();
    for (size_t I = 0; I < Buffer.size(); ++I) {
      if (Buffer[I] == '\n')
        It->second.Newlines.push_back(static_cast<uint32_t>(I));
      if (Buffer[I] == '\n' || Buffer[I] == '\r')
        It->second.Breaks.push_back(static_cast<uint32_t>(I));
    }
  }
  return It->second;
}

/// ESC and the other C0 controls but tab, DEL, and the bidirectional
/// controls U+202A-U+202E and U+2066-U+2069.
static bool isBidi(llvm::StringRef S, size_t I) {
  if (I + 2 >= S.size())
    return false;
  unsigned char A = S[I], B = S[I + 1], C = S[I + 2];
  return A == 0xE2 && ((B == 0x80 && C >= 0xAA && C <= 0xAE) ||
                       (B == 0x81 && C >= 0xA6 && C <= 0xA9));
}

bool hasControls(llvm::StringRef S) {
  for (size_t I = 0; I < S.size(); ++I) {
    unsigned char C = S[I];
    if ((C < 0x20 && C != '\t') || C == 0x7F || isBidi(S, I))
      return true;
  }
  return false;
}

std::string escapeControls(llvm::StringRef S) {
  std::string Out;
  for (size_t I = 0; I < S.size(); ++I) {
    unsigned char C = S[I];
    if ((C < 0x20 && C != '\t') || C == 0x7F) {
      Out += fmt::format("\\x{:02X}", C);
    } else if (isBidi(S, I)) {
      unsigned char B = S[I + 1], D = S[I + 2];
      Out += fmt::format("<U+{:04X}>", ((C & 0x0Fu) << 12) |
                                           ((B & 0x3Fu) << 6) | (D & 0x3Fu));
      I += 2;
    } else {
      Out += static_cast<char>(C);
    }
  }
  return Out;
}

bool DiagnosticEngine::renderWithoutLine(const Diagnostic &D,
                                         const std::string &Text,
                                         llvm::raw_ostream &OS) const {
  unsigned Id = SM.FindBufferContainingLoc(D.Loc);
  if (!Id)
    return false;
  const llvm::MemoryBuffer *Buffer = SM.getMemoryBuffer(Id);
  const LineIndex &Index = lineIndex(Id);
  size_t Offset =
      static_cast<size_t>(D.Loc.getPointer() - Buffer->getBufferStart());
  auto NextBreak = llvm::lower_bound(Index.Breaks, Offset);
  size_t Begin =
      NextBreak == Index.Breaks.begin() ? 0 : *std::prev(NextBreak) + 1;
  size_t End =
      NextBreak == Index.Breaks.end() ? Buffer->getBufferSize() : *NextBreak;
  llvm::StringRef LineText = Buffer->getBuffer().slice(Begin, End);
  bool Controls = hasControls(LineText);
  if (End - Begin <= MaxEchoedLine && !Hidden.count(Id) && !Controls)
    return false;
  // Line and column as SourceMgr counts them: lines end at `\n`, columns
  // restart after `\n` or `\r`.
  size_t Line =
      1 + static_cast<size_t>(llvm::lower_bound(Index.Newlines, Offset) -
                              Index.Newlines.begin());
  std::string Where = (Buffer->getBufferIdentifier() + ":" + llvm::Twine(Line) +
                       ":" + llvm::Twine(Offset - Begin + 1))
                          .str();
  // No line number for SMDiagnostic: it prints just `Where: error: Text`,
  // after the import chain.
  SM.PrintMessage(OS,
                  llvm::SMDiagnostic(SM, D.Loc, Where, /*Line=*/-1, /*Col=*/-1,
                                     toLLVM(D.Level), Text, /*LineStr=*/"",
                                     /*Ranges=*/llvm::None),
                  /*ShowColors=*/false);
  // A short line with terminal controls (ANSI escapes, bidi overrides) is
  // echoed escaped, with the caret under its escaped column.
  if (Controls && End - Begin <= MaxEchoedLine && !Hidden.count(Id)) {
    std::string Before = escapeControls(LineText.take_front(Offset - Begin));
    OS << escapeControls(LineText) << "\n"
       << std::string(llvm::StringRef(Before).size(), ' ') << "^\n";
  }
  return true;
}

bool DiagnosticEngine::renderOnCommandLine(const Diagnostic &D,
                                           const std::string &Text,
                                           llvm::raw_ostream &OS) const {
  if (!Appended)
    return false;
  unsigned Id = SM.FindBufferContainingLoc(D.Loc);
  if (Id != SM.getMainFileID())
    return false;
  llvm::StringRef Buffer = SM.getMemoryBuffer(Id)->getBuffer();
  size_t Offset = static_cast<size_t>(D.Loc.getPointer() - Buffer.data());
  if (Offset < Appended->Start)
    return false;
  // Which appended line, and where the user's text starts on it.
  size_t Line = Buffer.slice(Appended->Start, Offset).count('\n');
  if (Line >= Appended->Labels.size())
    return false;
  size_t Begin = Buffer.rfind('\n', Offset == 0 ? 0 : Offset - 1);
  Begin = Begin == llvm::StringRef::npos || Begin < Appended->Start
              ? Appended->Start
              : Begin + 1;
  size_t End = Buffer.find('\n', Offset);
  if (End == llvm::StringRef::npos)
    End = Buffer.size();
  size_t User = std::min(Begin + Appended->Prefixes[Line], End);
  auto column = [&](size_t At) {
    return static_cast<unsigned>(std::max(At, User) - User);
  };
  llvm::SmallVector<std::pair<unsigned, unsigned>, 1> Ranges;
  if (D.Range.isValid() && D.Range.Start != D.Range.End) {
    size_t From =
        static_cast<size_t>(D.Range.Start.getPointer() - Buffer.data());
    size_t To = static_cast<size_t>(D.Range.End.getPointer() - Buffer.data());
    if (From >= User && To <= End && From < To)
      Ranges.push_back({column(From), column(To)});
  }
  SM.PrintMessage(
      OS,
      llvm::SMDiagnostic(SM, D.Loc, Appended->Labels[Line], /*Line=*/1,
                         static_cast<int>(column(Offset)), toLLVM(D.Level),
                         Text, Buffer.slice(User, End), Ranges),
      /*ShowColors=*/false);
  return true;
}

void DiagnosticEngine::render(const Diagnostic &D,
                              llvm::raw_ostream &OS) const {
  std::string Text = escapeControls(D.Message);
  // A message quoting a megabyte-long name is cut: the name's start says
  // enough.
  constexpr size_t LongestMessage = 8192;
  if (Text.size() > LongestMessage)
    Text = Text.substr(0, LongestMessage) + "... (" +
           std::to_string(Text.size() - LongestMessage) + " more characters)";
  // A hidden file's text appears nowhere: not its line, nor the tokens a
  // message would quote.
  if (!Hidden.empty() && D.Loc.isValid() &&
      Hidden.count(SM.FindBufferContainingLoc(D.Loc)))
    Text = std::string(diagKindInfo(D.Kind).Summary) +
           " (the file is reached through a symbolic link out of the "
           "folders searched for modules; its text is not shown)";
  if (D.Level != Severity::Note)
    Text += std::string(" [") + diagKindInfo(D.Kind).Name + "]";
  if (!D.Loc.isValid()) {
    OS << (D.File.empty() ? std::string("mlsc") : D.File) << ": "
       << severityWord(D.Level) << ": " << Text << "\n";
  } else if (!renderOnCommandLine(D, Text, OS) &&
             !renderWithoutLine(D, Text, OS)) {
    llvm::SmallVector<llvm::SMRange, 1> Ranges;
    if (D.Range.isValid() && D.Range.Start != D.Range.End)
      Ranges.push_back(D.Range);
    SM.PrintMessage(
        OS, SM.GetMessage(D.Loc, toLLVM(D.Level), Text, Ranges, D.FixIts),
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
  // Buffers that print their first error only: how many errors each holds.
  std::map<unsigned, unsigned> Errors, Shown;
  if (!FirstOnly.empty())
    for (const Diagnostic *D : Pending)
      if (D->Level == Severity::Error && D->Loc.isValid())
        if (unsigned Id = SM.FindBufferContainingLoc(D->Loc);
            FirstOnly.count(Id))
          ++Errors[Id];
  for (const Diagnostic *D : Pending) {
    unsigned Id = D->Loc.isValid() && !FirstOnly.empty()
                      ? SM.FindBufferContainingLoc(D->Loc)
                      : 0;
    if (!FirstOnly.count(Id)) {
      render(*D, OS);
      continue;
    }
    if (Shown[Id]++)
      continue;
    render(*D, OS);
    if (unsigned Rest = Errors[Id] - 1)
      OS << SM.getMemoryBuffer(Id)->getBufferIdentifier()
         << ": note: the file does not parse as .mls; " << Rest
         << (Rest == 1 ? " more error in it is" : " more errors in it are")
         << " not shown\n";
  }
  OS.flush();
}

} // namespace mlsc
