//===- Lsp.cpp - `mlsc lsp`: a language server over stdio -----------------===//
//
// The Language Server Protocol (3.17) over standard input and output:
// JSON-RPC messages framed by `Content-Length` headers. It compiles each
// open document on every change, with the pipeline `mlsc eval` runs, and
// answers from that compilation:
//   - textDocument/publishDiagnostics: the diagnostics mlsc prints, with
//     their kinds as codes;
//   - hover: a value's dimension, its value in display and SI units and its
//     origin (a literal, a source record, a derivation, a scenario's graph);
//   - definition: of names, fields, lets, scenarios, `from` sources, bases
//     and imports;
//   - completion: the fields of an entity's kind (inside its block), the
//     fields of `NAME.`, and the names in scope;
//   - formatting: `mlsc fmt` (frontend/Formatter.h).
// Positions are UTF-16 code units, as the protocol counts them.
// docs/editors.md, "Language server".
//
//===----------------------------------------------------------------------===//

#include "tools/mlsc/Driver.h"

#include "frontend/Formatter.h"
#include "ir/Schema.h"
#include "runtime/Evaluator.h"
#include "runtime/Format.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <iostream>
#include <map>
#include <set>

namespace mlsc::driver {

namespace {

using json = nlohmann::json;

/// \p J's member \p K, or null (never the undefined behaviour of a const
/// operator[] on a missing key).
const json &at(const json &J, const char *K) {
  static const json Null;
  if (!J.is_object())
    return Null;
  auto It = J.find(K);
  return It == J.end() ? Null : *It;
}

/// A string member, or "".
std::string text(const json &J, const char *K) {
  const json &V = at(J, K);
  return V.is_string() ? V.get<std::string>() : "";
}

// ------------------------------------------------------------ positions

/// `file:///a%20b/x.mls` -> `/a b/x.mls`.
std::string uriToPath(llvm::StringRef Uri) {
  if (!Uri.consume_front("file://"))
    return Uri.str();
  std::string Out;
  for (size_t I = 0; I < Uri.size(); ++I) {
    unsigned V;
    if (Uri[I] == '%' && I + 2 < Uri.size() &&
        !Uri.substr(I + 1, 2).getAsInteger(16, V)) {
      Out += static_cast<char>(V);
      I += 2;
    } else {
      Out += Uri[I];
    }
  }
  return Out;
}

std::string pathToUri(llvm::StringRef Path) {
  std::string Out = "file://";
  for (char C : Path) {
    if (llvm::isAlnum(C) || llvm::StringRef("/-._~").contains(C))
      Out += C;
    else
      Out += fmt::format("%{:02X}", static_cast<unsigned char>(C));
  }
  return Out;
}

/// UTF-16 code units in the UTF-8 text \p S.
unsigned utf16Length(llvm::StringRef S) {
  unsigned N = 0;
  for (size_t I = 0; I < S.size(); ++I) {
    unsigned char C = S[I];
    if ((C & 0xC0) == 0x80)
      continue; // a continuation byte
    N += (C >= 0xF0) ? 2 : 1;
  }
  return N;
}

/// An LSP position (0-based line, UTF-16 column) of \p P in \p Buffer.
json position(llvm::StringRef Buffer, const char *P) {
  if (P < Buffer.begin() || P > Buffer.end())
    P = Buffer.begin();
  llvm::StringRef Before(Buffer.begin(), P - Buffer.begin());
  size_t LineStart = Before.rfind('\n');
  LineStart = LineStart == llvm::StringRef::npos ? 0 : LineStart + 1;
  return {{"line", Before.count('\n')},
          {"character", utf16Length(Before.drop_front(LineStart))}};
}

/// The byte offset of LSP position \p Pos in \p Text (clamped).
size_t offsetOf(llvm::StringRef Text, const json &Pos) {
  const json &LJ = at(Pos, "line"), &CJ = at(Pos, "character");
  int64_t Line = LJ.is_number_integer() ? LJ.get<int64_t>() : 0;
  int64_t Char = CJ.is_number_integer() ? CJ.get<int64_t>() : 0;
  size_t At = 0;
  for (int64_t L = 0; L < Line && At < Text.size(); ++L) {
    size_t NL = Text.find('\n', At);
    if (NL == llvm::StringRef::npos)
      return Text.size();
    At = NL + 1;
  }
  for (int64_t C = 0; C < Char && At < Text.size() && Text[At] != '\n';) {
    unsigned char B = Text[At];
    size_t Len = B < 0x80 ? 1 : B >= 0xF0 ? 4 : B >= 0xE0 ? 3 : 2;
    C += Len == 4 ? 2 : 1;
    At += Len;
  }
  return std::min(At, Text.size());
}

// ------------------------------------------------------------- documents

/// An open document and its last compilation.
struct Document {
  std::string Uri, Path, Text;
  std::unique_ptr<Compilation> C;
  unsigned Main = 0; ///< the document's buffer in C->SM
};

bool contains(llvm::SMRange R, const char *P) {
  return R.isValid() && R.Start.getPointer() <= P && P <= R.End.getPointer();
}

/// The innermost reference (to an entity, field, let or metric) in \p E
/// that covers \p P.
const ir::Expr *referenceAt(const ir::Expr &E, const char *P) {
  if (!contains(E.Range, P))
    return nullptr;
  for (const ir::ExprPtr &O : E.Operands)
    if (const ir::Expr *R = referenceAt(*O, P))
      return R;
  switch (E.Kind) {
  case ir::ExprKind::EntityRef:
  case ir::ExprKind::FieldRef:
  case ir::ExprKind::MetricRef:
  case ir::ExprKind::LetRef:
    return &E;
  default:
    return nullptr;
  }
}

/// The word (an identifier) around \p Offset in \p Text, and where it
/// starts.
std::pair<std::string, size_t> wordAt(llvm::StringRef Text, size_t Offset) {
  auto isWord = [](char C) { return llvm::isAlnum(C) || C == '_'; };
  size_t B = Offset, E = Offset;
  while (B > 0 && isWord(Text[B - 1]))
    --B;
  while (E < Text.size() && isWord(Text[E]))
    ++E;
  return {Text.slice(B, E).str(), B};
}

/// `\r\n` and a lone `\r` end lines as `\n` does, for the client; the text
/// keeps its length, so offsets hold.
std::string normalizeLineEnds(std::string S) {
  for (size_t I = 0; I < S.size(); ++I)
    if (S[I] == '\r' && (I + 1 == S.size() || S[I + 1] != '\n'))
      S[I] = '\n';
  return S;
}

class Server {
public:
  explicit Server(const DriverOptions &O) : O(O) {}

  /// Reads and answers messages until `exit`; the process's exit code.
  int run() {
    std::string Body;
    while (read(Body)) {
      json M = json::parse(Body, nullptr, /*allow_exceptions=*/false);
      if (M.is_discarded() || !M.is_object()) {
        reply(nullptr, nullptr, {{"code", -32700}, {"message", "parse error"}});
        continue;
      }
      std::string Method = text(M, "method");
      json Id = at(M, "id");
      if (Method == "exit")
        return ShutDown ? 0 : 1;
      // Params of the wrong shape: an error for a request, nothing for a
      // notification; the server goes on.
      try {
        handle(Method, Id, at(M, "params"));
      } catch (const json::exception &E) {
        if (!Id.is_null())
          reply(Id, nullptr,
                {{"code", -32602},
                 {"message", std::string("invalid params: ") + E.what()}});
      }
    }
    return ShutDown ? 0 : 1;
  }

private:
  const DriverOptions &O;
  std::map<std::string, Document> Docs;
  bool ShutDown = false;

  // ------------------------------------------------------------ framing

  bool read(std::string &Body) {
    size_t Length = 0;
    bool Have = false;
    std::string Line;
    while (std::getline(std::cin, Line)) {
      if (!Line.empty() && Line.back() == '\r')
        Line.pop_back();
      if (Line.empty()) {
        if (!Have)
          continue;
        // A message this large is not an editor's: skipped, the server
        // goes on with the next.
        if (Length > (64u << 20)) {
          std::cin.ignore(static_cast<std::streamsize>(Length));
          Have = false;
          continue;
        }
        Body.assign(Length, '\0');
        std::cin.read(Body.data(), static_cast<std::streamsize>(Length));
        return static_cast<size_t>(std::cin.gcount()) == Length;
      }
      llvm::StringRef L(Line);
      if (L.consume_front_insensitive("content-length:")) {
        // Without a length the messages cannot be told apart: stop.
        if (L.trim().getAsInteger(10, Length))
          return false;
        Have = true;
      }
    }
    return false;
  }

  void send(const json &M) {
    // Text from a file (a path in a message) may not be UTF-8.
    std::string Text = M.dump(-1, ' ', false, json::error_handler_t::replace);
    llvm::outs() << "Content-Length: " << Text.size() << "\r\n\r\n" << Text;
    llvm::outs().flush();
  }

  void reply(const json &Id, const json &Result, const json &Error = json()) {
    json M = {{"jsonrpc", "2.0"}, {"id", Id}};
    if (!Error.is_null())
      M["error"] = Error;
    else
      M["result"] = Result;
    send(M);
  }

  void notify(const std::string &Method, const json &Params) {
    send({{"jsonrpc", "2.0"}, {"method", Method}, {"params", Params}});
  }

  // ----------------------------------------------------------- dispatch

  void handle(const std::string &Method, const json &Id, const json &P) {
    bool Request = !Id.is_null();
    if (Method == "initialize") {
      reply(Id,
            {{"capabilities",
              {{"textDocumentSync", 1},
               {"hoverProvider", true},
               {"definitionProvider", true},
               {"documentFormattingProvider", true},
               {"completionProvider",
                {{"triggerCharacters", json::array({"."})}}}}},
             {"serverInfo", {{"name", "mlsc"}, {"version", MLSC_VERSION}}}});
    } else if (Method == "shutdown") {
      ShutDown = true;
      reply(Id, nullptr);
    } else if (Method == "textDocument/didOpen") {
      const json &D = at(P, "textDocument");
      update(text(D, "uri"), text(D, "text"));
    } else if (Method == "textDocument/didChange") {
      const json &Changes = at(P, "contentChanges");
      if (Changes.is_array() && !Changes.empty())
        update(text(at(P, "textDocument"), "uri"),
               text(Changes.back(), "text"));
    } else if (Method == "textDocument/didClose") {
      std::string Uri = text(at(P, "textDocument"), "uri");
      Docs.erase(Uri);
      notify("textDocument/publishDiagnostics",
             {{"uri", Uri}, {"diagnostics", json::array()}});
    } else if (Method == "textDocument/hover") {
      reply(Id, hover(P));
    } else if (Method == "textDocument/definition") {
      reply(Id, definition(P));
    } else if (Method == "textDocument/completion") {
      reply(Id, completion(P));
    } else if (Method == "textDocument/formatting") {
      reply(Id, formatting(P));
    } else if (Request) {
      reply(Id, nullptr,
            {{"code", -32601}, {"message", "method not found: " + Method}});
    }
  }

  // -------------------------------------------------------- compilation

  void update(const std::string &Uri, std::string Text) {
    if (Uri.empty())
      return; // a notification without a document
    Document &D = Docs[Uri];
    D.Uri = Uri;
    D.Path = uriToPath(Uri);
    D.Text = normalizeLineEnds(std::move(Text));
    D.C = std::make_unique<Compilation>();
    D.C->Options = O.Compile;
    compile(*D.C, llvm::MemoryBuffer::getMemBufferCopy(D.Text, D.Path));
    D.Main = D.C->Program.MainBufferId;
    if (!D.Main)
      D.Main = 1; // the first buffer added is the document's
    notify("textDocument/publishDiagnostics",
           {{"uri", Uri}, {"diagnostics", diagnostics(D)}});
  }

  json diagnostics(Document &D) {
    json Out = json::array();
    llvm::SourceMgr &SM = D.C->SM;
    llvm::StringRef Main = SM.getMemoryBuffer(D.Main)->getBuffer();
    for (const Diagnostic &G : D.C->Diags.diagnostics()) {
      json Item;
      llvm::SMRange R =
          G.Range.isValid() ? G.Range : llvm::SMRange(G.Loc, G.Loc);
      std::string Message = G.Message;
      unsigned Buf =
          R.Start.isValid() ? SM.FindBufferContainingLoc(R.Start) : 0;
      if (Buf == D.Main) {
        Item["range"] = {{"start", position(Main, R.Start.getPointer())},
                         {"end", position(Main, R.End.getPointer())}};
      } else {
        // In an imported file (or about a whole file): shown at the top,
        // saying where.
        if (Buf) {
          auto [Line, Col] = SM.getLineAndColumn(R.Start, Buf);
          Message =
              fmt::format("{}:{}:{}: {}",
                          SM.getMemoryBuffer(Buf)->getBufferIdentifier().str(),
                          Line, Col, Message);
        } else if (!G.File.empty()) {
          Message = G.File + ": " + Message;
        }
        Item["range"] = {{"start", {{"line", 0}, {"character", 0}}},
                         {"end", {{"line", 0}, {"character", 0}}}};
      }
      Item["severity"] = G.Level == Severity::Error     ? 1
                         : G.Level == Severity::Warning ? 2
                                                        : 3;
      Item["code"] = diagKindInfo(G.Kind).Name;
      Item["source"] = "mlsc";
      Item["message"] = Message;
      json Related = json::array();
      for (const Diagnostic &N : G.Notes) {
        if (!N.Range.isValid())
          continue;
        unsigned NB = SM.FindBufferContainingLoc(N.Range.Start);
        if (!NB)
          continue;
        llvm::StringRef Text = SM.getMemoryBuffer(NB)->getBuffer();
        std::string Id = SM.getMemoryBuffer(NB)->getBufferIdentifier().str();
        Related.push_back(
            {{"location",
              {{"uri", NB == D.Main ? D.Uri : pathToUri(Id)},
               {"range",
                {{"start", position(Text, N.Range.Start.getPointer())},
                 {"end", position(Text, N.Range.End.getPointer())}}}}},
             {"message", N.Message}});
      }
      if (!Related.empty())
        Item["relatedInformation"] = Related;
      Out.push_back(Item);
    }
    return Out;
  }

  Document *document(const json &P) {
    auto It = Docs.find(text(at(P, "textDocument"), "uri"));
    return It == Docs.end() ? nullptr : &It->second;
  }

  /// A location in \p C: the URI of its buffer and the LSP range.
  json location(const Document &D, llvm::SMRange R) {
    llvm::SourceMgr &SM = D.C->SM;
    unsigned Buf = SM.FindBufferContainingLoc(R.Start);
    if (!Buf)
      return nullptr;
    llvm::StringRef Text = SM.getMemoryBuffer(Buf)->getBuffer();
    // In the document itself: its URI as the client sent it (an unsaved
    // `untitled:` buffer included).
    if (Buf == D.Main)
      return {{"uri", D.Uri},
              {"range",
               {{"start", position(Text, R.Start.getPointer())},
                {"end", position(Text, R.End.getPointer())}}}};
    std::string Path = SM.getMemoryBuffer(Buf)->getBufferIdentifier().str();
    llvm::SmallString<256> Abs(Path);
    llvm::sys::fs::make_absolute(Abs);
    llvm::sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
    return {{"uri", pathToUri(Abs)},
            {"range",
             {{"start", position(Text, R.Start.getPointer())},
              {"end", position(Text, R.End.getPointer())}}}};
  }

  /// Every expression of the main file, with the field it belongs to.
  template <typename Fn> void eachExpr(const Document &D, Fn F) {
    const ir::Program &P = D.C->Program;
    auto inMain = [&](llvm::SMRange R) {
      return R.isValid() && D.C->SM.FindBufferContainingLoc(R.Start) == D.Main;
    };
    for (const auto &E : P.Entities)
      for (const ir::Field &Fd : E->Fields) {
        if (Fd.InheritedFrom || !inMain(Fd.Range))
          continue;
        if (Fd.Value)
          F(*Fd.Value, &Fd, E.get());
        for (const ir::ExprPtr &X : Fd.Conditions)
          F(*X, &Fd, E.get());
      }
    for (const auto &L : P.Lets)
      if (L->Value && inMain(L->NameRange))
        F(*L->Value, nullptr, nullptr);
    for (const ir::Assert &A : P.Asserts)
      if (A.Condition)
        F(*A.Condition, nullptr, nullptr);
  }

  // -------------------------------------------------------------- hover

  static std::string valueText(const std::optional<ir::Value> &V) {
    if (!V)
      return "";
    if (V->Kind == ir::TypeKind::Quantity) {
      std::string Display = formatQuantity(V->Number, V->Dim);
      std::string SI =
          fmt::format("{} {}", formatNumber(V->Number), V->Dim.str());
      return fmt::format("`{}`  (SI: `{}`)", Display,
                         llvm::StringRef(SI).trim());
    }
    return "`" + ir::valueToString(*V) + "`";
  }

  std::string whereIs(const Document &D, llvm::SMRange R) {
    if (!R.isValid())
      return "";
    unsigned Buf = D.C->SM.FindBufferContainingLoc(R.Start);
    if (!Buf)
      return "";
    auto [Line, Col] = D.C->SM.getLineAndColumn(R.Start, Buf);
    std::string Id = D.C->SM.getMemoryBuffer(Buf)->getBufferIdentifier().str();
    return fmt::format("{}:{}", llvm::sys::path::filename(Id).str(), Line);
  }

  std::string fieldHover(const Document &D, const ir::Entity &E,
                         const ir::Field &F) {
    std::string Type = F.Value ? F.Value->Ty.str() : "";
    std::string S = fmt::format("**`{}.{}`**", E.Name, F.Path);
    if (!Type.empty())
      S += " : `" + Type + "`";
    if (std::string V = valueText(F.Folded); !V.empty())
      S += "\n\n= " + V;
    std::string Origin;
    if (F.Value) {
      bool Literal = F.Value->Kind == ir::ExprKind::Number;
      Origin = Literal ? "literal `" + ir::sourceText(F.Value->Range) + "`"
                       : "derived: `" + ir::exprToString(*F.Value) + "`";
    }
    if (F.Source)
      Origin += ", from `" + F.Source->Name + "`";
    if (F.InheritedFrom)
      Origin += ", inherited from `" + F.InheritedFrom->Name + "`";
    if (!F.Notes.empty())
      Origin += " (" + llvm::join(F.Notes, "; ") + ")";
    if (!Origin.empty())
      S += "\n\n" + Origin + " — " + whereIs(D, F.Range);
    if (F.Schema && !F.Schema->Doc.empty())
      S += "\n\n" + F.Schema->Doc;
    return S;
  }

  std::string letHover(const Document &D, const ir::Let &L) {
    std::string S = fmt::format("**`let {}`**", L.Name);
    if (L.Value)
      S += " : `" + L.Value->Ty.str() + "`";
    if (L.Folded) {
      S += "\n\n= " + valueText(L.Folded);
    } else if (auto At = letNode(*D.C, L.Name)) {
      S += "\n\n= " + graphValue(*At->first, At->second) + ", from scenario `" +
           At->first->Scenario + "`";
    }
    if (L.Value)
      S += "\n\nderived: `" + ir::exprToString(*L.Value) + "` — " +
           whereIs(D, L.NameRange);
    return S;
  }

  static std::string graphValue(const graph::Graph &G, graph::NodeId N) {
    Evaluator E(G);
    E.run();
    const graph::Node &Node = G.node(N);
    double V = E.value(N);
    if (Node.IsBool)
      return V != 0 ? "`true`" : "`false`";
    return fmt::format("`{}`  (SI: `{} {}`)", formatQuantity(V, Node.Dim),
                       formatNumber(V), Node.Dim.str());
  }

  std::string metricHover(const Document &D, const ir::Expr &R) {
    std::string Path = llvm::join(R.Path, ".");
    std::string S = fmt::format("**`{}.{}`**", R.Target->Name, Path);
    if (!R.Ty.isError())
      S += " : `" + R.Ty.str() + "`";
    for (const graph::Graph &G : D.C->Graphs)
      if (G.Scenario == R.Target->Name)
        if (std::optional<graph::NodeId> N = G.findNamed(Path)) {
          S += "\n\n= " + graphValue(G, *N);
          S += fmt::format("\n\ncomputed by scenario `{}`; `mlsc explain "
                           "FILE {}.{}` shows its derivation",
                           G.Scenario, G.Scenario, Path);
          return S;
        }
    return S + "\n\nnot computed for this scenario (see `mlsc eval`)";
  }

  /// Where a request points: the byte offset, the pointer into the
  /// compiled buffer, and the reference of an expression there, if any.
  struct Cursor {
    size_t Off = 0;
    const char *At = nullptr;
    const ir::Expr *Ref = nullptr;
  };
  Cursor cursor(Document &D, const json &P) {
    Cursor C;
    C.Off = offsetOf(D.Text, at(P, "position"));
    llvm::StringRef Buf = D.C->SM.getMemoryBuffer(D.Main)->getBuffer();
    C.At = Buf.begin() + std::min(C.Off, Buf.size());
    eachExpr(D, [&](const ir::Expr &E, const ir::Field *, const ir::Entity *) {
      if (!C.Ref)
        C.Ref = referenceAt(E, C.At);
    });
    return C;
  }

  json hover(const json &P) {
    Document *D = document(P);
    if (!D || !D->C)
      return nullptr;
    auto [Off, At, Ref] = cursor(*D, P);
    std::string Text;
    // A reference in an expression.
    if (Ref) {
      if (Ref->Kind == ir::ExprKind::LetRef && Ref->LetTarget)
        Text = letHover(*D, *Ref->LetTarget);
      else if (Ref->Kind == ir::ExprKind::MetricRef && Ref->Target)
        Text = metricHover(*D, *Ref);
      else if (Ref->Kind == ir::ExprKind::FieldRef && Ref->Target)
        if (const ir::Field *F = Ref->Target->field(llvm::join(Ref->Path, ".")))
          Text = fieldHover(*D, *Ref->Target, *F);
      if (Text.empty() && Ref->Target)
        Text = entityHover(*D, *Ref->Target);
    }
    // A name: an entity, a let.
    auto [Word, Start] = wordAt(D->Text, Off);
    if (Text.empty() && !Word.empty()) {
      if (const ir::Entity *E = D->C->Program.entity(Word))
        Text = entityHover(*D, *E);
      else if (const ir::Let *L = D->C->Program.LetByName.lookup(Word))
        Text = letHover(*D, *L);
    }
    // The field an assignment writes.
    if (Text.empty())
      for (const auto &E : D->C->Program.Entities)
        for (const ir::Field &F : E->Fields)
          if (!F.InheritedFrom && contains(F.Range, At) &&
              D->C->SM.FindBufferContainingLoc(F.Range.Start) == D->Main &&
              llvm::StringRef(F.Path).contains(Word))
            Text = fieldHover(*D, *E, F);
    if (Text.empty())
      return nullptr;
    return {{"contents", {{"kind", "markdown"}, {"value", Text}}}};
  }

  std::string entityHover(const Document &D, const ir::Entity &E) {
    std::string S = fmt::format("**`{} {}`**", E.Kind, E.Name);
    if (E.Base)
      S += " : `" + E.Base->Name + "`";
    S += " — " + whereIs(D, E.NameRange);
    if (E.Schema && !E.Schema->Doc.empty())
      S += "\n\n" + E.Schema->Doc;
    return S;
  }

  // --------------------------------------------------------- definition

  json definition(const json &P) {
    Document *D = document(P);
    if (!D || !D->C)
      return nullptr;
    auto [Off, At, Ref] = cursor(*D, P);
    if (Ref) {
      if (Ref->Kind == ir::ExprKind::LetRef && Ref->LetTarget)
        return location(*D, Ref->LetTarget->NameRange);
      if (Ref->Kind == ir::ExprKind::FieldRef && Ref->Target) {
        // The word under the cursor: the entity, or the field.
        auto [Word, Start] = wordAt(D->Text, Off);
        if (Word != Ref->Target->Name)
          if (const ir::Field *F =
                  Ref->Target->field(llvm::join(Ref->Path, ".")))
            return location(*D, F->Range);
      }
      if (Ref->Target)
        return location(*D, Ref->Target->NameRange);
    }
    auto [Word, Start] = wordAt(D->Text, Off);
    // An import: the module's file.
    llvm::StringRef Line = llvm::StringRef(D->Text).substr(
        llvm::StringRef(D->Text).rfind('\n', Off) + 1);
    Line = Line.take_until([](char C) { return C == '\n'; });
    if (Line.ltrim().startswith("import ")) {
      std::string Module = Line.ltrim()
                               .drop_front(7)
                               .take_until([](char C) {
                                 return C == ';' || C == '#' || C == ' ';
                               })
                               .str();
      std::string Tail = Module;
      std::replace(Tail.begin(), Tail.end(), '.', '/');
      Tail += ".mls";
      for (unsigned B = 1; B <= D->C->SM.getNumBuffers(); ++B) {
        std::string Id =
            D->C->SM.getMemoryBuffer(B)->getBufferIdentifier().str();
        if (B != D->Main &&
            (Id == Tail || llvm::StringRef(Id).endswith("/" + Tail))) {
          const char *Begin = D->C->SM.getMemoryBuffer(B)->getBufferStart();
          return location(*D,
                          llvm::SMRange(llvm::SMLoc::getFromPointer(Begin),
                                        llvm::SMLoc::getFromPointer(Begin)));
        }
      }
      return nullptr;
    }
    // A name: an entity (a `from` source, a base), a let.
    if (const ir::Entity *E = D->C->Program.entity(Word))
      return location(*D, E->NameRange);
    if (const ir::Let *L = D->C->Program.LetByName.lookup(Word))
      return location(*D, L->NameRange);
    return nullptr;
  }

  // --------------------------------------------------------- completion

  json completion(const json &P) {
    json Items = json::array();
    Document *D = document(P);
    if (!D || !D->C)
      return Items;
    size_t Off = offsetOf(D->Text, at(P, "position"));
    llvm::StringRef Text = D->Text;
    // The path being written before the cursor: `H100_SXM.hb`.
    size_t B = Off;
    while (B > 0 && (llvm::isAlnum(Text[B - 1]) || Text[B - 1] == '_' ||
                     Text[B - 1] == '.'))
      --B;
    llvm::StringRef Written = Text.slice(B, Off);
    auto [Head, Rest] = Written.split('.');
    auto add = [&](const std::string &Label, int Kind,
                   const std::string &Detail) {
      Items.push_back({{"label", Label}, {"kind", Kind}, {"detail", Detail}});
    };
    constexpr int FieldKind = 5, ClassKind = 7, VariableKind = 6,
                  KeywordKind = 14;
    if (Written.contains('.')) {
      // The fields (and, for a scenario, the values) of an entity.
      const ir::Entity *E = D->C->Program.entity(Head);
      if (!E || !E->Schema)
        return Items;
      llvm::StringRef Prefix = Rest.rsplit('.').first;
      if (!Rest.contains('.'))
        Prefix = "";
      std::set<std::string> Seen;
      auto offer = [&](llvm::StringRef Path, const std::string &Detail) {
        if (!Prefix.empty() && !Path.startswith((Prefix + ".").str()))
          return;
        llvm::StringRef Label =
            Prefix.empty() ? Path : Path.drop_front(Prefix.size() + 1);
        if (Seen.insert(Label.str()).second)
          add(Label.str(), FieldKind, Detail);
      };
      for (const FieldSchema &F : E->Schema->Fields)
        offer(F.Path, F.Doc);
      for (const MetricSchema &M : E->Schema->Metrics)
        offer(M.Path, "metric");
      return Items;
    }
    // At the start of a line inside a block: the fields of its kind.
    llvm::StringRef LineBefore = Text.slice(Text.rfind('\n', B) + 1, B);
    const char *At = D->C->SM.getMemoryBuffer(D->Main)->getBufferStart() +
                     std::min(Off, D->Text.size());
    if (LineBefore.trim().empty()) {
      const ir::Entity *Inner = nullptr;
      for (const auto &E : D->C->Program.Entities)
        if (contains(E->Range, At) &&
            D->C->SM.FindBufferContainingLoc(E->Range.Start) == D->Main &&
            (!Inner ||
             E->Range.Start.getPointer() >= Inner->Range.Start.getPointer()))
          Inner = E.get();
      if (Inner && Inner->Schema) {
        // Inside nested blocks (`parallel {`), the fields under their path.
        const char *Begin = Inner->NameRange.End.getPointer();
        const char *Head = std::find(Begin, At, '{');
        std::vector<std::string> Nested;
        int Depth = 0;
        for (const char *P = At; P > Head + 1;) {
          --P;
          if (*P == '}') {
            ++Depth;
          } else if (*P == '{' && Depth > 0) {
            --Depth;
          } else if (*P == '{') {
            const char *E = P;
            while (E > Head && (*(E - 1) == ' ' || *(E - 1) == '\t'))
              --E;
            const char *S = E;
            while (S > Head && (llvm::isAlnum(*(S - 1)) || *(S - 1) == '_' ||
                                *(S - 1) == '.'))
              --S;
            Nested.insert(Nested.begin(), std::string(S, E));
          }
        }
        std::string Prefix = llvm::join(Nested, ".");
        for (const FieldSchema &F : Inner->Schema->Fields) {
          llvm::StringRef Path = F.Path;
          if (!Prefix.empty() && !Path.consume_front(Prefix + "."))
            continue;
          add(Path.str(), FieldKind, F.Doc);
        }
        return Items;
      }
      for (const char *K : {"import", "let", "assert"})
        add(K, KeywordKind, "keyword");
      for (const KindSchema &K : allKinds())
        add(K.Name, KeywordKind, K.Doc);
      return Items;
    }
    // Elsewhere: the names in scope.
    for (const auto &E : D->C->Program.Entities)
      add(E->Name, ClassKind, E->Kind);
    for (const auto &L : D->C->Program.Lets)
      add(L->Name, VariableKind, "let");
    return Items;
  }

  // --------------------------------------------------------- formatting

  json formatting(const json &P) {
    Document *D = document(P);
    if (!D)
      return nullptr;
    llvm::SourceMgr SM;
    DiagnosticEngine Diags(SM);
    unsigned Id = SM.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(D->Text, D->Path), llvm::SMLoc());
    std::optional<std::string> Out = formatBuffer(Id, Diags, O.Compile.Limits);
    if (!Out)
      return nullptr; // a file with errors is not formatted
    if (*Out == D->Text)
      return json::array();
    llvm::StringRef Text = D->Text;
    return json::array({{{"range",
                          {{"start", {{"line", 0}, {"character", 0}}},
                           {"end", position(Text, Text.end())}}},
                         {"newText", *Out}}});
  }
};

} // namespace

int lspCommand(const DriverOptions &O) {
  std::ios::sync_with_stdio(false);
  return Server(O).run();
}

} // namespace mlsc::driver
