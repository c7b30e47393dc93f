//===- Formatter.cpp - The canonical layout of .mls text ------------------===//
//
// Consumes the tokens of a file that parsed without errors (syntaxTokens:
// comments included, each marked with where declarations and items start
// and end) and produces the file's canonical text (Formatter.h lists the
// rules). Lines are kept as the author broke them; everything else is
// decided by the tokens. The output parses to the same IR as the input
// (fmt.test checks it over every .mls file in the repository), and
// formatting it again changes nothing.
//
//===----------------------------------------------------------------------===//

#include "frontend/Formatter.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <algorithm>

namespace mlsc {

namespace {

constexpr unsigned IndentWidth = 2;
/// Spaces between the longest line of a run and the comments that end it.
constexpr unsigned CommentGap = 2;

bool isText(const SyntaxToken &T, llvm::StringRef S) {
  return T.K == SyntaxToken::Punct && T.Text == S;
}
bool isOpener(const SyntaxToken &T) {
  return isText(T, "{") || isText(T, "(") || isText(T, "[");
}
bool isCloser(const SyntaxToken &T) {
  return isText(T, "}") || isText(T, ")") || isText(T, "]");
}
bool isKeyword(const SyntaxToken &T, llvm::StringRef S) {
  return T.K == SyntaxToken::Keyword && T.Text == S;
}

/// `3.35TB/s`, `3.35 \t TB/s` -> `3.35 TB/s`: the number as written, one
/// space, the unit (which holds no spaces).
std::string quantityText(llvm::StringRef Q) {
  size_t I = numberBodyLength(Q);
  llvm::StringRef Unit = Q.drop_front(I).ltrim(" \t");
  // `70.6e9` lexes as a quantity too (a unit `e9`), and reads as a number.
  if (Unit.empty())
    return Q.take_front(I).str();
  // A percentage is written as one: `50%`.
  if (Unit.startswith("%"))
    return (Q.take_front(I) + Unit).str();
  return (Q.take_front(I) + " " + Unit).str();
}

/// Whether one space separates \p A and the token \p B that follows it on
/// a line.
bool spaceBetween(const SyntaxToken &A, const SyntaxToken &B) {
  if (isText(B, ",") || isText(B, ";") || isText(B, ")") || isText(B, "]") ||
      isText(B, "."))
    return false;
  if (isText(A, "(") || isText(A, "[") || isText(A, ".") || A.Sign)
    return false;
  if (isText(A, "{") && isText(B, "}"))
    return false;
  // A call: `max(a, b)`.
  if (isText(B, "(") && A.K == SyntaxToken::Name)
    return false;
  return true;
}

std::string tokenText(const SyntaxToken &T) {
  if (T.K == SyntaxToken::Quantity)
    return quantityText(T.Text);
  if (T.K == SyntaxToken::Comment)
    return T.Text.rtrim(" \t\f\v").str();
  return T.Text.str();
}

struct Line {
  std::vector<size_t> Code; ///< indexes of the code tokens kept
  std::optional<size_t> Comment;
  bool BlankBefore = false;
  unsigned Indent = 0;
  /// The code before the `=` that is aligned, and from it on.
  std::string Head, Tail;
  bool Aligned = false; ///< a one-line assignment: Head is its path
};

} // namespace

std::string formatTokens(llvm::ArrayRef<SyntaxToken> Toks) {
  // Source lines, each its code tokens and a comment that ends it.
  std::vector<Line> Lines;
  for (size_t I = 0; I < Toks.size(); ++I) {
    size_t Breaks = 0;
    if (I > 0) {
      // `\n`, `\r\n` and a lone `\r` each end a line.
      for (const char *P = Toks[I - 1].Text.end(); P < Toks[I].Text.begin();
           ++P)
        Breaks += *P == '\n' ||
                  (*P == '\r' && (P + 1 == Toks[I].Text.end() || P[1] != '\n'));
    }
    // A second comment on a line can only follow a lone carriage return
    // the caller did not turn into a newline: a line of its own.
    bool SecondComment = Toks[I].K == SyntaxToken::Comment && !Lines.empty() &&
                         Lines.back().Comment;
    if (Lines.empty() || Breaks > 0 || SecondComment) {
      Lines.emplace_back();
      Lines.back().BlankBefore = Breaks > 1;
    }
    if (Toks[I].K == SyntaxToken::Comment)
      Lines.back().Comment = I;
    else
      Lines.back().Code.push_back(I);
  }

  // `;` separates items on one line; elsewhere it goes when the next item
  // cannot read as a continuation of the last (a name or a declaration
  // keyword starts it, or a `}` or the end of the file follows).
  auto nextCode = [&](size_t I) -> const SyntaxToken * {
    for (size_t J = I + 1; J < Toks.size(); ++J)
      if (Toks[J].K != SyntaxToken::Comment)
        return &Toks[J];
    return nullptr;
  };
  for (Line &L : Lines) {
    for (size_t P = 0; P < L.Code.size(); ++P) {
      size_t I = L.Code[P];
      if (!isText(Toks[I], ";"))
        continue;
      const SyntaxToken *N = nextCode(I);
      bool LastOnLine = P + 1 == L.Code.size();
      bool Drop = !N || isText(*N, "}") ||
                  (LastOnLine && N->ItemStart &&
                   (N->K == SyntaxToken::Name || isKeyword(*N, "import") ||
                    isKeyword(*N, "assert") || isKeyword(*N, "let")) &&
                   !N->Text.equals("note") && !N->Text.equals("step"));
      if (Drop) {
        L.Code.erase(L.Code.begin() + P);
        --P;
      }
    }
  }

  // Indentation: one level per open bracket; a closer at the start of a
  // line closes before it; a line that continues an item (outside round and
  // square brackets, which indent by themselves) one level more.
  std::vector<const SyntaxToken *> Open;
  for (Line &L : Lines) {
    if (L.Code.empty()) {
      L.Indent = Open.size();
    } else {
      size_t Closers = 0;
      while (Closers < L.Code.size() && isCloser(Toks[L.Code[Closers]]))
        ++Closers;
      const SyntaxToken &First = Toks[L.Code.front()];
      size_t Depth = Open.size() - std::min(Closers, Open.size());
      bool Continues = Closers == 0 && !First.ItemStart &&
                       (Open.empty() || isText(*Open.back(), "{"));
      L.Indent = Depth + (Continues ? 1 : 0);
    }
    for (size_t I : L.Code) {
      if (isOpener(Toks[I]))
        Open.push_back(&Toks[I]);
      else if (isCloser(Toks[I]) && !Open.empty())
        Open.pop_back();
    }
  }

  // The code of each line, split at the `=` of a one-line assignment.
  for (Line &L : Lines) {
    std::string *Into = &L.Head;
    unsigned Starts = 0, Assigns = 0;
    for (size_t I : L.Code) {
      Starts += Toks[I].ItemStart;
      Assigns += Toks[I].AssignEq;
    }
    L.Aligned = !L.Code.empty() && Toks[L.Code.front()].ItemStart &&
                Starts == 1 && Assigns == 1 && Toks[L.Code.back()].ItemEnd;
    for (size_t P = 0; P < L.Code.size(); ++P) {
      const SyntaxToken &T = Toks[L.Code[P]];
      if (L.Aligned && T.AssignEq)
        Into = &L.Tail;
      else if (P > 0 && spaceBetween(Toks[L.Code[P - 1]], T))
        *Into += ' ';
      *Into += tokenText(T);
    }
  }

  // Runs of one-line assignments at one indentation align their `=`. A
  // blank line, a line at another indentation or an item over several
  // lines ends a run; a comment line or other one-line items (a nested
  // block, items apart by `;`) at the same indentation do not.
  auto oneLineItems = [&](const Line &L) {
    return !L.Code.empty() && Toks[L.Code.front()].ItemStart &&
           Toks[L.Code.back()].ItemEnd;
  };
  for (size_t B = 0; B < Lines.size();) {
    if (!Lines[B].Aligned) {
      ++B;
      continue;
    }
    size_t E = B + 1;
    while (
        E < Lines.size() && !Lines[E].BlankBefore &&
        Lines[E].Indent == Lines[B].Indent &&
        (Lines[E].Aligned || oneLineItems(Lines[E]) || Lines[E].Code.empty()))
      ++E;
    size_t Width = 0;
    for (size_t I = B; I < E; ++I)
      if (Lines[I].Aligned)
        Width = std::max(Width, Lines[I].Head.size());
    for (size_t I = B; I < E; ++I) {
      Line &L = Lines[I];
      if (!L.Aligned)
        continue;
      L.Head += std::string(Width - L.Head.size() + 1, ' ');
      L.Head += L.Tail;
      L.Tail.clear();
    }
    B = E;
  }

  // The text, and the comments that end a run of consecutive lines
  // aligned.
  std::vector<std::string> Out;
  std::vector<bool> Blank;
  for (size_t I = 0; I < Lines.size(); ++I) {
    const Line &L = Lines[I];
    if (L.Code.empty() && !L.Comment)
      continue; // only a `;` that went
    std::string Text;
    if (!L.Head.empty())
      Text = std::string(L.Indent * IndentWidth, ' ') + L.Head;
    bool AfterOpen = !Out.empty() && I > 0 && !Lines[I - 1].Code.empty() &&
                     isText(Toks[Lines[I - 1].Code.back()], "{");
    bool BeforeClose = !L.Code.empty() && isCloser(Toks[L.Code.front()]);
    Blank.push_back(L.BlankBefore && !Out.empty() && !AfterOpen &&
                    !BeforeClose);
    Out.push_back(std::move(Text));
  }
  // Comments, in a second pass over the kept lines.
  std::vector<const Line *> Kept;
  for (const Line &L : Lines)
    if (!L.Code.empty() || L.Comment)
      Kept.push_back(&L);
  for (size_t B = 0; B < Kept.size();) {
    auto trailing = [&](size_t I) {
      return Kept[I]->Comment && !Kept[I]->Code.empty();
    };
    if (!Kept[B]->Comment) {
      ++B;
      continue;
    }
    if (!trailing(B)) {
      Out[B] = std::string(Kept[B]->Indent * IndentWidth, ' ') +
               tokenText(Toks[*Kept[B]->Comment]);
      ++B;
      continue;
    }
    size_t E = B + 1;
    while (E < Kept.size() && trailing(E) && !Blank[E])
      ++E;
    size_t Width = 0;
    for (size_t I = B; I < E; ++I)
      Width = std::max(Width, Out[I].size());
    for (size_t I = B; I < E; ++I)
      Out[I] += std::string(Width - Out[I].size() + CommentGap, ' ') +
                tokenText(Toks[*Kept[I]->Comment]);
    B = E;
  }

  std::string Text;
  for (size_t I = 0; I < Out.size(); ++I) {
    if (Blank[I])
      Text += '\n';
    Text += Out[I];
    Text += '\n';
  }
  return Text;
}

std::optional<std::string> formatBuffer(unsigned BufferId,
                                        DiagnosticEngine &Diags,
                                        const FrontendLimits &Limits) {
  std::optional<std::vector<SyntaxToken>> Toks =
      syntaxTokens(BufferId, Diags, Limits);
  if (!Toks)
    return std::nullopt;
  return formatTokens(*Toks);
}

namespace {

/// Myers' O(ND) difference of two sequences of lines: the edit script as
/// kinds, ' ' (a line of both), '-' (of A only) or '+' (of B only). Keeps
/// each step's frontier (D^2 integers); beyond MaxEdits differences, the
/// script is all of A out and all of B in.
std::vector<char> editScript(const std::vector<llvm::StringRef> &A,
                             const std::vector<llvm::StringRef> &B) {
  constexpr int MaxEdits = 4000;
  const int N = A.size(), M = B.size(), Max = std::min(N + M, MaxEdits);
  // V[K] for diagonals -Max-1 .. Max+1; Trace[D] is the part of it the
  // step D + 1 read: diagonals -D-1 .. D+1.
  std::vector<int> V(2 * Max + 3, 0);
  const int Offset = Max + 1;
  std::vector<std::vector<int>> Trace;
  int D = 0;
  bool Done = false;
  for (; D <= Max && !Done; ++D) {
    Trace.emplace_back(V.begin() + Offset - D - 1, V.begin() + Offset + D + 2);
    for (int K = -D; K <= D; K += 2) {
      int X = (K == -D || (K != D && V[Offset + K - 1] < V[Offset + K + 1]))
                  ? V[Offset + K + 1]
                  : V[Offset + K - 1] + 1;
      int Y = X - K;
      while (X < N && Y < M && A[X] == B[Y]) {
        ++X;
        ++Y;
      }
      V[Offset + K] = X;
      if (X >= N && Y >= M) {
        Done = true;
        break;
      }
    }
  }
  if (!Done) {
    std::vector<char> All(N, '-');
    All.insert(All.end(), M, '+');
    return All;
  }
  --D;
  // Back from the end, through the saved frontiers.
  std::vector<char> Script;
  int X = N, Y = M;
  for (; D > 0; --D) {
    const std::vector<int> &P = Trace[D];
    auto at = [&](int K) { return P[K + D + 1]; };
    int K = X - Y;
    int PrevK = (K == -D || (K != D && at(K - 1) < at(K + 1))) ? K + 1 : K - 1;
    int PrevX = at(PrevK), PrevY = PrevX - PrevK;
    for (; X > PrevX && Y > PrevY; --X, --Y)
      Script.push_back(' ');
    if (X == PrevX) {
      Script.push_back('+');
      --Y;
    } else {
      Script.push_back('-');
      --X;
    }
  }
  for (; X > 0; --X)
    Script.push_back(' ');
  std::reverse(Script.begin(), Script.end());
  return Script;
}

std::vector<llvm::StringRef> linesOf(llvm::StringRef S) {
  std::vector<llvm::StringRef> Out;
  while (!S.empty()) {
    auto [L, R] = S.split('\n');
    Out.push_back(L);
    S = R;
  }
  return Out;
}

} // namespace

std::string unifiedDiff(llvm::StringRef Before, llvm::StringRef After,
                        llvm::StringRef NameA, llvm::StringRef NameB) {
  if (Before == After)
    return "";
  std::vector<llvm::StringRef> A = linesOf(Before), B = linesOf(After);
  // Lines the two share at either end are not handed to the O(ND) search,
  // whose frontiers it keeps: formatting changes lines all over a file.
  size_t Pre = 0;
  while (Pre < A.size() && Pre < B.size() && A[Pre] == B[Pre])
    ++Pre;
  size_t Suf = 0;
  while (Suf + Pre < A.size() && Suf + Pre < B.size() &&
         A[A.size() - 1 - Suf] == B[B.size() - 1 - Suf])
    ++Suf;
  std::vector<llvm::StringRef> MidA(A.begin() + Pre, A.end() - Suf);
  std::vector<llvm::StringRef> MidB(B.begin() + Pre, B.end() - Suf);
  // Each entry: kind, line in A, line in B.
  struct Op {
    char Kind;
    size_t InA, InB;
  };
  std::vector<Op> Ops;
  for (size_t I = 0; I < Pre; ++I)
    Ops.push_back({' ', I, I});
  size_t IA = Pre, IB = Pre;
  for (char Kind : editScript(MidA, MidB)) {
    Ops.push_back({Kind, IA, IB});
    if (Kind != '+')
      ++IA;
    if (Kind != '-')
      ++IB;
  }
  for (size_t I = 0; I < Suf; ++I)
    Ops.push_back({' ', IA + I, IB + I});

  constexpr size_t Context = 3;
  std::string Out = fmt::format("--- {}\n+++ {}\n", NameA.str(), NameB.str());
  for (size_t I = 0; I < Ops.size();) {
    if (Ops[I].Kind == ' ') {
      ++I;
      continue;
    }
    // A hunk: from Context lines before this change to Context lines after
    // the last change closer than 2 * Context to the one before it.
    size_t Begin = I >= Context ? I - Context : 0, End = I;
    while (true) {
      size_t J = End;
      while (J < Ops.size() && Ops[J].Kind != ' ')
        ++J;
      size_t Next = J;
      while (Next < Ops.size() && Ops[Next].Kind == ' ')
        ++Next;
      if (Next < Ops.size() && Next - J <= 2 * Context) {
        End = Next;
        continue;
      }
      End = std::min(Ops.size(), J + Context);
      break;
    }
    size_t LenA = 0, LenB = 0;
    for (size_t K = Begin; K < End; ++K) {
      LenA += Ops[K].Kind != '+';
      LenB += Ops[K].Kind != '-';
    }
    Out += fmt::format("@@ -{},{} +{},{} @@\n", Ops[Begin].InA + (LenA ? 1 : 0),
                       LenA, Ops[Begin].InB + (LenB ? 1 : 0), LenB);
    for (size_t K = Begin; K < End; ++K) {
      const Op &O = Ops[K];
      Out += O.Kind;
      Out += (O.Kind == '+' ? B[O.InB] : A[O.InA]).str();
      Out += '\n';
    }
    I = End;
  }
  if (Ops.size() == Pre + Suf && Pre == A.size())
    Out += "(the files differ only in their line endings or final newline)\n";
  return Out;
}

} // namespace mlsc
