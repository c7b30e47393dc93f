//===- Parser.h - From .mls text to the AST ----------------------*- C++
//-*-===//
//
// Consumes one source buffer; produces an ast::Module. Checks the raw bytes
// (NUL, UTF-8, size), lexes with the ANTLR lexer, reports lexical errors,
// bounds bracket nesting before parsing (so no input can overflow the stack),
// parses with error recovery (every syntax error, not just the first) and
// converts the parse tree into our AST. ANTLR types never leave this stage.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_FRONTEND_PARSER_H
#define MLSC_FRONTEND_PARSER_H

#include "frontend/AST.h"
#include "frontend/Diagnostics.h"

#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <vector>

namespace mlsc {

/// Limits that keep hostile input from exhausting the stack or the clock.
struct FrontendLimits {
  /// Files larger than this are refused with FileTooLarge.
  size_t MaxFileBytes = 4u << 20;
  /// Nesting of ( [ { beyond this is refused with NestingTooDeep.
  unsigned MaxBracketDepth = 200;
  /// Expression trees deeper than this (long operator chains included).
  unsigned MaxExprDepth = 1000;
  /// Values and references followed at once when typing or folding one
  /// value (a let reading a let reading a let ..., each with its
  /// expression): beyond this, DependencyTooDeep. Keeps every recursive
  /// pass within a few thousand frames.
  unsigned MaxValueDepth = 4000;
  /// Imports nested beyond this are refused with DependencyTooDeep.
  unsigned MaxImportDepth = 200;
  /// Files with more tokens than this are refused with FileTooLarge before
  /// they are parsed (the parser costs about 1 KB and 10 us a token).
  size_t MaxTokens = 300000;
  /// Stop reporting lexical errors in one file after this many.
  unsigned MaxLexicalErrors = 20;
};

/// Parses buffer \p BufferId of the engine's SourceMgr. Always returns a
/// module; on errors it holds what could be recovered.
std::unique_ptr<ast::Module> parseModule(unsigned BufferId,
                                         DiagnosticEngine &Diags,
                                         const FrontendLimits &Limits = {});

/// A token as `mlsc fmt` and the language server see it: comments
/// included, whitespace not, with what the parse tree says about it.
struct SyntaxToken {
  enum Kind : uint8_t {
    Name, ///< an identifier, or `note`/`step` used as one
    Keyword,
    Number,
    Quantity,
    String,
    Date,
    Punct,
    Comment
  };
  Kind K = Punct;
  /// The token's text, inside the SourceMgr's buffer (so the text between
  /// two tokens is the whitespace between them).
  llvm::StringRef Text;
  bool ItemStart = false; ///< first token of a declaration or block item
  bool ItemEnd = false;   ///< last token of one
  bool AssignEq = false;  ///< the `=` of an assignment or a let
  bool Sign = false;      ///< a unary `+` or `-`
};

/// The tokens of buffer \p BufferId, when it has no errors (the same
/// diagnostics as parseModule); std::nullopt otherwise.
std::optional<std::vector<SyntaxToken>>
syntaxTokens(unsigned BufferId, DiagnosticEngine &Diags,
             const FrontendLimits &Limits = {});

/// The length of the number that starts \p Text (`3.35` of `3.35TB/s`,
/// `2e9` of `2e9 GB`): digits with `_` between them, a fraction, an
/// exponent.
size_t numberBodyLength(llvm::StringRef Text);

/// `--emit=tokens`: one line per token, `line:col KIND `text``.
void dumpTokens(unsigned BufferId, DiagnosticEngine &Diags,
                llvm::raw_ostream &OS, const FrontendLimits &Limits = {});

/// `--emit=ast`.
void printAST(const ast::Module &M, llvm::SourceMgr &SM, llvm::raw_ostream &OS);

} // namespace mlsc

#endif
