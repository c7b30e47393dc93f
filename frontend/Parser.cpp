//===- Parser.cpp - From .mls text to the AST -----------------------------===//
//
// Consumes one source buffer; produces an ast::Module. The ANTLR lexer and
// parser run here and nowhere else; ASTBuilder walks the parse tree and builds
// our AST, bounding expression depth so later recursive passes are safe.
//
//===----------------------------------------------------------------------===//

#include "frontend/Parser.h"

#include "MlsLexer.h"
#include "MlsParser.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/Regex.h"

#include <fmt/format.h>

#include <cassert>
#include <typeinfo>

using namespace mlsc_antlr;

namespace mlsc {

/// The longest prefix of \p Text that is a whole number body (`1_000.5e-3`):
/// digits with single underscores between them, an optional fraction and an
/// optional exponent, each taken only when complete.
size_t numberBodyLength(llvm::StringRef Text) {
  auto digits = [&](size_t At) {
    if (At >= Text.size() || !llvm::isDigit(Text[At]))
      return At;
    size_t End = At + 1;
    while (End < Text.size()) {
      if (llvm::isDigit(Text[End]))
        ++End;
      else if (Text[End] == '_' && End + 1 < Text.size() &&
               llvm::isDigit(Text[End + 1]))
        End += 2;
      else
        break;
    }
    return End;
  };
  size_t End = digits(0);
  if (End < Text.size() && Text[End] == '.') {
    size_t Fraction = digits(End + 1);
    if (Fraction > End + 1)
      End = Fraction;
  }
  if (End < Text.size() && (Text[End] == 'e' || Text[End] == 'E')) {
    size_t Sign = End + 1;
    if (Sign < Text.size() && (Text[Sign] == '+' || Text[Sign] == '-'))
      ++Sign;
    size_t Exponent = digits(Sign);
    if (Exponent > Sign)
      End = Exponent;
  }
  return End;
}

namespace {

/// Maps ANTLR character indices (code points) to locations in the buffer.
class SourceText {
public:
  explicit SourceText(llvm::StringRef Buffer) : Buffer(Buffer) {
    bool Ascii = llvm::all_of(
        Buffer, [](char C) { return static_cast<unsigned char>(C) < 0x80; });
    if (Ascii)
      return;
    for (size_t I = 0; I < Buffer.size(); ++I)
      if ((static_cast<unsigned char>(Buffer[I]) & 0xC0) != 0x80)
        CharToByte.push_back(static_cast<uint32_t>(I));
    CharToByte.push_back(static_cast<uint32_t>(Buffer.size()));
  }

  llvm::SMLoc loc(size_t CharIndex) const {
    size_t Byte = CharIndex;
    if (!CharToByte.empty())
      Byte =
          CharIndex < CharToByte.size() ? CharToByte[CharIndex] : Buffer.size();
    if (Byte > Buffer.size())
      Byte = Buffer.size();
    return llvm::SMLoc::getFromPointer(Buffer.data() + Byte);
  }

  llvm::SMRange range(const antlr4::Token *T) const {
    if (!T || T->getType() == antlr4::Token::EOF) {
      llvm::SMLoc End = llvm::SMLoc::getFromPointer(Buffer.end());
      if (T && T->getStartIndex() != NoIndex)
        End = loc(T->getStartIndex());
      return {End, End};
    }
    return {loc(T->getStartIndex()), loc(T->getStopIndex() + 1)};
  }

  llvm::SMRange range(antlr4::ParserRuleContext *Ctx) const {
    if (!Ctx || !Ctx->getStart())
      return {};
    llvm::SMRange Start = range(Ctx->getStart());
    const antlr4::Token *Stop = Ctx->getStop();
    if (!Stop || Stop->getTokenIndex() < Ctx->getStart()->getTokenIndex())
      return Start;
    return {Start.Start, range(Stop).End};
  }

  llvm::SMLoc bufferStart() const {
    return llvm::SMLoc::getFromPointer(Buffer.data());
  }
  llvm::StringRef buffer() const { return Buffer; }

private:
  static constexpr size_t NoIndex = static_cast<size_t>(-1);
  llvm::StringRef Buffer;
  std::vector<uint32_t> CharToByte;
};

/// The smallest range covering both; either may be invalid.
llvm::SMRange cover(llvm::SMRange A, llvm::SMRange B) {
  if (!A.isValid())
    return B;
  if (!B.isValid())
    return A;
  return {A.Start, B.End};
}

llvm::SMRange byteRange(llvm::StringRef Buffer, size_t Offset, size_t Length) {
  const char *P = Buffer.data() + Offset;
  return {llvm::SMLoc::getFromPointer(P),
          llvm::SMLoc::getFromPointer(P + Length)};
}

/// Refuses input that is not text: too large, NUL bytes, invalid UTF-8.
bool checkRawBytes(unsigned BufferId, DiagnosticEngine &Diags,
                   const FrontendLimits &Limits) {
  llvm::SourceMgr &SM = Diags.sourceMgr();
  const llvm::MemoryBuffer *MB = SM.getMemoryBuffer(BufferId);
  llvm::StringRef Text = MB->getBuffer();
  if (Text.size() > Limits.MaxFileBytes) {
    Diags.reportFile(DiagKind::FileTooLarge, MB->getBufferIdentifier(),
                     fmt::format("file is {} bytes; the limit is {} bytes",
                                 Text.size(), Limits.MaxFileBytes));
    return false;
  }
  size_t Nul = Text.find('\0');
  if (Nul != llvm::StringRef::npos) {
    Diags.report(DiagKind::NulCharacter, byteRange(Text, Nul, 1),
                 "file contains a NUL byte; is it a binary file?");
    return false;
  }
  const llvm::UTF8 *Begin = reinterpret_cast<const llvm::UTF8 *>(Text.data());
  const llvm::UTF8 *Cursor = Begin;
  const llvm::UTF8 *End = Begin + Text.size();
  if (!llvm::isLegalUTF8String(&Cursor, End)) {
    size_t Offset = static_cast<size_t>(Cursor - Begin);
    // llvm::SourceMgr prints no caret line under a line with non-ASCII
    // bytes; the line:col of the message still locate the bad byte.
    Diags.report(DiagKind::InvalidUtf8, byteRange(Text, Offset, 0),
                 fmt::format("invalid UTF-8 byte 0x{:02X} at byte offset {}",
                             static_cast<unsigned>(Text[Offset]) & 0xFFu,
                             Offset));
    return false;
  }
  // Bidirectional controls make text display in another order than it is
  // read ("Trojan Source", CVE-2021-42574): each is a warning.
  for (size_t I = 0; I + 2 < Text.size(); ++I) {
    unsigned char A = Text[I], B = Text[I + 1], C = Text[I + 2];
    bool Bidi = A == 0xE2 && ((B == 0x80 && C >= 0xAA && C <= 0xAE) ||
                              (B == 0x81 && C >= 0xA6 && C <= 0xA9));
    if (Bidi)
      Diags.report(
          DiagKind::BidiControl, byteRange(Text, I, 3),
          fmt::format("a bidirectional control character (U+{:04X}) "
                      "can make this line display in another order "
                      "than it is read",
                      ((A & 0x0Fu) << 12) | ((B & 0x3Fu) << 6) | (C & 0x3Fu)));
  }
  return true;
}

/// The lexed form of one buffer.
/// A token stream that lexes at most a given number of tokens: a file
/// of millions of tiny tokens must not cost the parser (about 1 KB and
/// 10 us a token) before it is refused.
class BoundedTokenStream : public antlr4::CommonTokenStream {
public:
  using antlr4::CommonTokenStream::CommonTokenStream;

  /// Lexes to the end, or stops past \p Max tokens the parser would see
  /// (spaces and comments are not counted); false when it stopped.
  bool fillAtMost(size_t Max) {
    lazyInit();
    size_t Counted = 0, Visible = 0;
    while (!_fetchedEOF) {
      fetch(1000);
      for (; Counted < _tokens.size(); ++Counted)
        Visible +=
            _tokens[Counted]->getChannel() == antlr4::Token::DEFAULT_CHANNEL &&
            _tokens[Counted]->getType() != antlr4::Token::EOF;
      if (Visible > Max)
        return false;
    }
    return true;
  }
};

bool isUnitWordChar(size_t C) {
  return (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') ||
         (C >= '0' && C <= '9') || C == '_';
}

/// The generated lexer, with QUANTITY's last rule applied after the match:
/// a unit word ends at a word boundary and is not a keyword, so
/// `0.55 from src` is `0.55` `from` `src` and `3 in [1, 2]` is `3` `in` ....
/// The grammar matches the longest number-and-unit text; this keeps its
/// longest prefix that is a quantity by that rule, or else the number, and
/// lexes on from there. The same choice a predicate in the grammar would
/// make, without keeping ANTLR from caching its DFA (a predicate there made
/// the lexer simulate its ATN for every letter of every unit).
class UnitLexer : public MlsLexer {
public:
  using MlsLexer::MlsLexer;

  std::unique_ptr<antlr4::Token> nextToken() override {
    std::unique_ptr<antlr4::Token> T = MlsLexer::nextToken();
    if (T->getType() != QUANTITY)
      return T;
    std::string Text = T->getText();
    size_t Keep = quantityLength(Text, _input->LA(1));
    size_t Type = QUANTITY;
    if (Keep == 0) {
      Keep = numberBodyLength(Text);
      Type = NUMBER;
    }
    if (Keep == Text.size())
      return T;
    // A quantity is ASCII and on one line: character indices and columns
    // move together.
    auto *CT = static_cast<antlr4::CommonToken *>(T.get());
    CT->setType(Type);
    CT->setStopIndex(CT->getStartIndex() + Keep - 1);
    _input->seek(CT->getStartIndex() + Keep);
    setCharPositionInLine(CT->getCharPositionInLine() + Keep);
    return T;
  }

private:
  /// The longest prefix of \p Text (a QUANTITY match, followed in the input
  /// by \p Next) that is a quantity whose unit ends at a word boundary and
  /// whose last word is not a keyword; 0 when there is none.
  size_t quantityLength(llvm::StringRef Text, size_t Next) const {
    static const llvm::Regex Quantity(
        "^[0-9](_?[0-9])*(\\.[0-9](_?[0-9])*)?([eE][+-]?[0-9](_?[0-9])*)?"
        "[ \t]*([a-zA-Z][a-zA-Z0-9_]*|%)(\\^-?[0-9](_?[0-9])*)?"
        "([*/]([a-zA-Z][a-zA-Z0-9_]*|%)(\\^-?[0-9](_?[0-9])*)?)*$");
    for (size_t End = Text.size(); End > 0; --End) {
      size_t After =
          End < Text.size() ? static_cast<unsigned char>(Text[End]) : Next;
      char Last = Text[End - 1];
      // A unit ends with a word character or `%`, never inside a word.
      if (isUnitWordChar(After) ||
          !(isUnitWordChar(static_cast<unsigned char>(Last)) || Last == '%'))
        continue;
      llvm::StringRef Prefix = Text.take_front(End);
      size_t WordStart = Prefix.size();
      while (WordStart > 0 &&
             isUnitWordChar(static_cast<unsigned char>(Prefix[WordStart - 1])))
        --WordStart;
      if (isKeyword(Prefix.drop_front(WordStart)))
        continue;
      if (Quantity.match(Prefix))
        return End;
    }
    return 0;
  }

  bool isKeyword(llvm::StringRef Word) const {
    static const std::vector<std::string> Keywords = [this] {
      std::vector<std::string> K;
      for (size_t Type : {IMPORT, ASSERT, FROM, NOTE, IN, TRUE, FALSE, LET,
                          STEP, AND, OR, NOT}) {
        // The vocabulary spells a literal token with its quotes: `'from'`.
        std::string Literal = getVocabulary().getLiteralName(Type);
        K.push_back(Literal.substr(1, Literal.size() - 2));
      }
      return K;
    }();
    return llvm::is_contained(Keywords, Word);
  }
};

struct Lexed {
  std::unique_ptr<antlr4::ANTLRInputStream> Input;
  std::unique_ptr<UnitLexer> Lexer;
  std::unique_ptr<BoundedTokenStream> Tokens;
  bool Complete = true; ///< false: more tokens than the limit
};

Lexed lex(llvm::StringRef Text, const FrontendLimits &Limits) {
  Lexed L;
  L.Input = std::make_unique<antlr4::ANTLRInputStream>(Text.str());
  L.Lexer = std::make_unique<UnitLexer>(L.Input.get());
  L.Lexer->removeErrorListeners();
  L.Tokens = std::make_unique<BoundedTokenStream>(L.Lexer.get());
  L.Complete = L.Tokens->fillAtMost(Limits.MaxTokens);
  return L;
}

/// Reports a file with more tokens than the limit.
bool checkTokenCount(const Lexed &L, unsigned BufferId, DiagnosticEngine &Diags,
                     const FrontendLimits &Limits) {
  if (L.Complete)
    return true;
  Diags.reportFile(
      DiagKind::FileTooLarge,
      Diags.sourceMgr().getMemoryBuffer(BufferId)->getBufferIdentifier(),
      fmt::format("file has more than {} tokens; the limit is two hundred "
                  "times the largest bundled registry",
                  Limits.MaxTokens));
  return false;
}

/// Reports lexical errors, turns them into tokens the parser can live with,
/// and bounds bracket nesting. Returns false when the file must not be parsed.
bool checkTokens(Lexed &L, const SourceText &Src, DiagnosticEngine &Diags,
                 const FrontendLimits &Limits) {
  unsigned Reported = 0;
  unsigned Depth = 0;
  const antlr4::Token *PrevError = nullptr;
  Diagnostic *Junk = nullptr; ///< the error for the run PrevError ends
  auto gluedToJunk = [&](const antlr4::Token *T) {
    return PrevError && PrevError->getStopIndex() + 1 == T->getStartIndex();
  };
  for (antlr4::Token *T : L.Tokens->getTokens()) {
    switch (T->getType()) {
    case MlsLexer::ERROR_CHAR: {
      auto *CT = static_cast<antlr4::CommonToken *>(T);
      CT->setChannel(antlr4::Token::HIDDEN_CHANNEL);
      // A run of junk is one error.
      bool Continues = gluedToJunk(T);
      PrevError = T;
      if (Continues) {
        if (Junk)
          Junk->Range.End = Src.range(T).End;
        continue;
      }
      Junk = nullptr;
      if (++Reported > Limits.MaxLexicalErrors)
        continue;
      std::string Text = T->getText();
      std::string Shown = Text;
      if (Text.size() == 1 && !llvm::isPrint(Text[0]))
        Shown =
            fmt::format("\\x{:02X}", static_cast<unsigned>(Text[0]) & 0xFFu);
      std::string Message = fmt::format("unexpected character `{}`", Shown);
      if (Text == "\u00B5" || Text == "\u03BC")
        Message += "; write `u` for the micro prefix, as in `us`";
      Junk = &Diags.report(DiagKind::InvalidCharacter, Src.range(T), Message);
      continue;
    }
    case MlsLexer::IDENT:
      // A word glued to junk (`µs`, `°C`) belongs to it: read as a name, the
      // rest of the word would only give follow-on syntax errors.
      if (gluedToJunk(T)) {
        static_cast<antlr4::CommonToken *>(T)->setChannel(
            antlr4::Token::HIDDEN_CHANNEL);
        if (Junk)
          Junk->Range.End = Src.range(T).End;
      }
      break;
    case MlsLexer::UNTERMINATED_STRING: {
      if (++Reported <= Limits.MaxLexicalErrors)
        Diags
            .report(DiagKind::UnterminatedString, Src.range(T),
                    "string literal is not terminated")
            .fixIt({Src.range(T).End, Src.range(T).End}, "\"");
      static_cast<antlr4::CommonToken *>(T)->setType(MlsLexer::STRING);
      break;
    }
    case MlsLexer::LPAREN:
    case MlsLexer::LBRACK:
    case MlsLexer::LBRACE:
      if (++Depth > Limits.MaxBracketDepth) {
        Diags.report(DiagKind::NestingTooDeep, Src.range(T),
                     fmt::format("brackets and blocks nest more than {} deep",
                                 Limits.MaxBracketDepth));
        return false;
      }
      break;
    case MlsLexer::RPAREN:
    case MlsLexer::RBRACK:
    case MlsLexer::RBRACE:
      if (Depth > 0)
        --Depth;
      break;
    default:
      break;
    }
    if (T->getType() != MlsLexer::ERROR_CHAR)
      PrevError = nullptr;
  }
  return true;
}

/// How a token type reads in a message: `=`, "a name", "end of file".
std::string describeTokenType(size_t Type, const antlr4::dfa::Vocabulary &V) {
  switch (Type) {
  case antlr4::Token::EOF:
    return "end of file";
  case MlsParser::IDENT:
    return "a name";
  case MlsParser::QUANTITY:
    return "a quantity";
  case MlsParser::NUMBER:
    return "a number";
  case MlsParser::STRING:
    return "a string";
  case MlsParser::DATE:
    return "a date";
  default:
    break;
  }
  std::string Literal = V.getLiteralName(Type);
  if (Literal.size() >= 2 && Literal.front() == '\'')
    return "`" + Literal.substr(1, Literal.size() - 2) + "`";
  return V.getSymbolicName(Type);
}

std::string describeToken(const antlr4::Token *T) {
  if (!T || T->getType() == antlr4::Token::EOF)
    return "end of file";
  std::string Text = T->getText();
  if (Text.size() > 40)
    Text = Text.substr(0, 37) + "...";
  return "`" + Text + "`";
}

/// Prediction that takes a `+` or `-` after an operand as part of the sum.
/// A block item may begin with a sign, so after `x = a` the `- b` could also
/// start the next item; even SLL prediction settles that by scanning ahead to
/// the end of the chain at every operator, which is quadratic (a sum of
/// 100,000 terms took six minutes). Continuing the sum is the alternative
/// SLL picks whenever both readings parse, so only inputs that needed the
/// split change: they get a syntax error, and `;` separates such items.
class GreedySumPrediction : public antlr4::atn::ParserATNSimulator {
public:
  GreedySumPrediction(antlr4::Parser *P,
                      antlr4::atn::ParserATNSimulator &Default)
      : ParserATNSimulator(P, P->getATN(), Default.decisionToDFA,
                           Default.getSharedContextCache()) {
    for (size_t D = 0; D < atn.getNumberOfDecisions(); ++D) {
      antlr4::atn::DecisionState *S = atn.getDecisionState(D);
      if (S->ruleIndex == MlsParser::RuleAddExpr &&
          S->getStateType() == antlr4::atn::ATNState::STAR_LOOP_ENTRY)
        SumLoop = D;
    }
    assert(SumLoop != NoDecision && "addExpr has no `(addOp mulExpr)*` loop");
  }

  size_t adaptivePredict(antlr4::TokenStream *Input, size_t Decision,
                         antlr4::ParserRuleContext *Outer) override {
    if (Decision == SumLoop) {
      size_t Next = Input->LA(1);
      if (Next == MlsParser::PLUS || Next == MlsParser::MINUS)
        return 1; // the loop body, `addOp mulExpr`
    }
    return ParserATNSimulator::adaptivePredict(Input, Decision, Outer);
  }

private:
  static constexpr size_t NoDecision = static_cast<size_t>(-1);
  size_t SumLoop = NoDecision;
};

/// The generated parser with GreedySumPrediction in place of its default
/// simulator (both share the generated parser's DFA cache).
class MlsGreedyParser : public MlsParser {
public:
  explicit MlsGreedyParser(antlr4::TokenStream *Tokens) : MlsParser(Tokens) {
    auto *Default =
        static_cast<antlr4::atn::ParserATNSimulator *>(_interpreter);
    _interpreter = new GreedySumPrediction(this, *Default);
    delete Default; // MlsParser's destructor deletes _interpreter
  }
};

/// ANTLR's recovery, reporting without its messages. Its default strategy
/// spells each message out with the set of expected tokens, a walk of the
/// whole rule context; SyntaxErrorListener writes its own message and needs
/// only to know whether a token is missing, so the set is computed once.
class TerseErrorStrategy : public antlr4::DefaultErrorStrategy {
protected:
  void
  reportNoViableAlternative(antlr4::Parser *P,
                            const antlr4::NoViableAltException &E) override {
    P->notifyErrorListeners(E.getOffendingToken(), "no viable alternative",
                            nullptr);
  }
  void reportInputMismatch(antlr4::Parser *P,
                           const antlr4::InputMismatchException &E) override {
    P->notifyErrorListeners(E.getOffendingToken(), "mismatched input", nullptr);
  }
  void reportUnwantedToken(antlr4::Parser *P) override {
    if (inErrorRecoveryMode(P))
      return;
    beginErrorCondition(P);
    P->notifyErrorListeners(P->getCurrentToken(), "extraneous input", nullptr);
  }
  /// Whether the current token would match if one token were inserted
  /// before it. ANTLR asks its LL(1) analyser for what may follow the
  /// state after the missing token, in the full rule context; the ATN's
  /// cached follow sets of each rule give the same set, walking up the
  /// context only while a rule may end (ATN::getExpectedTokens).
  bool singleTokenInsertion(antlr4::Parser *P) override {
    size_t Current = P->getInputStream()->LA(1);
    const antlr4::atn::ATN &Atn = P->getATN();
    antlr4::atn::ATNState *Next =
        Atn.states[P->getState()]->transitions[0]->target;
    if (!Atn.getExpectedTokens(Next->stateNumber, P->getContext())
             .contains(Current))
      return false;
    reportMissingToken(P);
    return true;
  }
  void reportMissingToken(antlr4::Parser *P) override {
    if (inErrorRecoveryMode(P))
      return;
    beginErrorCondition(P);
    P->notifyErrorListeners(P->getCurrentToken(), "missing ", nullptr);
  }
};

/// Turns ANTLR's syntax errors into our diagnostics, with the expected set
/// when it is short enough to read.
class SyntaxErrorListener : public antlr4::BaseErrorListener {
public:
  SyntaxErrorListener(const SourceText &Src, DiagnosticEngine &Diags)
      : Src(Src), Diags(Diags) {}

  void syntaxError(antlr4::Recognizer *Recognizer, antlr4::Token *Offending,
                   size_t, size_t, const std::string &Msg,
                   std::exception_ptr) override {
    auto *P = dynamic_cast<antlr4::Parser *>(Recognizer);
    std::string Expected;
    if (P) {
      antlr4::misc::IntervalSet Set = P->getExpectedTokens();
      std::vector<ssize_t> Types = Set.toList();
      if (!Types.empty() && Types.size() <= 6) {
        std::vector<std::string> Names;
        for (ssize_t Ty : Types)
          Names.push_back(
              describeTokenType(static_cast<size_t>(Ty), P->getVocabulary()));
        Expected = Names.size() == 1 ? Names.front()
                                     : "one of " + llvm::join(Names, ", ");
      }
    }
    // The end of the file inside a bracket: say which bracket, and point
    // at it.
    if (P && Offending->getType() == antlr4::Token::EOF)
      if (antlr4::Token *Open = unclosedBracket(P->getTokenStream())) {
        std::string Text = Open->getText();
        const char *Close = Text == "{" ? "}" : Text == "(" ? ")" : "]";
        Diags
            .report(DiagKind::SyntaxError, Src.range(Offending),
                    fmt::format("unexpected end of file: the `{}` on line {} "
                                "is never closed",
                                Text, Open->getLine()))
            .note(DiagKind::OpenedHere, Src.range(Open),
                  fmt::format("`{}` opened here; close it with `{}`", Text,
                              Close));
        return;
      }
    std::string Message;
    if (llvm::StringRef(Msg).startswith("missing ") && !Expected.empty())
      Message = fmt::format("expected {} before {}", Expected,
                            describeToken(Offending));
    else if (!Expected.empty())
      Message = fmt::format("unexpected {}; expected {}",
                            describeToken(Offending), Expected);
    else
      Message = fmt::format("unexpected {}", describeToken(Offending));
    Diags.report(DiagKind::SyntaxError, Src.range(Offending), Message);
  }

private:
  const SourceText &Src;
  DiagnosticEngine &Diags;

  /// The innermost bracket of \p TS (read to its end) that no closing
  /// bracket matches, or null. A closing bracket closes the innermost open
  /// one of its kind (a stray one is ignored).
  static antlr4::Token *unclosedBracket(antlr4::TokenStream *TS) {
    std::vector<antlr4::Token *> Open;
    for (size_t I = 0; I < TS->size(); ++I) {
      antlr4::Token *T = TS->get(I);
      std::string Text = T->getText();
      if (Text == "{" || Text == "(" || Text == "[") {
        Open.push_back(T);
        continue;
      }
      const char *Opener = Text == "}"   ? "{"
                           : Text == ")" ? "("
                           : Text == "]" ? "["
                                         : nullptr;
      if (!Opener)
        continue;
      for (size_t K = Open.size(); K-- > 0;)
        if (Open[K]->getText() == Opener) {
          Open.resize(K);
          break;
        }
    }
    return Open.empty() ? nullptr : Open.back();
  }
};

/// A token the parser skipped or made up during error recovery. Most tokens
/// are plain terminals: their type is recognised by its type_info address,
/// without the name comparisons of a failing dynamic_cast (which libFuzzer
/// also records, one by one).
bool isErrorNode(antlr4::tree::ParseTree *N) {
  if (typeid(*N) == typeid(antlr4::tree::TerminalNodeImpl))
    return false;
  return dynamic_cast<antlr4::tree::ErrorNode *>(N) != nullptr;
}

/// A name the parser really read: error recovery leaves a `name` empty (or
/// holding skipped tokens) when the input had none there.
bool readName(MlsParser::NameContext *N) {
  return N && N->children.size() == 1 && !isErrorNode(N->children.front());
}

/// Every node error recovery touched: one that is, or holds, a token the
/// parser skipped or made up, a rule that failed, or a name left empty. A
/// syntax error was reported there, so what was built from it must not be
/// checked. One walk after the parse, children before parents and with a
/// stack of its own (the tree may be deep), so asking about a node costs a
/// lookup rather than a walk of its subtree at every level.
llvm::DenseSet<const antlr4::tree::ParseTree *>
recoveredNodes(antlr4::tree::ParseTree *Root) {
  llvm::DenseSet<const antlr4::tree::ParseTree *> Out;
  struct Frame {
    antlr4::tree::ParseTree *Node;
    size_t Next;
  };
  std::vector<Frame> Stack{{Root, 0}};
  while (!Stack.empty()) {
    Frame &F = Stack.back();
    if (F.Next < F.Node->children.size()) {
      antlr4::tree::ParseTree *Child = F.Node->children[F.Next++];
      Stack.push_back({Child, 0});
      continue;
    }
    antlr4::tree::ParseTree *N = F.Node;
    Stack.pop_back();
    bool Touched = false;
    // Only rule contexts have children; a leaf is a token (most often a
    // plain terminal) or an empty rule.
    antlr4::ParserRuleContext *Ctx = nullptr;
    if (!N->children.empty())
      Ctx = static_cast<antlr4::ParserRuleContext *>(N);
    else if (typeid(*N) != typeid(antlr4::tree::TerminalNodeImpl))
      Ctx = dynamic_cast<antlr4::ParserRuleContext *>(N);
    if (Ctx) {
      Touched = Ctx->exception != nullptr ||
                (Ctx->getRuleIndex() == MlsParser::RuleName &&
                 !readName(static_cast<MlsParser::NameContext *>(Ctx))) ||
                llvm::any_of(Ctx->children, [&](antlr4::tree::ParseTree *C) {
                  return Out.contains(C);
                });
    } else {
      Touched = isErrorNode(N);
    }
    if (Touched)
      Out.insert(N);
  }
  return Out;
}

/// Builds our AST from the parse tree. Tolerates the holes that error
/// recovery leaves (null children) by producing ErrorExpr; a declaration,
/// item or value that recovery touched is dropped or becomes an ErrorExpr,
/// so a syntax error gives no follow-on errors.
class ASTBuilder {
public:
  /// \p Recovered: the nodes error recovery touched (recoveredNodes).
  ASTBuilder(const SourceText &Src, DiagnosticEngine &Diags,
             const FrontendLimits &Limits,
             llvm::DenseSet<const antlr4::tree::ParseTree *> Recovered)
      : Src(Src), Diags(Diags), Limits(Limits),
        Recovered(std::move(Recovered)) {}

  void build(MlsParser::ModuleContext *Ctx, ast::Module &M) {
    for (MlsParser::TopDeclContext *D : Ctx->topDecl()) {
      if (auto *I = D->importDecl()) {
        if (!I->modulePath() || touched(I->modulePath()))
          continue;
        M.Imports.push_back({pathOf(I->modulePath()->name()), Src.range(I)});
        M.Order.emplace_back(0, M.Imports.size() - 1);
      } else if (auto *A = D->assertDecl()) {
        ast::AssertDecl Decl;
        Decl.Condition =
            touched(A->expr()) ? error(Src.range(A->expr())) : expr(A->expr());
        if (A->STRING())
          Decl.Message = unescape(A->STRING()->getText());
        Decl.Range = Src.range(A);
        M.Asserts.push_back(std::move(Decl));
        M.Order.emplace_back(1, M.Asserts.size() - 1);
      } else if (auto *L = D->letDecl()) {
        ast::LetDecl Decl;
        if (!readName(L->name()))
          continue;
        Decl.Name = L->name()->getText();
        Decl.NameRange = Src.range(L->name());
        valueExpr(L->valueExpr(), Decl.Value, Decl.Prov);
        Decl.Range = Src.range(L);
        M.Lets.push_back(std::move(Decl));
        M.Order.emplace_back(2, M.Lets.size() - 1);
      } else if (auto *E = D->entityDecl()) {
        if (!E->kind || !readName(E->entityName))
          continue;
        ast::EntityDecl Decl;
        Decl.Kind = E->kind->getText();
        Decl.KindRange = Src.range(E->kind);
        Decl.Name = E->entityName->getText();
        Decl.NameRange = Src.range(E->entityName);
        if (readName(E->base)) {
          Decl.Base = E->base->getText();
          Decl.BaseRange = Src.range(E->base);
        }
        if (E->block())
          Decl.Items = block(E->block());
        Decl.Range = Src.range(E);
        Decl.HasSyntaxError = touched(E);
        M.Entities.push_back(std::move(Decl));
        M.Order.emplace_back(3, M.Entities.size() - 1);
      }
    }
  }

private:
  const SourceText &Src;
  DiagnosticEngine &Diags;
  const FrontendLimits &Limits;
  llvm::DenseSet<const antlr4::tree::ParseTree *> Recovered;
  bool DepthReported = false;

  /// Whether error recovery touched \p Tree (see recoveredNodes).
  bool touched(antlr4::tree::ParseTree *Tree) const {
    return Recovered.contains(Tree);
  }

  ast::Path pathOf(const std::vector<MlsParser::NameContext *> &Names) {
    ast::Path P;
    for (MlsParser::NameContext *N : Names) {
      P.Parts.push_back(N->getText());
      P.PartRanges.push_back(Src.range(N));
    }
    if (!P.PartRanges.empty())
      P.Range = {P.PartRanges.front().Start, P.PartRanges.back().End};
    return P;
  }

  ast::ItemList block(MlsParser::BlockContext *Ctx) {
    ast::ItemList Items;
    for (MlsParser::BlockItemContext *I : Ctx->blockItem()) {
      ast::Item Item;
      Item.Range = Src.range(I);
      if (auto *A = dynamic_cast<MlsParser::AssignItemContext *>(I)) {
        if (!A->path() || touched(A->path()))
          continue;
        Item.K = ast::Item::Kind::Assign;
        Item.Target = pathOf(A->path()->name());
        valueExpr(A->valueExpr(), Item.Value, Item.Prov);
      } else if (auto *N = dynamic_cast<MlsParser::NestedItemContext *>(I)) {
        if (!N->path() || !N->block() || touched(N->path()))
          continue;
        Item.K = ast::Item::Kind::Block;
        Item.Target = pathOf(N->path()->name());
        Item.Children = block(N->block());
      } else if (auto *C =
                     dynamic_cast<MlsParser::ConstraintItemContext *>(I)) {
        Item.K = ast::Item::Kind::Constraint;
        Item.Value =
            touched(C->expr()) ? error(Src.range(C->expr())) : expr(C->expr());
      } else {
        continue;
      }
      Items.push_back(std::move(Item));
    }
    return Items;
  }

  void valueExpr(MlsParser::ValueExprContext *Ctx, ast::ExprPtr &Value,
                 ast::Provenance &Prov) {
    if (!Ctx || touched(Ctx)) {
      Value = error(Src.range(Ctx));
      return;
    }
    Value = expr(Ctx->expr());
    for (MlsParser::ProvenanceContext *P : Ctx->provenance()) {
      if (auto *F = dynamic_cast<MlsParser::FromProvenanceContext *>(P)) {
        if (F->name())
          Prov.FromSource = pathOf({F->name()});
      } else if (auto *N =
                     dynamic_cast<MlsParser::NoteProvenanceContext *>(P)) {
        if (N->STRING())
          Prov.Notes.push_back(unescape(N->STRING()->getText()));
      }
    }
  }

  // Every expression builder returns the tree and its depth through \p Depth.
  using Built = std::pair<ast::ExprPtr, unsigned>;

  ast::ExprPtr expr(MlsParser::ExprContext *Ctx) { return orExpr(Ctx).first; }

  ast::ExprPtr error(llvm::SMRange R) {
    return std::make_unique<ast::ErrorExpr>(R);
  }

  /// Joins \p Operand onto \p Acc with \p Op, refusing trees deeper than the
  /// limit (so later recursive passes and destructors cannot overflow).
  Built join(Built Acc, ast::BinaryOp Op, llvm::SMRange OpRange,
             Built Operand) {
    unsigned Depth = std::max(Acc.second, Operand.second) + 1;
    llvm::SMRange R = cover(Acc.first->range(), Operand.first->range());
    if (Depth > Limits.MaxExprDepth)
      return tooDeep(R);
    return {std::make_unique<ast::BinaryExpr>(
                R, Op, OpRange, std::move(Acc.first), std::move(Operand.first)),
            Depth};
  }

  Built tooDeep(llvm::SMRange R) {
    if (!DepthReported)
      Diags.report(DiagKind::NestingTooDeep, R,
                   fmt::format("expression nests more than {} operators deep",
                               Limits.MaxExprDepth));
    DepthReported = true;
    return {error(R), 1};
  }

  // The operator chains below fetch each child list once: ANTLR's indexed
  // accessors (`andExpr(I)`, `OR(I)`) scan all children, which would make a
  // long chain quadratic.

  Built orExpr(MlsParser::ExprContext *Ctx) {
    if (!Ctx || Ctx->andExpr().empty())
      return {error(Src.range(Ctx)), 1};
    std::vector<MlsParser::AndExprContext *> Operands = Ctx->andExpr();
    std::vector<antlr4::tree::TerminalNode *> Ops = Ctx->OR();
    Built Acc = andExpr(Operands[0]);
    for (size_t I = 1; I < Operands.size() && I - 1 < Ops.size(); ++I)
      Acc = join(std::move(Acc), ast::BinaryOp::Or,
                 Src.range(Ops[I - 1]->getSymbol()), andExpr(Operands[I]));
    return Acc;
  }

  Built andExpr(MlsParser::AndExprContext *Ctx) {
    if (!Ctx || Ctx->notExpr().empty())
      return {error(Src.range(Ctx)), 1};
    std::vector<MlsParser::NotExprContext *> Operands = Ctx->notExpr();
    std::vector<antlr4::tree::TerminalNode *> Ops = Ctx->AND();
    Built Acc = notExpr(Operands[0]);
    for (size_t I = 1; I < Operands.size() && I - 1 < Ops.size(); ++I)
      Acc = join(std::move(Acc), ast::BinaryOp::And,
                 Src.range(Ops[I - 1]->getSymbol()), notExpr(Operands[I]));
    return Acc;
  }

  Built notExpr(MlsParser::NotExprContext *Ctx) {
    if (!Ctx || !Ctx->cmpExpr())
      return {error(Src.range(Ctx)), 1};
    Built Operand = cmpExpr(Ctx->cmpExpr());
    auto Nots = Ctx->NOT();
    for (size_t I = Nots.size(); I-- > 0;) {
      llvm::SMRange OpR = Src.range(Nots[I]->getSymbol());
      if (++Operand.second > Limits.MaxExprDepth)
        return tooDeep(OpR);
      llvm::SMRange R = cover(OpR, Operand.first->range());
      Operand.first = std::make_unique<ast::UnaryExpr>(
          R, ast::UnaryOp::Not, OpR, std::move(Operand.first));
    }
    return Operand;
  }

  Built cmpExpr(MlsParser::CmpExprContext *Ctx) {
    if (!Ctx || Ctx->rangeExpr().empty())
      return {error(Src.range(Ctx)), 1};
    Built LHS = rangeExpr(Ctx->rangeExpr(0));
    if (!Ctx->cmpOp() || Ctx->rangeExpr().size() < 2)
      return LHS;
    static const std::pair<const char *, ast::BinaryOp> Ops[] = {
        {"<", ast::BinaryOp::Lt},  {"<=", ast::BinaryOp::Le},
        {">", ast::BinaryOp::Gt},  {">=", ast::BinaryOp::Ge},
        {"==", ast::BinaryOp::Eq}, {"!=", ast::BinaryOp::Ne},
        {"in", ast::BinaryOp::In}};
    std::string Text = Ctx->cmpOp()->getText();
    ast::BinaryOp Op = ast::BinaryOp::Eq;
    for (const auto &[Spelling, Value] : Ops)
      if (Text == Spelling)
        Op = Value;
    return join(std::move(LHS), Op, Src.range(Ctx->cmpOp()),
                rangeExpr(Ctx->rangeExpr(1)));
  }

  Built rangeExpr(MlsParser::RangeExprContext *Ctx) {
    if (!Ctx || Ctx->addExpr().empty())
      return {error(Src.range(Ctx)), 1};
    Built Lo = addExpr(Ctx->addExpr(0));
    if (Ctx->addExpr().size() < 2)
      return Lo;
    Built Hi = addExpr(Ctx->addExpr(1));
    Built Step{nullptr, 0};
    if (Ctx->addExpr().size() > 2)
      Step = addExpr(Ctx->addExpr(2));
    unsigned Depth = std::max({Lo.second, Hi.second, Step.second}) + 1;
    return {std::make_unique<ast::RangeExpr>(
                Src.range(Ctx), std::move(Lo.first), std::move(Hi.first),
                std::move(Step.first)),
            Depth};
  }

  Built addExpr(MlsParser::AddExprContext *Ctx) {
    if (!Ctx || Ctx->mulExpr().empty())
      return {error(Src.range(Ctx)), 1};
    std::vector<MlsParser::MulExprContext *> Operands = Ctx->mulExpr();
    std::vector<MlsParser::AddOpContext *> Ops = Ctx->addOp();
    Built Acc = mulExpr(Operands[0]);
    for (size_t I = 1; I < Operands.size() && I - 1 < Ops.size(); ++I) {
      MlsParser::AddOpContext *Op = Ops[I - 1];
      Acc = join(std::move(Acc),
                 Op->getText() == "+" ? ast::BinaryOp::Add : ast::BinaryOp::Sub,
                 Src.range(Op), mulExpr(Operands[I]));
    }
    return Acc;
  }

  Built mulExpr(MlsParser::MulExprContext *Ctx) {
    if (!Ctx || Ctx->unaryExpr().empty())
      return {error(Src.range(Ctx)), 1};
    std::vector<MlsParser::UnaryExprContext *> Operands = Ctx->unaryExpr();
    std::vector<MlsParser::MulOpContext *> Ops = Ctx->mulOp();
    Built Acc = unaryExpr(Operands[0]);
    for (size_t I = 1; I < Operands.size() && I - 1 < Ops.size(); ++I) {
      MlsParser::MulOpContext *Op = Ops[I - 1];
      Acc = join(std::move(Acc),
                 Op->getText() == "*" ? ast::BinaryOp::Mul : ast::BinaryOp::Div,
                 Src.range(Op), unaryExpr(Operands[I]));
    }
    return Acc;
  }

  Built applySigns(const std::vector<MlsParser::SignOpContext *> &Signs,
                   Built Operand) {
    for (size_t I = Signs.size(); I-- > 0;) {
      llvm::SMRange OpR = Src.range(Signs[I]);
      if (++Operand.second > Limits.MaxExprDepth)
        return tooDeep(OpR);
      llvm::SMRange R = cover(OpR, Operand.first->range());
      Operand.first = std::make_unique<ast::UnaryExpr>(
          R,
          Signs[I]->getText() == "-" ? ast::UnaryOp::Negate
                                     : ast::UnaryOp::Plus,
          OpR, std::move(Operand.first));
    }
    return Operand;
  }

  Built unaryExpr(MlsParser::UnaryExprContext *Ctx) {
    if (!Ctx || !Ctx->powExpr())
      return {error(Src.range(Ctx)), 1};
    return applySigns(Ctx->signOp(), powExpr(Ctx->powExpr()));
  }

  /// `a ^ b ^ -c` is `a ^ (b ^ (-c))`: fold the tail from the right.
  Built powExpr(MlsParser::PowExprContext *Ctx) {
    if (!Ctx || !Ctx->primary())
      return {error(Src.range(Ctx)), 1};
    std::vector<MlsParser::PowTailContext *> Tails = Ctx->powTail();
    if (Tails.empty())
      return primary(Ctx->primary());
    auto tailOperand = [&](MlsParser::PowTailContext *T) -> Built {
      if (!T->primary())
        return {error(Src.range(T)), 1};
      return applySigns(T->signOp(), primary(T->primary()));
    };
    Built Acc = tailOperand(Tails.back());
    for (size_t I = Tails.size() - 1; I-- > 0;)
      Acc = join(tailOperand(Tails[I]), ast::BinaryOp::Pow,
                 Src.range(Tails[I + 1]->CARET()->getSymbol()), std::move(Acc));
    return join(primary(Ctx->primary()), ast::BinaryOp::Pow,
                Src.range(Tails.front()->CARET()->getSymbol()), std::move(Acc));
  }

  Built list(const std::vector<MlsParser::ExprContext *> &Exprs,
             std::vector<ast::ExprPtr> &Out) {
    unsigned Depth = 0;
    for (MlsParser::ExprContext *E : Exprs) {
      Built B = orExpr(E);
      Depth = std::max(Depth, B.second);
      Out.push_back(std::move(B.first));
    }
    return {nullptr, Depth + 1};
  }

  Built primary(MlsParser::PrimaryContext *Ctx) {
    llvm::SMRange R = Src.range(Ctx);
    if (auto *Q = dynamic_cast<MlsParser::QuantityLitContext *>(Ctx))
      return {quantity(Q->QUANTITY()->getSymbol()), 1};
    if (auto *N = dynamic_cast<MlsParser::NumberLitContext *>(Ctx))
      return {std::make_unique<ast::NumberExpr>(R, N->getText(), "",
                                                llvm::SMRange()),
              1};
    if (auto *S = dynamic_cast<MlsParser::StringLitContext *>(Ctx))
      return {std::make_unique<ast::StringExpr>(R, unescape(S->getText())), 1};
    if (auto *D = dynamic_cast<MlsParser::DateLitContext *>(Ctx))
      return {date(D->getText(), R), 1};
    if (auto *B = dynamic_cast<MlsParser::BoolLitContext *>(Ctx))
      return {std::make_unique<ast::BoolExpr>(R, B->TRUE() != nullptr), 1};
    if (auto *P = dynamic_cast<MlsParser::ParenExprContext *>(Ctx)) {
      Built Inner = orExpr(P->expr());
      // The parentheses belong to the expression's text: a sweep column
      // `(a - b) / (c - d)` is named as written.
      if (Inner.first)
        Inner.first->setRange(R);
      return {std::move(Inner.first), Inner.second};
    }
    if (auto *L = dynamic_cast<MlsParser::ListExprContext *>(Ctx)) {
      std::vector<ast::ExprPtr> Items;
      Built B = list(L->expr(), Items);
      return {std::make_unique<ast::ListExpr>(R, std::move(Items)), B.second};
    }
    if (auto *C = dynamic_cast<MlsParser::CallExprContext *>(Ctx)) {
      if (!C->name())
        return {error(R), 1};
      std::vector<ast::ExprPtr> Args;
      Built B = list(C->expr(), Args);
      return {std::make_unique<ast::CallExpr>(R, C->name()->getText(),
                                              Src.range(C->name()),
                                              std::move(Args)),
              B.second};
    }
    if (auto *Ref = dynamic_cast<MlsParser::RefExprContext *>(Ctx)) {
      if (!Ref->path())
        return {error(R), 1};
      return {std::make_unique<ast::RefExpr>(R, pathOf(Ref->path()->name())),
              1};
    }
    return {error(R), 1};
  }

  /// Splits `3.35 TB/s` into its number and unit text.
  ast::ExprPtr quantity(antlr4::Token *T) {
    llvm::SMRange R = Src.range(T);
    llvm::StringRef Text(R.Start.getPointer(),
                         R.End.getPointer() - R.Start.getPointer());
    size_t I = 0;
    auto digits = [&] {
      while (I < Text.size() && (llvm::isDigit(Text[I]) || Text[I] == '_'))
        ++I;
    };
    digits();
    if (I < Text.size() && Text[I] == '.') {
      ++I;
      digits();
    }
    if (I + 1 < Text.size() && (Text[I] == 'e' || Text[I] == 'E')) {
      size_t J = I + 1;
      if (J < Text.size() && (Text[J] == '+' || Text[J] == '-'))
        ++J;
      if (J < Text.size() && llvm::isDigit(Text[J])) {
        I = J;
        digits();
      }
    }
    std::string Number = Text.take_front(I).str();
    size_t U = I;
    while (U < Text.size() && (Text[U] == ' ' || Text[U] == '\t'))
      ++U;
    llvm::SMRange UnitRange(llvm::SMLoc::getFromPointer(Text.data() + U),
                            R.End);
    return std::make_unique<ast::NumberExpr>(
        R, Number, Text.drop_front(U).str(), UnitRange);
  }

  ast::ExprPtr date(const std::string &Text, llvm::SMRange R) {
    int Year = std::stoi(Text.substr(0, 4));
    int Month = std::stoi(Text.substr(5, 2));
    int Day = std::stoi(Text.substr(8, 2));
    static const int DaysIn[] = {31, 29, 31, 30, 31, 30,
                                 31, 31, 30, 31, 30, 31};
    bool Leap = (Year % 4 == 0 && Year % 100 != 0) || Year % 400 == 0;
    bool Valid = Month >= 1 && Month <= 12 && Day >= 1 &&
                 Day <= DaysIn[Month - 1] &&
                 !(Month == 2 && Day == 29 && !Leap);
    if (!Valid) {
      Diags.report(
          DiagKind::InvalidDate, R,
          fmt::format("`{}` is not a calendar date (YYYY-MM-DD)", Text));
      return error(R);
    }
    return std::make_unique<ast::DateExpr>(R, Year, Month, Day);
  }

  static std::string unescape(const std::string &Quoted) {
    std::string Out;
    size_t End = Quoted.size();
    if (End >= 2 && Quoted.back() == '"')
      --End;
    for (size_t I = 1; I < End; ++I) {
      char C = Quoted[I];
      if (C == '\\' && I + 1 < End) {
        char N = Quoted[++I];
        Out += N == 'n' ? '\n' : N == 't' ? '\t' : N;
      } else if (C != '\\') {
        Out += C;
      }
    }
    return Out;
  }
};

} // namespace

namespace {

/// Marks, by token index, what `mlsc fmt` needs from the parse tree: where
/// each declaration and block item starts and ends, the `=` of each
/// assignment, the signs, and the soft keywords used as names.
class LayoutMarker {
public:
  explicit LayoutMarker(const std::vector<antlr4::Token *> &Tokens)
      : Flags(Tokens.size(), 0), Tokens(Tokens) {}

  enum : uint8_t { Start = 1, End = 2, Assign = 4, Sign = 8, IsName = 16 };
  std::vector<uint8_t> Flags;

  void module(MlsParser::ModuleContext *M) {
    for (MlsParser::TopDeclContext *D : M->topDecl()) {
      item(D);
      if (auto *L = D->letDecl())
        mark(L->ASSIGN(), Assign);
      if (auto *E = D->entityDecl())
        block(E->block());
    }
    walk(M);
  }

private:
  const std::vector<antlr4::Token *> &Tokens;

  void mark(antlr4::tree::TerminalNode *N, uint8_t F) {
    if (N)
      mark(N->getSymbol(), F);
  }
  void mark(antlr4::Token *T, uint8_t F) {
    if (T && T->getTokenIndex() < Flags.size())
      Flags[T->getTokenIndex()] |= F;
  }
  void item(antlr4::ParserRuleContext *C) {
    mark(C->getStart(), Start);
    antlr4::Token *Stop = C->getStop();
    mark(Stop, End);
    // An item's optional `;` may go: what it ends ends before it too.
    if (Stop && Stop->getType() == MlsLexer::SEMI)
      for (size_t I = Stop->getTokenIndex(); I-- > 0;)
        if (Tokens[I]->getChannel() == antlr4::Token::DEFAULT_CHANNEL) {
          mark(Tokens[I], End);
          break;
        }
  }
  void block(MlsParser::BlockContext *B) {
    if (!B)
      return;
    for (MlsParser::BlockItemContext *I : B->blockItem()) {
      item(I);
      if (auto *A = dynamic_cast<MlsParser::AssignItemContext *>(I))
        mark(A->ASSIGN(), Assign);
      else if (auto *N = dynamic_cast<MlsParser::NestedItemContext *>(I))
        block(N->block());
    }
  }
  /// Signs and names anywhere; the depth is bounded by the bracket limit.
  void walk(antlr4::tree::ParseTree *N) {
    if (auto *S = dynamic_cast<MlsParser::SignOpContext *>(N))
      mark(S->getStart(), Sign);
    else if (auto *Nm = dynamic_cast<MlsParser::NameContext *>(N))
      mark(Nm->getStart(), IsName);
    for (antlr4::tree::ParseTree *C : N->children)
      walk(C);
  }
};

SyntaxToken::Kind kindOf(size_t Type) {
  switch (Type) {
  case MlsLexer::IDENT:
    return SyntaxToken::Name;
  case MlsLexer::NUMBER:
    return SyntaxToken::Number;
  case MlsLexer::QUANTITY:
    return SyntaxToken::Quantity;
  case MlsLexer::STRING:
    return SyntaxToken::String;
  case MlsLexer::DATE:
    return SyntaxToken::Date;
  case MlsLexer::COMMENT:
    return SyntaxToken::Comment;
  case MlsLexer::IMPORT:
  case MlsLexer::ASSERT:
  case MlsLexer::FROM:
  case MlsLexer::NOTE:
  case MlsLexer::IN:
  case MlsLexer::TRUE:
  case MlsLexer::FALSE:
  case MlsLexer::LET:
  case MlsLexer::STEP:
  case MlsLexer::AND:
  case MlsLexer::OR:
  case MlsLexer::NOT:
    return SyntaxToken::Keyword;
  default:
    return SyntaxToken::Punct;
  }
}

/// parseModule and syntaxTokens: one front end. With \p Layout, a file
/// without errors also yields its tokens for the formatter.
void parseInto(unsigned BufferId, DiagnosticEngine &Diags,
               const FrontendLimits &Limits, ast::Module &M,
               std::vector<SyntaxToken> *Layout) {
  llvm::SourceMgr &SM = Diags.sourceMgr();
  M.BufferId = BufferId;
  M.FileName = SM.getMemoryBuffer(BufferId)->getBufferIdentifier().str();
  if (!checkRawBytes(BufferId, Diags, Limits))
    return;
  // Leading blank lines are not lexed: ANTLR's lexer takes a lock per
  // character, and --verify-diagnostics pads each case with the lines of
  // the cases before it. Locations stay those of the whole buffer.
  llvm::StringRef Whole = SM.getMemoryBuffer(BufferId)->getBuffer();
  // A UTF-8 byte-order mark is not part of the text.
  if (Whole.startswith("\xEF\xBB\xBF"))
    Whole = Whole.drop_front(3);
  SourceText Src(
      Whole.drop_front(std::min(Whole.find_first_not_of('\n'), Whole.size())));
  Lexed L = lex(Src.buffer(), Limits);
  if (!checkTokenCount(L, BufferId, Diags, Limits) ||
      !checkTokens(L, Src, Diags, Limits))
    return;
  MlsGreedyParser Parser(L.Tokens.get());
  // SLL prediction: the grammar needs no full-context lookahead, and in SLL
  // an ambiguity resolves to the lowest alternative, which keeps operator
  // loops greedy. Full LL would rescan a long `a + b + ...` chain inside a
  // block at every `+` (a `+` could also start the next item), which is
  // quadratic: a 1,000-term sum took 50 s.
  Parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
      antlr4::atn::PredictionMode::SLL);
  Parser.setErrorHandler(std::make_shared<TerseErrorStrategy>());
  Parser.removeErrorListeners();
  SyntaxErrorListener Listener(Src, Diags);
  Parser.addErrorListener(&Listener);
  MlsParser::ModuleContext *Tree = Parser.module();
  // Without a syntax error, recovery touched nothing: the builder need not
  // look for its traces.
  llvm::DenseSet<const antlr4::tree::ParseTree *> Recovered;
  if (Parser.getNumberOfSyntaxErrors() > 0)
    Recovered = recoveredNodes(Tree);
  ASTBuilder(Src, Diags, Limits, std::move(Recovered)).build(Tree, M);
  if (!Layout || Diags.hasErrors())
    return;
  const std::vector<antlr4::Token *> &Tokens = L.Tokens->getTokens();
  LayoutMarker Marks(Tokens);
  Marks.module(Tree);
  for (antlr4::Token *T : Tokens) {
    size_t Type = T->getType();
    if (Type == antlr4::Token::EOF || Type == MlsLexer::WS)
      continue;
    llvm::SMRange R = Src.range(T);
    SyntaxToken S;
    S.K = kindOf(Type);
    S.Text = llvm::StringRef(R.Start.getPointer(),
                             R.End.getPointer() - R.Start.getPointer());
    // A number whose unit turned out to be a keyword (`0.55 from src`)
    // keeps the spaces it was lexed with.
    if (S.K != SyntaxToken::Comment)
      S.Text = S.Text.rtrim(" \t");
    uint8_t F = Marks.Flags[T->getTokenIndex()];
    if (S.K == SyntaxToken::Keyword && (F & LayoutMarker::IsName))
      S.K = SyntaxToken::Name;
    S.ItemStart = F & LayoutMarker::Start;
    S.ItemEnd = F & LayoutMarker::End;
    S.AssignEq = F & LayoutMarker::Assign;
    S.Sign = F & LayoutMarker::Sign;
    Layout->push_back(S);
  }
}

} // namespace

std::unique_ptr<ast::Module> parseModule(unsigned BufferId,
                                         DiagnosticEngine &Diags,
                                         const FrontendLimits &Limits) {
  auto M = std::make_unique<ast::Module>();
  parseInto(BufferId, Diags, Limits, *M, nullptr);
  return M;
}

std::optional<std::vector<SyntaxToken>>
syntaxTokens(unsigned BufferId, DiagnosticEngine &Diags,
             const FrontendLimits &Limits) {
  ast::Module M;
  std::vector<SyntaxToken> Out;
  parseInto(BufferId, Diags, Limits, M, &Out);
  if (Diags.hasErrors())
    return std::nullopt;
  return Out;
}

void dumpTokens(unsigned BufferId, DiagnosticEngine &Diags,
                llvm::raw_ostream &OS, const FrontendLimits &Limits) {
  if (!checkRawBytes(BufferId, Diags, Limits))
    return;
  llvm::SourceMgr &SM = Diags.sourceMgr();
  SourceText Src(SM.getMemoryBuffer(BufferId)->getBuffer());
  Lexed L = lex(Src.buffer(), Limits);
  if (!checkTokenCount(L, BufferId, Diags, Limits))
    return;
  checkTokens(L, Src, Diags, Limits);
  const antlr4::dfa::Vocabulary &V = L.Lexer->getVocabulary();
  // Lines and columns counted as the tokens go, in one pass: asking the
  // SourceMgr for each token rescans its line, quadratic on one long line.
  llvm::StringRef Text = SM.getMemoryBuffer(BufferId)->getBuffer();
  const char *Scanned = Text.data();
  unsigned Line = 1, Column = 1;
  for (antlr4::Token *T : L.Tokens->getTokens()) {
    if (T->getChannel() != antlr4::Token::DEFAULT_CHANNEL)
      continue;
    const char *At = Src.range(T).Start.getPointer();
    for (; Scanned < At; ++Scanned) {
      if (*Scanned == '\n') {
        ++Line;
        Column = 1;
      } else if (*Scanned == '\r') {
        Column = 1;
      } else {
        ++Column;
      }
    }
    std::pair<unsigned, unsigned> LC{Line, Column};
    std::string Name = T->getType() == antlr4::Token::EOF
                           ? "EOF"
                           : V.getSymbolicName(T->getType());
    OS << LC.first << ":" << LC.second << " " << Name;
    if (T->getType() != antlr4::Token::EOF)
      OS << " `" << T->getText() << "`";
    OS << "\n";
  }
}

} // namespace mlsc
