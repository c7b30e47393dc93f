//===- BuildIR.cpp - Declare, flatten, check fields, resolve names --------===//
//
// Consumes Compilation::Modules (ASTs); produces Program::Entities, Lets and
// Asserts with every field's expression lowered to IR and every name bound:
// fields of the enclosing entity, then lets and entities, dotted paths into
// other entities' fields and metrics. Inheritance (`KIND NAME : BASE`) is
// flattened: a derived entity takes its base's assignments, then its own;
// inherited expressions are re-resolved in the derived entity, so an
// override changes everything computed from it. Diagnoses UnknownKind,
// DuplicateDefinition, UnknownField, MissingField, InheritanceCycle,
// KindMismatch, UnknownName, UnknownEnumValue, UnknownUnit, NumberOutOfRange
// and BadFunctionCall.
//
//===----------------------------------------------------------------------===//

#include "ir/Units.h"
#include "passes/Pipeline.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>

namespace mlsc {

namespace {

using ir::Entity;
using ir::Expr;
using ir::ExprKind;
using ir::ExprPtr;

/// A field assignment collected while flattening, before lowering.
struct Assignment {
  std::string Path;
  const ast::Item *Item = nullptr; ///< Assign or a Block of conditions;
                                   ///< null for a variant (`: inference`)
  const Entity *WrittenIn = nullptr;
  llvm::SMRange VariantRange;
};

ir::UnaryOp irOperator(ast::UnaryOp Op) {
  switch (Op) {
  case ast::UnaryOp::Negate:
    return ir::UnaryOp::Negate;
  case ast::UnaryOp::Plus:
    return ir::UnaryOp::Plus;
  case ast::UnaryOp::Not:
    return ir::UnaryOp::Not;
  }
  llvm_unreachable("unknown unary operator");
}

ir::BinaryOp irOperator(ast::BinaryOp Op) {
  using A = ast::BinaryOp;
  using I = ir::BinaryOp;
  switch (Op) {
  case A::Add:
    return I::Add;
  case A::Sub:
    return I::Sub;
  case A::Mul:
    return I::Mul;
  case A::Div:
    return I::Div;
  case A::Pow:
    return I::Pow;
  case A::Lt:
    return I::Lt;
  case A::Le:
    return I::Le;
  case A::Gt:
    return I::Gt;
  case A::Ge:
    return I::Ge;
  case A::Eq:
    return I::Eq;
  case A::Ne:
    return I::Ne;
  case A::In:
    return I::In;
  case A::And:
    return I::And;
  case A::Or:
    return I::Or;
  }
  llvm_unreachable("unknown binary operator");
}

/// The bundled module (`registries.hardware.nvidia`) that declares each
/// top-level entity name under \p DataDir's registries/ and stdlib/: what
/// an unknown name's diagnostic suggests importing. Read once per data
/// folder and process (only when a name is unknown), by a scan of each
/// file's lines for `KIND NAME {` or `KIND NAME : BASE {`.
const llvm::StringMap<std::string> &bundledNames(const std::string &DataDir) {
  static std::map<std::string, llvm::StringMap<std::string>> Cache;
  // Compilations on several threads share the cache; once built, a map is
  // only read.
  static std::mutex Lock;
  std::lock_guard<std::mutex> Hold(Lock);
  auto [It, New] = Cache.try_emplace(DataDir);
  if (!New)
    return It->second;
  llvm::StringMap<std::string> &Names = It->second;
  for (const char *Top : {"stdlib", "registries"}) {
    std::error_code EC;
    std::string Root = DataDir + "/" + Top;
    for (llvm::sys::fs::recursive_directory_iterator
             F(Root, EC, /*follow_symlinks=*/false),
         End;
         F != End && !EC; F.increment(EC)) {
      llvm::StringRef Path = F->path();
      if (!Path.endswith(".mls"))
        continue;
      llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> Buf =
          llvm::MemoryBuffer::getFile(Path, /*IsText=*/true);
      if (!Buf || (*Buf)->getBufferSize() > (4u << 20))
        continue;
      // registries/hardware/nvidia.mls -> registries.hardware.nvidia
      std::string Module =
          Path.drop_front(DataDir.size() + 1).drop_back(4).str();
      std::replace(Module.begin(), Module.end(), '/', '.');
      llvm::SmallVector<llvm::StringRef, 0> Lines;
      (*Buf)->getBuffer().split(Lines, '\n');
      for (llvm::StringRef Line : Lines) {
        if (Line.empty() || !isalpha(static_cast<unsigned char>(Line[0])))
          continue; // declarations start a line
        auto [Kind, Rest] = Line.split(' ');
        llvm::StringRef Name = Rest.ltrim().take_while([](char C) {
          return isalnum(static_cast<unsigned char>(C)) || C == '_';
        });
        llvm::StringRef After = Rest.ltrim().drop_front(Name.size()).ltrim();
        if (Name.empty() || Kind == "import" || Kind == "let" ||
            !(After.startswith("{") || After.startswith(":")))
          continue;
        Names.try_emplace(Name, Module);
      }
    }
  }
  return Names;
}

class IRBuilder {
public:
  explicit IRBuilder(Compilation &C) : C(C), P(C.Program), Diags(C.Diags) {}

  void run() {
    declare();
    for (auto &E : P.Entities)
      resolveBase(*E);
    for (auto &E : P.Entities)
      flatten(*E);
    for (auto &E : P.Entities)
      lowerFields(*E);
    for (auto &L : P.Lets)
      lowerLet(*L);
    for (const auto &M : C.Modules)
      if (M->BufferId == P.MainBufferId)
        for (const ast::AssertDecl &A : M->Asserts)
          P.Asserts.push_back({lower(A.Condition.get(), nullptr), A.Message,
                               A.Range, std::nullopt});
  }

private:
  Compilation &C;
  ir::Program &P;
  /// The declaration each entity and let was built from: the IR keeps
  /// source ranges only, so the AST stays in this pass.
  llvm::DenseMap<const Entity *, const ast::EntityDecl *> EntityDecls;
  llvm::DenseMap<const ir::Let *, const ast::LetDecl *> LetDecls;
  DiagnosticEngine &Diags;
  std::map<const Entity *, std::vector<Assignment>> Flat;
  std::map<const Entity *, int> FlattenState; ///< 1 visiting, 2 done
  /// Edit distances the did-you-mean suggestions may still compute.
  size_t SuggestBudget = 2000000;
  std::map<const KindSchema *, std::vector<std::string>> ScopeNames;
  /// Unit texts already parsed: a registry writes `TB/s` and `GB` dozens of
  /// times.
  llvm::StringMap<Unit> ParsedUnits;

  // ------------------------------------------------------------ declare

  void declare() {
    llvm::StringMap<llvm::SMRange> Seen;
    auto claim = [&](const std::string &Name, llvm::SMRange R) {
      auto [It, Inserted] = Seen.try_emplace(Name, R);
      if (Inserted)
        return true;
      Diags
          .report(DiagKind::DuplicateDefinition, R,
                  fmt::format("`{}` is already defined", Name))
          .note(DiagKind::PreviousDefinition, It->second,
                "previous definition is here");
      return false;
    };
    std::vector<std::string> KindNames;
    for (const KindSchema &K : allKinds())
      KindNames.push_back(K.Name);
    auto declareLet = [&](const ast::LetDecl &L) {
      if (!claim(L.Name, L.NameRange))
        return;
      auto Let = std::make_unique<ir::Let>();
      Let->Name = L.Name;
      Let->NameRange = L.NameRange;
      LetDecls[Let.get()] = &L;
      P.LetByName[L.Name] = Let.get();
      P.Lets.push_back(std::move(Let));
    };
    auto declareEntity = [&](const ast::EntityDecl &D) {
      const KindSchema *K = findKind(D.Kind);
      if (!K) {
        Diagnostic &Diag =
            Diags.report(DiagKind::UnknownKind, D.KindRange,
                         fmt::format("unknown entity kind `{}`", D.Kind));
        std::string Close = closestMatch(D.Kind, KindNames, &SuggestBudget);
        if (!Close.empty()) {
          Diag.Message += fmt::format("; did you mean `{}`?", Close);
          Diag.fixIt(D.KindRange, Close);
        }
        return;
      }
      if (!claim(D.Name, D.NameRange))
        return;
      auto E = std::make_unique<Entity>();
      E->Kind = D.Kind;
      E->Schema = K;
      E->Name = D.Name;
      E->NameRange = D.NameRange;
      E->Range = D.Range;
      EntityDecls[E.get()] = &D;
      P.EntityByName[D.Name] = E.get();
      P.Entities.push_back(std::move(E));
    };
    // In source order, so the first definition is the one kept and the
    // duplicate's note points back to it.
    for (const auto &M : C.Modules)
      for (auto [Tag, Index] : M->Order) {
        if (Tag == 2)
          declareLet(M->Lets[Index]);
        else if (Tag == 3)
          declareEntity(M->Entities[Index]);
      }
  }

  // --------------------------------------------------------- inheritance

  void resolveBase(Entity &E) {
    const ast::EntityDecl &D = *EntityDecls.lookup(&E);
    if (!D.Base)
      return;
    Entity *B = P.entity(*D.Base);
    if (!B && E.Schema->isVariant(*D.Base))
      return; // `workload chat : inference` sets the variant field
    if (!B) {
      std::vector<std::string> Candidates = E.Schema->Variants;
      for (const auto &O : P.Entities)
        if (O->Kind == E.Kind && O.get() != &E)
          Candidates.push_back(O->Name);
      reportUnknownName(*D.Base, D.BaseRange, Candidates,
                        fmt::format("{} to derive from", withArticle(E.Kind)));
      E.Erroneous = true;
      return;
    }
    if (B->Kind != E.Kind) {
      Diags
          .report(DiagKind::KindMismatch, D.BaseRange,
                  fmt::format("{} `{}` cannot derive from `{}`, which is {}",
                              E.Kind, E.Name, B->Name, withArticle(B->Kind)))
          .note(DiagKind::DeclaredHere, B->NameRange,
                fmt::format("`{}` is declared here", B->Name));
      E.Erroneous = true;
      return;
    }
    E.Base = B;
  }

  /// Collects the assignments of \p E, base first; detects cycles. The
  /// chain of bases is walked with a loop, not recursion: a file may
  /// derive 40,000 entities one from the next.
  const std::vector<Assignment> &flatten(Entity &E) {
    // E and its bases up to the first one already flattened.
    std::vector<Entity *> Chain;
    for (Entity *X = &E; X; X = X->Base) {
      int &State = FlattenState[X];
      if (State == 2)
        break;
      if (State == 1) { // X is on the chain: it derives from itself
        Diags.report(DiagKind::InheritanceCycle,
                     EntityDecls.lookup(X)->BaseRange,
                     fmt::format("`{}` derives from itself through `{}`",
                                 X->Name, X->Base->Name));
        X->Erroneous = true;
        X->Base = nullptr;
        break;
      }
      State = 1;
      Chain.push_back(X);
    }
    for (auto It = Chain.rbegin(); It != Chain.rend(); ++It)
      flattenOne(**It);
    return Flat[&E];
  }

  /// Flattens \p E, whose base (if any) is flattened or, in a cycle, cut.
  void flattenOne(Entity &E) {
    std::vector<Assignment> Result;
    if (E.Base) {
      Entity *Base = E.Base;
      Result = Flat[Base];
      if (Base->Erroneous)
        E.Erroneous = true;
    }
    const ast::EntityDecl &D = *EntityDecls.lookup(&E);
    if (D.Base && !E.Base && !E.Erroneous && E.Schema->isVariant(*D.Base))
      Result.push_back({E.Schema->VariantField, nullptr, &E, D.BaseRange});
    std::map<std::string, llvm::SMRange> Own;
    collect(E, EntityDecls.lookup(&E)->Items, "", Result, Own);
    if (D.HasSyntaxError)
      E.Erroneous = true;
    FlattenState[&E] = 2;
    Flat[&E] = std::move(Result);
  }

  void collect(Entity &E, const ast::ItemList &Items, const std::string &Prefix,
               std::vector<Assignment> &Out,
               std::map<std::string, llvm::SMRange> &Own) {
    for (const ast::Item &I : Items) {
      if (I.K == ast::Item::Kind::Constraint) {
        if (EntityDecls.lookup(&E)->HasSyntaxError)
          continue; // most likely debris of the syntax error
        Diags.report(DiagKind::SyntaxError, I.Range,
                     fmt::format("a condition is not a field of {} `{}`; "
                                 "conditions belong in a block such as "
                                 "`sla {{ ... }}`",
                                 E.Kind, E.Name));
        // Often a field with a typo (`latency 1 us`), which is then missing:
        // do not report it as missing too.
        E.Erroneous = true;
        continue;
      }
      std::string Path = Prefix + I.Target.str();
      const FieldSchema *F = E.Schema->field(Path);
      if (I.K == ast::Item::Kind::Block && !F) {
        if (E.Schema->hasFieldsUnder(Path)) {
          collect(E, I.Children, Path + ".", Out, Own);
          continue;
        }
      }
      if (!F) {
        reportUnknownField(E, Path, I.Target.Range);
        continue;
      }
      bool IsBlock = I.K == ast::Item::Kind::Block;
      if (IsBlock != isBlockField(F->Type)) {
        Diags.report(DiagKind::TypeMismatch, I.Target.Range,
                     IsBlock ? fmt::format("`{}` is {}, not a block; write "
                                           "`{} = ...`",
                                           Path, describeFieldType(*F), Path)
                             : fmt::format("`{}` is {}; write `{} {{ ... }}`",
                                           Path, describeFieldType(*F), Path));
        continue;
      }
      auto [It, Inserted] = Own.try_emplace(Path, I.Range);
      if (!Inserted) {
        Diags
            .report(DiagKind::DuplicateDefinition, I.Target.Range,
                    fmt::format("field `{}` is assigned twice", Path))
            .note(DiagKind::PreviousDefinition, It->second,
                  "previous assignment is here");
        continue;
      }
      // An override replaces the inherited assignment in place.
      Assignment A{Path, &I, &E, {}};
      auto Existing = llvm::find_if(
          Out, [&](const Assignment &O) { return O.Path == Path; });
      if (Existing != Out.end())
        *Existing = A;
      else
        Out.push_back(A);
    }
  }

  void reportUnknownField(const Entity &E, const std::string &Path,
                          llvm::SMRange R) {
    std::vector<std::string> Names;
    for (const FieldSchema &F : E.Schema->Fields)
      Names.push_back(F.Path);
    Diagnostic &D =
        Diags.report(DiagKind::UnknownField, R,
                     fmt::format("{} has no field `{}`", E.Kind, Path));
    std::string Close = closestMatch(Path, Names, &SuggestBudget);
    if (!Close.empty()) {
      D.Message += fmt::format("; did you mean `{}`?", Close);
      D.fixIt(R, Close);
    }
  }

  /// "; `NAME` is declared in module M: add `import M`" when a bundled
  /// module declares \p Name, else "".
  std::string importHint(llvm::StringRef Name) {
    if (C.Options.DataDir.empty())
      return "";
    const llvm::StringMap<std::string> &Bundled =
        bundledNames(C.Options.DataDir);
    auto It = Bundled.find(Name);
    if (It == Bundled.end())
      return "";
    return fmt::format("; `{}` is declared in the bundled module `{}`: add "
                       "`import {}`",
                       Name.str(), It->second, It->second);
  }

  void reportUnknownName(const std::string &Name, llvm::SMRange R,
                         const std::vector<std::string> &Candidates,
                         const std::string &What) {
    Diagnostic &D =
        Diags.report(DiagKind::UnknownName, R,
                     fmt::format("unknown name `{}`; expected {}", Name, What));
    if (std::string Hint = importHint(Name); !Hint.empty()) {
      D.Message += Hint;
      return;
    }
    std::string Close = closestMatch(Name, Candidates, &SuggestBudget);
    if (!Close.empty()) {
      D.Message += fmt::format("; did you mean `{}`?", Close);
      D.fixIt(R, Close);
    }
  }

  // ----------------------------------------------------------- lowering

  /// The scenario a solve or sweep names, or null (then its conditions
  /// resolve as globals and bare metric names are unknown).
  Entity *queryScenario(const std::vector<Assignment> &Assigns) {
    auto A = llvm::find_if(
        Assigns, [](const Assignment &X) { return X.Path == "scenario"; });
    if (A == Assigns.end() || !A->Item || !A->Item->Value)
      return nullptr;
    auto *Ref = llvm::dyn_cast<ast::RefExpr>(A->Item->Value.get());
    if (!Ref || Ref->Name.Parts.size() != 1)
      return nullptr;
    Entity *S = P.entity(Ref->Name.Parts[0]);
    return S && S->Kind == "scenario" ? S : nullptr;
  }

  void lowerFields(Entity &E) {
    const std::vector<Assignment> &Assigns = Flat[&E];
    llvm::StringMap<const Assignment *> ByPath;
    for (const Assignment &X : Assigns)
      ByPath.try_emplace(X.Path, &X);
    // Fields in schema order, so dumps are stable and readable.
    for (const FieldSchema &FS : E.Schema->Fields) {
      const Assignment *A = ByPath.lookup(FS.Path);
      if (!A)
        continue;
      if (!A->Item) {
        E.Fields.push_back(variantField(E, FS, *A));
        continue;
      }
      ir::Field F;
      F.Path = FS.Path;
      F.Schema = &FS;
      F.Range = A->Item->Range;
      F.InheritedFrom = A->WrittenIn == &E ? nullptr : A->WrittenIn;
      if (isBlockField(FS.Type)) {
        // A query's conditions read its scenario's metrics by their bare
        // names, as a scenario's own `sla` does.
        Entity *Self = &E;
        if (E.Kind == "solve" || E.Kind == "sweep" || E.Kind == "anchor")
          Self = queryScenario(Assigns);
        for (const ast::Item &Cond : A->Item->Children) {
          if (Cond.K != ast::Item::Kind::Constraint) {
            Diags.report(DiagKind::TypeMismatch, Cond.Range,
                         fmt::format("`{}` holds {} such as `{}`, not "
                                     "fields",
                                     FS.Path,
                                     FS.Type == FieldType::Terms ? "expressions"
                                                                 : "conditions",
                                     FS.Type == FieldType::Terms
                                         ? "throughput"
                                         : "ttft.p99 < 500 ms"));
            continue;
          }
          F.Conditions.push_back(lower(Cond.Value.get(), Self));
        }
      } else {
        F.Value = lowerFieldValue(FS, A->Item->Value.get(), E);
        F.Source = resolveSource(A->Item->Prov);
        F.Notes = A->Item->Prov.Notes;
      }
      E.Fields.push_back(std::move(F));
    }
    if (E.Erroneous)
      return;
    std::vector<std::string> Missing;
    for (const FieldSchema &FS : E.Schema->Fields)
      if (FS.Required && !E.field(FS.Path))
        Missing.push_back(
            fmt::format("`{}` ({})", FS.Path, describeFieldType(FS)));
    if (!Missing.empty())
      Diags.report(DiagKind::MissingField, E.NameRange,
                   fmt::format("{} `{}` is missing required field{} {}", E.Kind,
                               E.Name, Missing.size() > 1 ? "s" : "",
                               llvm::join(Missing, ", ")));
  }

  ir::Field variantField(const Entity &E, const FieldSchema &FS,
                         const Assignment &A) {
    ir::Field F;
    F.Path = FS.Path;
    F.Schema = &FS;
    F.Range = A.VariantRange;
    F.InheritedFrom = A.WrittenIn == &E ? nullptr : A.WrittenIn;
    F.Value = std::make_unique<Expr>(ExprKind::EnumSymbol, A.VariantRange);
    F.Value->Spelling = EntityDecls.lookup(A.WrittenIn)->Base.value_or("");
    return F;
  }

  void lowerLet(ir::Let &L) {
    L.Value = lower(LetDecls.lookup(&L)->Value.get(), nullptr);
    L.Source = resolveSource(LetDecls.lookup(&L)->Prov);
    L.Notes = LetDecls.lookup(&L)->Prov.Notes;
  }

  Entity *resolveSource(const ast::Provenance &Prov) {
    if (!Prov.FromSource)
      return nullptr;
    const ast::Path &Name = *Prov.FromSource;
    Entity *S = P.entity(Name.str());
    if (!S) {
      reportUnknownName(Name.str(), Name.Range, namesOfKind("source"),
                        "a `source` record");
      return nullptr;
    }
    if (S->Kind != "source") {
      Diags
          .report(DiagKind::KindMismatch, Name.Range,
                  fmt::format("`from` needs a source record, but `{}` is {}",
                              S->Name, withArticle(S->Kind)))
          .note(DiagKind::DeclaredHere, S->NameRange,
                fmt::format("`{}` is declared here", S->Name));
      return nullptr;
    }
    return S;
  }

  std::vector<std::string> namesOfKind(llvm::StringRef Kind) {
    std::vector<std::string> Names;
    for (const auto &E : P.Entities)
      if (E->Kind == Kind)
        Names.push_back(E->Name);
    return Names;
  }

  /// Entity- and enum-typed fields take a bare name, looked up among the
  /// allowed kinds or symbols; other fields take any expression.
  ExprPtr lowerFieldValue(const FieldSchema &FS, const ast::Expr *Syntax,
                          Entity &Self) {
    auto *Ref = llvm::dyn_cast_or_null<ast::RefExpr>(Syntax);
    bool Bare = Ref && Ref->Name.Parts.size() == 1;
    const std::string Name = Bare ? Ref->Name.Parts[0] : "";
    if (FS.Type == FieldType::Enum) {
      if (!Bare) {
        if (!llvm::isa<ast::ErrorExpr>(Syntax))
          Diags.report(
              DiagKind::TypeMismatch, Syntax->range(),
              fmt::format("`{}` takes {}", FS.Path, describeFieldType(FS)));
        return error(Syntax->range());
      }
      if (!llvm::is_contained(FS.Allowed, Name)) {
        Diagnostic &D =
            Diags.report(DiagKind::UnknownEnumValue, Syntax->range(),
                         fmt::format("`{}` is not a valid `{}`; expected {}",
                                     Name, FS.Path, describeFieldType(FS)));
        std::string Close = closestMatch(Name, FS.Allowed, &SuggestBudget);
        if (!Close.empty()) {
          D.Message += fmt::format("; did you mean `{}`?", Close);
          D.fixIt(Syntax->range(), Close);
        }
        return error(Syntax->range());
      }
      auto E = std::make_unique<Expr>(ExprKind::EnumSymbol, Syntax->range());
      E->Spelling = Name;
      return E;
    }
    if (FS.Type == FieldType::Entity) {
      std::string Kinds = llvm::join(FS.Allowed, " or ");
      if (!Bare) {
        if (!llvm::isa<ast::ErrorExpr>(Syntax))
          Diags.report(DiagKind::TypeMismatch, Syntax->range(),
                       fmt::format("`{}` takes the name of {}", FS.Path,
                                   withArticle(Kinds)));
        return error(Syntax->range());
      }
      Entity *Target = P.entity(Name);
      if (!Target) {
        std::vector<std::string> Candidates;
        for (const std::string &K : FS.Allowed)
          for (const std::string &N : namesOfKind(K))
            Candidates.push_back(N);
        reportUnknownName(Name, Syntax->range(), Candidates,
                          withArticle(Kinds));
        return error(Syntax->range());
      }
      if (!llvm::is_contained(FS.Allowed, Target->Kind)) {
        Diags
            .report(DiagKind::KindMismatch, Syntax->range(),
                    fmt::format("`{}` takes {}, but `{}` is {}", FS.Path,
                                withArticle(Kinds), Name,
                                withArticle(Target->Kind)))
            .note(DiagKind::DeclaredHere, Target->NameRange,
                  fmt::format("`{}` is declared here", Name));
        return error(Syntax->range());
      }
      auto E = std::make_unique<Expr>(ExprKind::EntityRef, Syntax->range());
      E->Target = Target;
      E->Ty.Kind = ir::TypeKind::Entity;
      E->Ty.Name = Target->Kind;
      return E;
    }
    return lower(Syntax, &Self);
  }

  ExprPtr error(llvm::SMRange R) {
    return std::make_unique<Expr>(ExprKind::Error, R);
  }

  ExprPtr lower(const ast::Expr *E, Entity *Self) {
    using K = ast::Expr::Kind;
    if (!E)
      return error({});
    llvm::SMRange R = E->range();
    switch (E->kind()) {
    case K::Number:
      return number(*llvm::cast<ast::NumberExpr>(E));
    case K::String: {
      auto X = std::make_unique<Expr>(ExprKind::String, R);
      X->Spelling = llvm::cast<ast::StringExpr>(E)->Value;
      return X;
    }
    case K::Date: {
      auto *D = llvm::cast<ast::DateExpr>(E);
      auto X = std::make_unique<Expr>(ExprKind::Date, R);
      X->Year = D->Year;
      X->Month = D->Month;
      X->Day = D->Day;
      return X;
    }
    case K::Bool: {
      auto X = std::make_unique<Expr>(ExprKind::Bool, R);
      X->BoolValue = llvm::cast<ast::BoolExpr>(E)->Value;
      return X;
    }
    case K::Ref:
      return reference(llvm::cast<ast::RefExpr>(E)->Name, R, Self);
    case K::Call:
      return call(*llvm::cast<ast::CallExpr>(E), Self);
    case K::Unary: {
      auto *U = llvm::cast<ast::UnaryExpr>(E);
      auto X = std::make_unique<Expr>(ExprKind::Unary, R);
      X->UOp = irOperator(U->Op);
      X->OpRange = U->OpRange;
      X->Operands.push_back(lower(U->Operand.get(), Self));
      return X;
    }
    case K::Binary: {
      auto *B = llvm::cast<ast::BinaryExpr>(E);
      auto X = std::make_unique<Expr>(ExprKind::Binary, R);
      X->BOp = irOperator(B->Op);
      X->OpRange = B->OpRange;
      X->Operands.push_back(lower(B->LHS.get(), Self));
      // `recompute in [none, full]`: the list names the field's symbols.
      const FieldSchema *Enum = enumFieldOf(*X->Operands[0]);
      auto *Items = llvm::dyn_cast<ast::ListExpr>(B->RHS.get());
      bool Names = Items && llvm::any_of(Items->Items, [](const auto &I) {
                     auto *Ref = llvm::dyn_cast<ast::RefExpr>(I.get());
                     return Ref && Ref->Name.Parts.size() == 1;
                   });
      if (B->Op == ast::BinaryOp::In && Enum && Names)
        X->Operands.push_back(enumList(*Enum, *Items));
      else
        X->Operands.push_back(lower(B->RHS.get(), Self));
      return X;
    }
    case K::List: {
      auto X = std::make_unique<Expr>(ExprKind::List, R);
      for (const ast::ExprPtr &I : llvm::cast<ast::ListExpr>(E)->Items)
        X->Operands.push_back(lower(I.get(), Self));
      return X;
    }
    case K::Range: {
      auto *G = llvm::cast<ast::RangeExpr>(E);
      auto X = std::make_unique<Expr>(ExprKind::Range, R);
      X->Operands.push_back(lower(G->Lo.get(), Self));
      X->Operands.push_back(lower(G->Hi.get(), Self));
      if (G->Step)
        X->Operands.push_back(lower(G->Step.get(), Self));
      return X;
    }
    case K::Error:
      return error(R);
    }
    return error(R);
  }

  /// The enumeration field \p E refers to directly (`w.recompute`), or
  /// null.
  static const FieldSchema *enumFieldOf(const Expr &E) {
    if (E.Kind != ExprKind::FieldRef || !E.Target || !E.Target->Schema)
      return nullptr;
    const FieldSchema *F = E.Target->Schema->field(llvm::join(E.Path, "."));
    return F && F->Type == FieldType::Enum ? F : nullptr;
  }

  /// A list of the symbols of enumeration field \p FS.
  ExprPtr enumList(const FieldSchema &FS, const ast::ListExpr &Items) {
    auto X = std::make_unique<Expr>(ExprKind::List, Items.range());
    for (const ast::ExprPtr &I : Items.Items) {
      auto *Ref = llvm::dyn_cast<ast::RefExpr>(I.get());
      if (Ref && Ref->Name.Parts.size() == 1 &&
          llvm::is_contained(FS.Allowed, Ref->Name.Parts[0])) {
        auto E = std::make_unique<Expr>(ExprKind::EnumSymbol, I->range());
        E->Spelling = Ref->Name.Parts[0];
        X->Operands.push_back(std::move(E));
        continue;
      }
      if (!llvm::isa<ast::ErrorExpr>(I.get())) {
        std::string Name = Ref ? Ref->Name.str() : ir::sourceText(I->range());
        Diagnostic &D =
            Diags.report(DiagKind::UnknownEnumValue, I->range(),
                         fmt::format("`{}` is not a valid `{}`; expected {}",
                                     Name, FS.Path, describeFieldType(FS)));
        std::string Close =
            Ref ? closestMatch(Name, FS.Allowed, &SuggestBudget) : "";
        if (!Close.empty()) {
          D.Message += fmt::format("; did you mean `{}`?", Close);
          D.fixIt(I->range(), Close);
        }
      }
      X->Operands.push_back(error(I->range()));
    }
    return X;
  }

  ExprPtr number(const ast::NumberExpr &N) {
    llvm::SMRange R = N.range();
    std::string Digits;
    for (char Ch : N.NumberText)
      if (Ch != '_')
        Digits += Ch;
    errno = 0;
    double Value = std::strtod(Digits.c_str(), nullptr);
    if (errno == ERANGE || !std::isfinite(Value)) {
      bool Huge = std::fabs(Value) > 1.0 || !std::isfinite(Value);
      Diags.report(DiagKind::NumberOutOfRange, R,
                   fmt::format("`{}` is too {} for a double (magnitudes from "
                               "about 2.2e-308 to 1.8e308)",
                               N.NumberText, Huge ? "large" : "small"));
      return error(R);
    }
    double Scale = 1.0;
    Dimension Dim;
    if (!N.UnitText.empty()) {
      UnitParseError Err;
      std::optional<Unit> U;
      if (auto Known = ParsedUnits.find(N.UnitText); Known != ParsedUnits.end())
        U = Known->second;
      else if ((U = parseUnit(N.UnitText, Err)))
        ParsedUnits.try_emplace(N.UnitText, *U);
      if (!U) {
        const char *Start = N.UnitRange.Start.getPointer() + Err.Offset;
        llvm::SMRange Bad(llvm::SMLoc::getFromPointer(Start),
                          llvm::SMLoc::getFromPointer(Start + Err.Length));
        Diagnostic &D = Diags.report(DiagKind::UnknownUnit, Bad, Err.Message);
        if (!Err.Suggestion.empty()) {
          D.Message += fmt::format("; did you mean `{}`?", Err.Suggestion);
          D.fixIt(N.UnitRange, Err.Suggestion);
        } else if (Err.UnknownSymbol &&
                   N.UnitText.find_first_of("*/^") == std::string::npos) {
          D.Message += fmt::format("; to multiply by a name, write `{} * {}`",
                                   N.NumberText, N.UnitText);
        }
        return error(R);
      }
      Scale = U->Scale;
      Dim = U->Dim;
    }
    double SI = Value * Scale;
    if (!std::isfinite(SI) || (SI == 0 && Value != 0)) {
      Diags.report(DiagKind::NumberOutOfRange, R,
                   fmt::format("`{} {}` is out of the range of a double in SI "
                               "base units",
                               N.NumberText, N.UnitText));
      return error(R);
    }
    auto X = std::make_unique<Expr>(ExprKind::Number, R);
    X->Number = SI;
    X->Spelling =
        N.UnitText.empty() ? N.NumberText : N.NumberText + " " + N.UnitText;
    X->NumberText = N.NumberText;
    X->UnitText = N.UnitText;
    X->Ty = ir::Type::quantity(Dim);
    return X;
  }

  /// Longest prefix of \p Parts (from \p Begin) that names a field of \p K.
  static size_t fieldPrefix(const KindSchema &K,
                            const std::vector<std::string> &Parts,
                            size_t Begin) {
    for (size_t End = Parts.size(); End > Begin; --End) {
      std::string Path;
      for (size_t I = Begin; I < End; ++I)
        Path += (I > Begin ? "." : "") + Parts[I];
      if (K.field(Path))
        return End;
    }
    return Begin;
  }

  /// A path into entity \p Target starting at Parts[Begin]: a field (possibly
  /// continuing through entity-typed fields, checked later) or a metric.
  ExprPtr member(Entity *Target, const ast::Path &Name, size_t Begin,
                 llvm::SMRange R, bool ReportUnknown = true) {
    std::vector<std::string> Rest(Name.Parts.begin() + Begin, Name.Parts.end());
    std::string Joined = llvm::join(Rest, ".");
    if (Target->Schema->metric(Joined)) {
      auto X = std::make_unique<Expr>(ExprKind::MetricRef, R);
      X->Target = Target;
      X->Path = Rest;
      return X;
    }
    size_t End = fieldPrefix(*Target->Schema, Name.Parts, Begin);
    if (End > Begin) {
      const FieldSchema *F = Target->Schema->field(llvm::join(
          llvm::ArrayRef<std::string>(Name.Parts).slice(Begin, End - Begin),
          "."));
      if (End == Name.Parts.size() || F->Type == FieldType::Entity) {
        auto X = std::make_unique<Expr>(ExprKind::FieldRef, R);
        X->Target = Target;
        X->Path = Rest;
        return X;
      }
    }
    if (!ReportUnknown)
      return nullptr;
    std::vector<std::string> Names;
    for (const FieldSchema &F : Target->Schema->Fields)
      Names.push_back(F.Path);
    for (const MetricSchema &M : Target->Schema->Metrics)
      Names.push_back(M.Path);
    llvm::SMRange At(Name.PartRanges[Begin].Start, Name.Range.End);
    Diagnostic &D =
        Diags.report(DiagKind::UnknownField, At,
                     fmt::format("{} `{}` has no field or metric `{}`",
                                 Target->Kind, Target->Name, Joined));
    std::string Close = closestMatch(Joined, Names, &SuggestBudget);
    if (!Close.empty()) {
      D.Message += fmt::format("; did you mean `{}`?", Close);
      D.fixIt(At, Close);
    }
    return error(R);
  }

  /// Every name an unknown reference could have meant: the fields and
  /// metrics of \p Schema (the entity it is written in, if any), the lets
  /// and the entities. Built once per schema, not once per unknown name.
  const std::vector<std::string> &namesInScope(const KindSchema *Schema) {
    auto [It, Inserted] = ScopeNames.try_emplace(Schema);
    if (Inserted) {
      std::vector<std::string> &Names = It->second;
      if (Schema) {
        for (const FieldSchema &F : Schema->Fields)
          Names.push_back(F.Path);
        for (const MetricSchema &M : Schema->Metrics)
          Names.push_back(M.Path);
      }
      for (const auto &L : P.Lets)
        Names.push_back(L->Name);
      for (const auto &E : P.Entities)
        Names.push_back(E->Name);
    }
    return It->second;
  }

  ExprPtr reference(const ast::Path &Name, llvm::SMRange R, Entity *Self) {
    if (Self) {
      if (ExprPtr X = member(Self, Name, 0, R, /*ReportUnknown=*/false))
        return X;
    }
    const std::string &Head = Name.Parts[0];
    if (ir::Let *L = P.LetByName.lookup(Head); L && Name.Parts.size() == 1) {
      auto X = std::make_unique<Expr>(ExprKind::LetRef, R);
      X->LetTarget = L;
      return X;
    }
    if (Entity *E = P.entity(Head)) {
      if (Name.Parts.size() == 1) {
        auto X = std::make_unique<Expr>(ExprKind::EntityRef, R);
        X->Target = E;
        return X;
      }
      return member(E, Name, 1, R);
    }
    const std::vector<std::string> &Candidates =
        namesInScope(Self ? Self->Schema : nullptr);
    std::string Full = Name.str();
    if (Self && Name.Parts.size() > 1 && Self->Schema->hasFieldsUnder(Head)) {
      // `hbm.bandwith` inside an accelerator: a misspelled field, not an
      // unknown name.
      Diagnostic &D =
          Diags.report(DiagKind::UnknownField, Name.Range,
                       fmt::format("{} has no field `{}`", Self->Kind, Full));
      std::string Close = closestMatch(Full, Candidates, &SuggestBudget);
      if (!Close.empty()) {
        D.Message += fmt::format("; did you mean `{}`?", Close);
        D.fixIt(Name.Range, Close);
      }
      return error(R);
    }
    // `ttft.p95`: the head names a family of metrics, the rest is wrong.
    std::vector<std::string> Family;
    if (Name.Parts.size() > 1)
      for (const std::string &C : Candidates)
        if (llvm::StringRef(C).startswith(Head + "."))
          Family.push_back(C.substr(Head.size() + 1));
    if (!Family.empty()) {
      Diagnostic &D = Diags.report(
          DiagKind::UnknownName, Name.Range,
          fmt::format(
              "unknown metric `{}`; `{}` has {}{}", Full, Head,
              llvm::join(Family.begin(),
                         Family.begin() + std::min<size_t>(Family.size(), 8),
                         ", "),
              Family.size() > 8 ? ", ..." : ""));
      std::string Close = closestMatch(Full, Candidates, &SuggestBudget);
      if (!Close.empty()) {
        D.Message += fmt::format("; did you mean `{}`?", Close);
        D.fixIt(Name.Range, Close);
      }
      return error(R);
    }
    Diagnostic &D = Diags.report(DiagKind::UnknownName, Name.PartRanges[0],
                                 fmt::format("unknown name `{}`", Head));
    if (std::string Hint = importHint(Head); !Hint.empty()) {
      D.Message += Hint;
      return error(R);
    }
    std::string Close =
        closestMatch(Self ? Full : Head, Candidates, &SuggestBudget);
    if (Close.empty() && Self)
      Close = closestMatch(Head, Candidates, &SuggestBudget);
    if (!Close.empty())
      D.Message += fmt::format("; did you mean `{}`?", Close);
    return error(R);
  }

  ExprPtr call(const ast::CallExpr &Call, Entity *Self) {
    static const std::pair<const char *, ir::Builtin> Builtins[] = {
        {"min", ir::Builtin::Min},     {"max", ir::Builtin::Max},
        {"ceil", ir::Builtin::Ceil},   {"floor", ir::Builtin::Floor},
        {"round", ir::Builtin::Round}, {"abs", ir::Builtin::Abs},
        {"sqrt", ir::Builtin::Sqrt},   {"log", ir::Builtin::Log},
        {"log2", ir::Builtin::Log2},   {"log10", ir::Builtin::Log10},
        {"exp", ir::Builtin::Exp}};
    auto X = std::make_unique<Expr>(ExprKind::Call, Call.range());
    X->OpRange = Call.CalleeRange;
    bool Found = false;
    std::vector<std::string> Names;
    for (const auto &[Name, Fn] : Builtins) {
      Names.push_back(Name);
      if (Call.Callee == Name) {
        X->Fn = Fn;
        Found = true;
      }
    }
    for (const ast::ExprPtr &A : Call.Args)
      X->Operands.push_back(lower(A.get(), Self));
    if (!Found) {
      Diagnostic &D = Diags.report(
          DiagKind::BadFunctionCall, Call.CalleeRange,
          fmt::format("unknown function `{}`; the functions are {}",
                      Call.Callee, llvm::join(Names, ", ")));
      std::string Close = closestMatch(Call.Callee, Names, &SuggestBudget);
      if (!Close.empty())
        D.fixIt(Call.CalleeRange, Close);
      return error(Call.range());
    }
    bool Variadic = X->Fn == ir::Builtin::Min || X->Fn == ir::Builtin::Max;
    size_t N = X->Operands.size();
    if (Variadic ? N < 1 : N != 1) {
      Diags.report(DiagKind::BadFunctionCall, Call.range(),
                   fmt::format("`{}` takes {} argument{}, got {}", Call.Callee,
                               Variadic ? "one or more" : "one",
                               Variadic ? "s" : "", N));
      return error(Call.range());
    }
    return X;
  }
};

} // namespace

bool runBuildIR(Compilation &C) {
  IRBuilder(C).run();
  return !C.Diags.hasErrors();
}

} // namespace mlsc
