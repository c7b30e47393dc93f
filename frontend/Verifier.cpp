//===- Verifier.cpp - `--verify-diagnostics` ------------------------------===//

#include "frontend/Verifier.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <algorithm>

namespace mlsc {

namespace {

struct Expectation {
  Severity Level;
  unsigned Line;
  std::string Text;
  llvm::SMRange Range; ///< the `expected-...` text in the comment
  bool Matched = false;
};

/// Reads every `expected-KIND(@LINE)? {{TEXT}}` of the buffer's comments.
std::vector<Expectation> parseExpectations(unsigned BufferId,
                                           const llvm::SourceMgr &SM,
                                           DiagnosticEngine &Out) {
  std::vector<Expectation> Result;
  llvm::StringRef Buffer = SM.getMemoryBuffer(BufferId)->getBuffer();
  unsigned LineNo = 0;
  for (size_t LineStart = 0; LineStart <= Buffer.size();) {
    size_t LineEnd = Buffer.find('\n', LineStart);
    if (LineEnd == llvm::StringRef::npos)
      LineEnd = Buffer.size();
    ++LineNo;
    llvm::StringRef Line = Buffer.slice(LineStart, LineEnd);
    size_t Hash = Line.find('#');
    size_t Pos = Hash == llvm::StringRef::npos ? Line.size() : Hash;
    while ((Pos = Line.find("expected-", Pos)) != llvm::StringRef::npos) {
      llvm::StringRef Rest = Line.drop_front(Pos + 9);
      const char *Begin = Line.data() + Pos;
      auto malformed = [&](const std::string &Why) {
        Out.report(DiagKind::MalformedExpectation,
                   {llvm::SMLoc::getFromPointer(Begin),
                    llvm::SMLoc::getFromPointer(Line.end())},
                   Why);
      };
      Expectation E;
      if (Rest.consume_front("error"))
        E.Level = Severity::Error;
      else if (Rest.consume_front("warning"))
        E.Level = Severity::Warning;
      else if (Rest.consume_front("note"))
        E.Level = Severity::Note;
      else {
        malformed("expected `expected-error`, `expected-warning` or "
                  "`expected-note`");
        break;
      }
      E.Line = LineNo;
      if (Rest.consume_front("@")) {
        bool Plus = Rest.consume_front("+");
        bool Minus = !Plus && Rest.consume_front("-");
        unsigned N = 0;
        size_t Digits =
            std::min(Rest.find_first_not_of("0123456789"), Rest.size());
        if (Digits == 0 || Rest.take_front(Digits).getAsInteger(10, N)) {
          malformed("expected a line number after `@`");
          break;
        }
        Rest = Rest.drop_front(Digits);
        if (Minus && N >= LineNo) {
          malformed("line offset points before the start of the file");
          break;
        }
        E.Line = Plus ? LineNo + N : Minus ? LineNo - N : N;
        if (E.Line == 0) {
          malformed("line 0 does not exist; lines count from 1");
          break;
        }
      }
      Rest = Rest.ltrim();
      if (!Rest.consume_front("{{")) {
        malformed("expected `{{` after the expectation");
        break;
      }
      size_t Close = Rest.find("}}");
      if (Close == llvm::StringRef::npos) {
        malformed("expected `}}` to close the expectation");
        break;
      }
      E.Text = Rest.take_front(Close).str();
      const char *End = Rest.data() + Close + 2;
      E.Range = {llvm::SMLoc::getFromPointer(Begin),
                 llvm::SMLoc::getFromPointer(End)};
      Result.push_back(E);
      Pos = static_cast<size_t>(End - Line.data());
    }
    LineStart = LineEnd + 1;
  }
  return Result;
}

const char *levelName(Severity S) {
  return S == Severity::Error     ? "error"
         : S == Severity::Warning ? "warning"
                                  : "note";
}

} // namespace

bool verifyDiagnostics(unsigned BufferId, const DiagnosticEngine &Produced,
                       DiagnosticEngine &Out) {
  const llvm::SourceMgr &SM =
      const_cast<DiagnosticEngine &>(Produced).sourceMgr();
  std::vector<Expectation> Expected = parseExpectations(BufferId, SM, Out);
  bool OK = !Out.hasErrors();

  auto check = [&](const Diagnostic &D) {
    unsigned Line = 0;
    if (D.Loc.isValid() && SM.FindBufferContainingLoc(D.Loc) == BufferId)
      Line = SM.getLineAndColumn(D.Loc, BufferId).first;
    std::string Full = D.Message + " [" + diagKindInfo(D.Kind).Name + "]";
    for (Expectation &E : Expected) {
      if (!E.Matched && E.Level == D.Level && E.Line == Line &&
          llvm::StringRef(Full).contains(E.Text)) {
        E.Matched = true;
        return;
      }
    }
    OK = false;
    std::string Where;
    if (Line == 0 && D.Loc.isValid()) {
      unsigned Buf = SM.FindBufferContainingLoc(D.Loc);
      auto LC = SM.getLineAndColumn(D.Loc, Buf);
      Where = fmt::format(" in {}:{}",
                          SM.getMemoryBuffer(Buf)->getBufferIdentifier().str(),
                          LC.first);
    }
    llvm::SMRange R = Line ? D.Range : llvm::SMRange();
    std::string Message =
        fmt::format("unexpected {}{}: {}", levelName(D.Level), Where, Full);
    if (R.isValid() || Line)
      Out.report(DiagKind::UnexpectedDiagnostic,
                 R.isValid() ? R : llvm::SMRange(D.Loc, D.Loc), Message);
    else
      Out.reportFile(DiagKind::UnexpectedDiagnostic,
                     SM.getMemoryBuffer(BufferId)->getBufferIdentifier(),
                     Message);
  };
  for (const Diagnostic &D : Produced.diagnostics()) {
    check(D);
    // A note that points into an imported module cannot be annotated there.
    for (const Diagnostic &N : D.Notes)
      if (!N.Loc.isValid() || SM.FindBufferContainingLoc(N.Loc) == BufferId)
        check(N);
  }
  for (const Expectation &E : Expected) {
    if (E.Matched)
      continue;
    OK = false;
    Out.report(
        DiagKind::ExpectedDiagnosticNotSeen, E.Range,
        fmt::format("expected {} on line {} was not produced: {{{{{}}}}}",
                    levelName(E.Level), E.Line, E.Text));
  }
  return OK;
}

} // namespace mlsc
