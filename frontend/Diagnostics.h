//===- Diagnostics.h - Diagnostic kinds, engine and rendering ----*- C++
//-*-===//
//
// Diagnostics are declared by kind in Diagnostics.def and rendered through
// llvm::SourceMgr as `file:line:col: error: message [Kind]`, the source line,
// a `^~~~` range, fix-its and attached notes. The engine collects diagnostics
// in report order; the driver prints them, or hands them to the verifier.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_FRONTEND_DIAGNOSTICS_H
#define MLSC_FRONTEND_DIAGNOSTICS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace mlsc {

enum class DiagKind : unsigned short {
#define DIAGNOSTIC(Kind, Severity, Summary) Kind,
#include "frontend/Diagnostics.def"
};

enum class Severity { Error, Warning, Note };

struct DiagKindInfo {
  DiagKind Kind;
  const char *Name;
  Severity Level;
  const char *Summary;
};

/// Every kind, in the order of Diagnostics.def.
llvm::ArrayRef<DiagKindInfo> allDiagKinds();
const DiagKindInfo &diagKindInfo(DiagKind Kind);

struct Diagnostic {
  DiagKind Kind;
  Severity Level;
  llvm::SMLoc Loc;     // may be invalid for file-level problems
  llvm::SMRange Range; // highlighted with ^~~~
  std::string File;    // used when Loc is invalid
  std::string Message; // lowercase, no trailing period
  std::vector<llvm::SMFixIt> FixIts;
  std::vector<Diagnostic> Notes;

  /// Attaches a note (e.g. where a duplicate was first defined).
  Diagnostic &note(DiagKind NoteKind, llvm::SMRange At, std::string Text);
  /// Suggests replacing \p At with \p Replacement (printed under the caret).
  Diagnostic &fixIt(llvm::SMRange At, std::string Replacement);
};

/// Whether \p S holds terminal controls: C0 controls but tab, DEL, or
/// bidirectional controls.
bool hasControls(llvm::StringRef S);
/// \p S with those controls written as `\x1B` or `<U+202E>`, safe to
/// print on a terminal.
std::string escapeControls(llvm::StringRef S);

class DiagnosticEngine {
public:
  explicit DiagnosticEngine(llvm::SourceMgr &SM) : SM(SM) {}

  /// Records a diagnostic at \p Range; the returned reference stays valid.
  /// A repeat of one already recorded (same kind, range and message) is
  /// dropped: an inherited field is checked once per derived entity, and its
  /// mistake must still give one diagnostic.
  Diagnostic &report(DiagKind Kind, llvm::SMRange Range, std::string Message);
  /// Records a diagnostic about a whole file (no source location).
  Diagnostic &reportFile(DiagKind Kind, llvm::StringRef File,
                         std::string Message);

  bool hasErrors() const { return ErrorCount != 0; }
  unsigned errorCount() const { return ErrorCount; }
  const std::deque<Diagnostic> &diagnostics() const { return Diags; }
  llvm::SourceMgr &sourceMgr() { return SM; }

  /// Diagnostics in buffer \p BufferId are printed without their source
  /// line: a file reached through a symbolic link out of the search paths
  /// may be anything (a credentials file), and is not echoed.
  void hideSource(unsigned BufferId) { Hidden.insert(BufferId); }
  /// Only the first error in buffer \p BufferId is printed, then a note
  /// counting the rest: an imported file that does not parse as .mls at
  /// all is quoted at most once.
  void firstErrorOnly(unsigned BufferId) { FirstOnly.insert(BufferId); }

  /// Lines the command line appended to the main buffer (`mlsc eval FILE
  /// -e EXPR`: one `let` a line from offset Start, each Prefix bytes of
  /// wrapping before the user's text). A diagnostic there is located in
  /// the user's text, `<Label>:1:COL`, not at a line past the file's end.
  struct CommandLineLines {
    size_t Start = 0;
    std::vector<std::string> Labels;
    std::vector<size_t> Prefixes;
  };
  void commandLineLines(CommandLineLines L) { Appended = std::move(L); }

  /// Prints every diagnostic not yet printed, in report order.
  void flush(llvm::raw_ostream &OS);

  /// Renders one diagnostic (and its notes) exactly as flush() would.
  void render(const Diagnostic &D, llvm::raw_ostream &OS) const;

private:
  Diagnostic &add(DiagKind Kind, llvm::SMRange Range, llvm::StringRef File,
                  std::string Message);

  /// Where a buffer's lines break, so that locating a diagnostic costs a
  /// binary search rather than a scan of its line.
  struct LineIndex {
    std::vector<uint32_t> Newlines; ///< offsets of `\n`
    std::vector<uint32_t> Breaks;   ///< offsets of `\n` and `\r`
  };
  const LineIndex &lineIndex(unsigned BufferId) const;
  /// Renders \p D without echoing its source line when that line is longer
  /// than MaxEchoedLine; returns false (printing nothing) otherwise.
  bool renderWithoutLine(const Diagnostic &D, const std::string &Text,
                         llvm::raw_ostream &OS) const;
  /// Renders \p D in the command line's text when it lies there (see
  /// commandLineLines); returns false (printing nothing) otherwise.
  bool renderOnCommandLine(const Diagnostic &D, const std::string &Text,
                           llvm::raw_ostream &OS) const;
  std::optional<CommandLineLines> Appended;

  llvm::SourceMgr &SM;
  std::deque<Diagnostic> Diags;
  /// (kind, range, file, message) of every recorded diagnostic.
  std::set<std::tuple<unsigned, const char *, const char *, std::string,
                      std::string>>
      Seen;
  /// What report() hands back for a dropped repeat.
  Diagnostic Dropped;
  size_t Printed = 0;
  unsigned ErrorCount = 0;
  std::set<unsigned> Hidden, FirstOnly;
  /// Built on demand by render(), by buffer id.
  mutable std::map<unsigned, LineIndex> LineIndexes;
};

} // namespace mlsc

#endif
