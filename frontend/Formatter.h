//===- Formatter.h - The canonical layout of .mls text ------------*- C++
//-*-===//
//
// `mlsc fmt` and the language server's format-document. The layout keeps
// the line breaks the author chose and every comment, and makes the rest
// canonical: two-space indentation by nesting, one space between tokens
// (none inside brackets, before `,` `;` `)` `]`, around `.`, after a sign
// or between a function and its `(`), a quantity's number and unit one
// space apart (`50%` together), the `=` of consecutive one-line assignments
// aligned, the comments that end consecutive lines aligned two spaces after the
// longest line, at most one blank line in a row and none after `{` or before
// `}`,
// `;` only between items on one line, and a newline at the end.
// docs/driver.md, "mlsc fmt".
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_FRONTEND_FORMATTER_H
#define MLSC_FRONTEND_FORMATTER_H

#include "frontend/Parser.h"

#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <string>

namespace mlsc {

/// The formatted text of buffer \p BufferId; std::nullopt when the file
/// has errors (reported to \p Diags: a file that does not parse is not
/// formatted).
std::optional<std::string> formatBuffer(unsigned BufferId,
                                        DiagnosticEngine &Diags,
                                        const FrontendLimits &Limits = {});

/// The layout of \p Tokens (from syntaxTokens), which must all point into
/// one buffer, in order.
std::string formatTokens(llvm::ArrayRef<SyntaxToken> Tokens);

/// A unified diff of \p Before and \p After (`--- A`, `+++ B`, hunks with
/// three lines of context); empty when they are equal.
std::string unifiedDiff(llvm::StringRef Before, llvm::StringRef After,
                        llvm::StringRef NameA, llvm::StringRef NameB);

} // namespace mlsc

#endif
