//===- CheckDimensions.cpp - Infer and check types and dimensions ---------===//
//
// Consumes the IR from build-ir; sets the type (and dimension) of every
// expression, bottom-up: `+ - < ==` need like dimensions, `* /` combine them,
// `^` needs a dimensionless exponent (and a constant integer or half-integer
// one when the base has a dimension), functions have their own rules. Then
// checks every field against its schema, every condition and assert for
// being true/false. Diagnoses UnitMismatch, NonDimensionlessExponent,
// NonConstantExponent, FieldDimensionMismatch, TypeMismatch, BadFunctionCall
// and ReferenceCycle among lets. An operand of error type makes its parent
// an error silently, so one mistake gives one diagnostic.
//
//===----------------------------------------------------------------------===//

#include "ir/Units.h"
#include "passes/Pipeline.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

namespace mlsc {

namespace {

using ir::Expr;
using ir::ExprKind;
using ir::Type;
using ir::TypeKind;

class DimensionChecker {
public:
  explicit DimensionChecker(Compilation &C)
      : P(C.Program), Diags(C.Diags), MaxDepth(C.Options.Limits.MaxValueDepth) {
  }

  void run() {
    for (auto &L : P.Lets)
      letType(*L);
    for (auto &E : P.Entities)
      for (ir::Field &F : E->Fields)
        checkField(F);
    for (ir::Assert &A : P.Asserts) {
      infer(*A.Condition);
      requireBool(*A.Condition, "an assert");
    }
  }

private:
  ir::Program &P;
  DiagnosticEngine &Diags;
  std::map<const ir::Let *, int> LetState; ///< 1 visiting, 2 done
  /// Expressions and lets being typed at once, and the limit on them.
  unsigned Depth = 0;
  unsigned MaxDepth;

  static std::string text(llvm::SMRange R) {
    std::string S = ir::sourceText(R);
    if (S.size() > 40)
      S = S.substr(0, 37) + "...";
    return S;
  }

  static std::string describe(const Type &T) {
    switch (T.Kind) {
    case TypeKind::Quantity:
      return T.Dim.describe();
    case TypeKind::Bool:
      return "a condition (true or false)";
    case TypeKind::String:
      return "a string";
    case TypeKind::Date:
      return "a date";
    case TypeKind::Entity:
      return "a reference to " + withArticle(T.Name);
    case TypeKind::Enum:
      return "a symbol";
    case TypeKind::List:
      return "a list";
    case TypeKind::Error:
      return "an erroneous value";
    }
    return "";
  }

  Type letType(ir::Let &L) {
    int &State = LetState[&L];
    if (State == 2)
      return L.Value ? L.Value->Ty : Type::error();
    if (State == 1) {
      Diags.report(DiagKind::ReferenceCycle, L.NameRange,
                   fmt::format("`{}` is defined in terms of itself", L.Name));
      State = 2;
      return Type::error();
    }
    if (Depth > MaxDepth) {
      Diags.report(DiagKind::DependencyTooDeep, L.NameRange,
                   fmt::format("`{}` is defined through a chain of more than "
                               "{} values; the chain is not followed",
                               L.Name, MaxDepth));
      State = 2;
      if (L.Value)
        L.Value->Ty = Type::error();
      return Type::error();
    }
    State = 1;
    Type T = L.Value ? infer(*L.Value) : Type::error();
    if (State == 2 && L.Value) // a cycle was reported inside; stay an error
      L.Value->Ty = Type::error();
    State = 2;
    return L.Value ? L.Value->Ty : T;
  }

  /// The type of field path \p Path in kind \p K, following entity-typed
  /// fields (`node.accelerator.hbm.bandwidth`).
  Type fieldType(const KindSchema *K, const std::vector<std::string> &Path,
                 llvm::SMRange R) {
    size_t Begin = 0;
    while (K) {
      const FieldSchema *F = nullptr;
      size_t End = Path.size();
      for (; End > Begin; --End) {
        std::string Joined;
        for (size_t I = Begin; I < End; ++I)
          Joined += (I > Begin ? "." : "") + Path[I];
        if ((F = K->field(Joined)))
          break;
      }
      if (!F) {
        std::string Rest;
        for (size_t I = Begin; I < Path.size(); ++I)
          Rest += (I > Begin ? "." : "") + Path[I];
        std::vector<std::string> Names;
        for (const FieldSchema &G : K->Fields)
          Names.push_back(G.Path);
        Diagnostic &D =
            Diags.report(DiagKind::UnknownField, R,
                         fmt::format("{} has no field `{}`", K->Name, Rest));
        std::string Close = closestMatch(Rest, Names);
        if (!Close.empty())
          D.Message += fmt::format("; did you mean `{}`?", Close);
        return Type::error();
      }
      if (End == Path.size()) {
        switch (F->Type) {
        case FieldType::Quantity:
          return Type::quantity(F->Dim);
        case FieldType::Entity:
          return {TypeKind::Entity, {}, llvm::join(F->Allowed, "|"), {}};
        case FieldType::Enum:
          return {TypeKind::Enum, {}, "", {}};
        case FieldType::String:
          return {TypeKind::String, {}, "", {}};
        case FieldType::Date:
          return {TypeKind::Date, {}, "", {}};
        case FieldType::Bool:
          return Type::boolean();
        case FieldType::Constraints:
        case FieldType::Terms:
          Diags.report(DiagKind::TypeMismatch, R,
                       fmt::format("`{}` is {} and has no value", F->Path,
                                   describeFieldType(*F)));
          return Type::error();
        }
      }
      if (F->Type != FieldType::Entity || F->Allowed.size() != 1) {
        Diags.report(DiagKind::TypeMismatch, R,
                     fmt::format("cannot look inside `{}`: it is {}", F->Path,
                                 describeFieldType(*F)));
        return Type::error();
      }
      K = findKind(F->Allowed.front());
      Begin = End;
    }
    return Type::error();
  }

  static bool anyError(const Expr &E) {
    for (const ir::ExprPtr &O : E.Operands)
      if (O->Ty.isError())
        return true;
    return false;
  }

  /// Value of a constant exponent: a number, possibly signed.
  static std::optional<double> constantNumber(const Expr &E) {
    if (E.Kind == ExprKind::Number)
      return E.Number;
    if (E.Kind == ExprKind::Unary && E.UOp != ir::UnaryOp::Not)
      if (std::optional<double> V = constantNumber(*E.Operands[0]))
        return E.UOp == ir::UnaryOp::Negate ? -*V : *V;
    return std::nullopt;
  }

  Type infer(Expr &E) {
    ++Depth;
    for (ir::ExprPtr &O : E.Operands)
      infer(*O);
    E.Ty = compute(E);
    --Depth;
    return E.Ty;
  }

  Type compute(Expr &E) {
    switch (E.Kind) {
    case ExprKind::Number:
      return E.Ty;
    case ExprKind::String:
      return {TypeKind::String, {}, "", {}};
    case ExprKind::Date:
      return {TypeKind::Date, {}, "", {}};
    case ExprKind::Bool:
      return Type::boolean();
    case ExprKind::EnumSymbol:
      return {TypeKind::Enum, {}, "", {}};
    case ExprKind::EntityRef:
      return {TypeKind::Entity, {}, E.Target->Kind, {}};
    case ExprKind::FieldRef:
      return fieldType(E.Target->Schema, E.Path, E.Range);
    case ExprKind::MetricRef: {
      const MetricSchema *M = E.Target->Schema->metric(llvm::join(E.Path, "."));
      return M->IsBool ? Type::boolean() : Type::quantity(M->Dim);
    }
    case ExprKind::LetRef:
      return letType(*E.LetTarget);
    case ExprKind::Call:
      return anyError(E) ? Type::error() : call(E);
    case ExprKind::Unary:
      return anyError(E) ? Type::error() : unary(E);
    case ExprKind::Binary:
      return anyError(E) ? Type::error() : binary(E);
    case ExprKind::List:
    case ExprKind::Range:
      return anyError(E) ? Type::error() : list(E);
    case ExprKind::Error:
      return Type::error();
    }
    return Type::error();
  }

  bool requireQuantity(const Expr &Operand, const char *Context) {
    if (Operand.Ty.Kind == TypeKind::Quantity)
      return true;
    Diags.report(DiagKind::TypeMismatch, Operand.Range,
                 fmt::format("{} needs a number or quantity, got {}", Context,
                             describe(Operand.Ty)));
    return false;
  }

  Type call(Expr &E) {
    const char *Name = ir::builtinName(E.Fn);
    for (const ir::ExprPtr &O : E.Operands)
      if (!requireQuantity(*O, "a function argument"))
        return Type::error();
    const Dimension &D = E.Operands[0]->Ty.Dim;
    switch (E.Fn) {
    case ir::Builtin::Min:
    case ir::Builtin::Max:
      for (size_t I = 1; I < E.Operands.size(); ++I)
        if (E.Operands[I]->Ty.Dim != D) {
          Diags.report(DiagKind::UnitMismatch, E.Operands[I]->Range,
                       fmt::format("`{}` mixes {} and {}", Name, D.describe(),
                                   E.Operands[I]->Ty.Dim.describe()));
          return Type::error();
        }
      return Type::quantity(D);
    case ir::Builtin::Ceil:
    case ir::Builtin::Floor:
    case ir::Builtin::Round:
    case ir::Builtin::Abs:
      return Type::quantity(D);
    case ir::Builtin::Sqrt:
      if (std::optional<Dimension> R = D.root(2))
        return Type::quantity(*R);
      Diags.report(DiagKind::BadFunctionCall, E.Operands[0]->Range,
                   fmt::format("`sqrt` of {} has no dimension: every "
                               "exponent must be even",
                               D.describe()));
      return Type::error();
    case ir::Builtin::Log:
    case ir::Builtin::Log2:
    case ir::Builtin::Log10:
    case ir::Builtin::Exp:
      if (D.isDimensionless())
        return Type::quantity(D);
      Diags.report(DiagKind::BadFunctionCall, E.Operands[0]->Range,
                   fmt::format("`{}` needs a dimensionless argument, got {}; "
                               "divide by a reference value, e.g. `{}(x / 1 "
                               "{})`",
                               Name, D.describe(), Name, D.str()));
      return Type::error();
    }
    return Type::error();
  }

  Type unary(Expr &E) {
    const Expr &O = *E.Operands[0];
    if (E.UOp == ir::UnaryOp::Not) {
      if (!requireBool(O, "`not`"))
        return Type::error();
      return Type::boolean();
    }
    if (!requireQuantity(O, "a sign"))
      return Type::error();
    return O.Ty;
  }

  bool requireBool(const Expr &O, const char *Context) {
    if (O.Ty.Kind == TypeKind::Bool || O.Ty.isError())
      return !O.Ty.isError();
    Diags.report(DiagKind::TypeMismatch, O.Range,
                 fmt::format("{} needs a condition (true or false), got {}",
                             Context, describe(O.Ty)));
    return false;
  }

  Type unitMismatch(Expr &E, const char *Verb, const char *Joiner) {
    const Expr &L = *E.Operands[0];
    const Expr &R = *E.Operands[1];
    Diags.report(DiagKind::UnitMismatch, E.Range,
                 fmt::format("cannot {} `{}` {} `{}`: {} vs {}", Verb,
                             text(R.Range), Joiner, text(L.Range),
                             R.Ty.Dim.describe(), L.Ty.Dim.describe()));
    return Type::error();
  }

  Type binary(Expr &E) {
    using Op = ir::BinaryOp;
    const Expr &L = *E.Operands[0];
    const Expr &R = *E.Operands[1];
    switch (E.BOp) {
    case Op::And:
    case Op::Or: {
      std::string Context = fmt::format("`{}`", ir::spelling(E.BOp));
      if (!requireBool(L, Context.c_str()) || !requireBool(R, Context.c_str()))
        return Type::error();
      return Type::boolean();
    }
    case Op::Add:
    case Op::Sub:
      if (!requireQuantity(L, "arithmetic") ||
          !requireQuantity(R, "arithmetic"))
        return Type::error();
      if (L.Ty.Dim != R.Ty.Dim)
        return E.BOp == Op::Add ? unitMismatch(E, "add", "to")
                                : unitMismatch(E, "subtract", "from");
      return L.Ty;
    case Op::Mul:
    case Op::Div:
      if (!requireQuantity(L, "arithmetic") ||
          !requireQuantity(R, "arithmetic"))
        return Type::error();
      if (std::optional<Dimension> D =
              L.Ty.Dim.checkedProduct(R.Ty.Dim, E.BOp == Op::Div))
        return Type::quantity(*D);
      Diags.report(DiagKind::DimensionOverflow, E.Range,
                   fmt::format("the dimension of `{}` has an exponent beyond "
                               "100 ({} {} {})",
                               text(E.Range), L.Ty.Dim.str(),
                               E.BOp == Op::Mul ? "times" : "over",
                               R.Ty.Dim.str()));
      return Type::error();
    case Op::Pow:
      return power(E);
    case Op::Lt:
    case Op::Le:
    case Op::Gt:
    case Op::Ge:
      if (!requireQuantity(L, "a comparison") ||
          !requireQuantity(R, "a comparison"))
        return Type::error();
      if (L.Ty.Dim != R.Ty.Dim) {
        Diags.report(DiagKind::UnitMismatch, E.Range,
                     fmt::format("cannot compare `{}` with `{}`: {} vs {}",
                                 text(L.Range), text(R.Range),
                                 L.Ty.Dim.describe(), R.Ty.Dim.describe()));
        return Type::error();
      }
      return Type::boolean();
    case Op::Eq:
    case Op::Ne:
      if (L.Ty.Kind != R.Ty.Kind ||
          (L.Ty.Kind == TypeKind::Quantity && L.Ty.Dim != R.Ty.Dim)) {
        Diags.report(DiagKind::UnitMismatch, E.Range,
                     fmt::format("cannot compare `{}` with `{}`: {} vs {}",
                                 text(L.Range), text(R.Range), describe(L.Ty),
                                 describe(R.Ty)));
        return Type::error();
      }
      return Type::boolean();
    case Op::In:
      if (R.Ty.Kind != TypeKind::List) {
        Diags.report(DiagKind::TypeMismatch, R.Range,
                     fmt::format("`in` needs a list or a range, got {}",
                                 describe(R.Ty)));
        return Type::error();
      }
      if (R.Ty.Elem != TypeKind::Error &&
          (R.Ty.Elem != L.Ty.Kind ||
           (L.Ty.Kind == TypeKind::Quantity && R.Ty.Dim != L.Ty.Dim))) {
        Type Elem;
        Elem.Kind = R.Ty.Elem;
        Elem.Dim = R.Ty.Dim;
        Diags.report(DiagKind::UnitMismatch, E.Range,
                     fmt::format("`{}` is {} but the list holds {}",
                                 text(L.Range), describe(L.Ty),
                                 describe(Elem)));
        return Type::error();
      }
      return Type::boolean();
    }
    return Type::error();
  }

  Type power(Expr &E) {
    const Expr &Base = *E.Operands[0];
    const Expr &Exp = *E.Operands[1];
    if (!requireQuantity(Base, "`^`") || !requireQuantity(Exp, "`^`"))
      return Type::error();
    if (!Exp.Ty.Dim.isDimensionless()) {
      Diags.report(DiagKind::NonDimensionlessExponent, Exp.Range,
                   fmt::format("exponent `{}` is {}; an exponent must be "
                               "dimensionless",
                               text(Exp.Range), Exp.Ty.Dim.describe()));
      return Type::error();
    }
    if (Base.Ty.Dim.isDimensionless())
      return Base.Ty;
    std::optional<double> N = constantNumber(Exp);
    if (N && std::fabs(*N) <= 20) {
      double Twice = *N * 2;
      if (Twice == std::floor(Twice)) {
        std::optional<Dimension> Squared =
            Base.Ty.Dim.pow(static_cast<int>(Twice));
        std::optional<Dimension> Result =
            Squared ? Squared->root(2) : std::nullopt;
        if (Result)
          return Type::quantity(*Result);
      }
    }
    Diags.report(DiagKind::NonConstantExponent, Exp.Range,
                 fmt::format("{} can only be raised to a constant whole (or "
                             "half, for even exponents) power; `{}` is not one",
                             Base.Ty.Dim.describe(), text(Exp.Range)));
    return Type::error();
  }

  Type list(Expr &E) {
    Type Result;
    Result.Kind = TypeKind::List;
    Result.Elem = TypeKind::Error;
    const Expr *First = nullptr;
    for (const ir::ExprPtr &O : E.Operands) {
      if (!First) {
        First = O.get();
        Result.Elem = O->Ty.Kind;
        Result.Dim = O->Ty.Dim;
        continue;
      }
      if (O->Ty.Kind != First->Ty.Kind ||
          (O->Ty.Kind == TypeKind::Quantity && O->Ty.Dim != First->Ty.Dim)) {
        Diags.report(DiagKind::UnitMismatch, O->Range,
                     fmt::format("`{}` is {} but `{}` is {}; the items of a "
                                 "list or range must agree",
                                 text(O->Range), describe(O->Ty),
                                 text(First->Range), describe(First->Ty)));
        return Type::error();
      }
    }
    if (E.Kind == ExprKind::Range && First &&
        First->Ty.Kind != TypeKind::Quantity) {
      Diags.report(DiagKind::TypeMismatch, E.Range,
                   fmt::format("a range needs numbers or quantities, got {}",
                               describe(First->Ty)));
      return Type::error();
    }
    return Result;
  }

  /// A histogram's bin: `WEIGHT in LO .. HI` or `WEIGHT in N tok`, the
  /// weight a plain number and the bounds of the field's dimension.
  void checkBin(const ir::Field &F, Expr &E) {
    const FieldSchema &S = *F.Schema;
    auto shape = [&](llvm::SMRange At, const std::string &Msg) {
      Diags.report(DiagKind::MalformedSimulation, At,
                   fmt::format("{} in `{}`; a bin reads `WEIGHT in LO .. HI` "
                               "(e.g. `30% in 128 tok .. 512 tok`), or "
                               "`WEIGHT in N {}` for one length",
                               Msg, F.Path, S.UnitSpelling));
    };
    if (E.Kind != ExprKind::Binary || E.BOp != ir::BinaryOp::In) {
      infer(E);
      shape(E.Range, fmt::format("`{}` is not a bin", text(E.Range)));
      return;
    }
    Expr &W = *E.Operands[0], &B = *E.Operands[1];
    Type WT = infer(W);
    if (!WT.isError() &&
        (WT.Kind != TypeKind::Quantity || !WT.Dim.isDimensionless()))
      Diags.report(DiagKind::UnitMismatch, W.Range,
                   fmt::format("the weight `{}` is {}; a bin's weight is a "
                               "plain number or a percentage",
                               text(W.Range), describe(WT)));
    std::vector<Expr *> Bounds;
    if (B.Kind == ExprKind::Range) {
      for (ir::ExprPtr &O : B.Operands)
        Bounds.push_back(O.get());
      if (Bounds.size() > 2) {
        shape(B.Operands[2]->Range, "a bin has no `step`");
        Bounds.resize(2);
      }
    } else {
      Bounds.push_back(&B);
    }
    for (Expr *X : Bounds) {
      Type T = infer(*X);
      if (!T.isError() && (T.Kind != TypeKind::Quantity || T.Dim != S.Dim))
        Diags.report(DiagKind::UnitMismatch, X->Range,
                     fmt::format("`{}` is {}; the bins of `{}` are {}",
                                 text(X->Range), describe(T), F.Path,
                                 S.Dim.describe()));
    }
    B.Ty = Type::quantity(S.Dim);
    E.Ty = Type::boolean();
  }

  void checkField(ir::Field &F) {
    for (ir::ExprPtr &C : F.Conditions) {
      if (F.Schema->Type == FieldType::Terms &&
          !F.Schema->UnitSpelling.empty()) {
        checkBin(F, *C);
        continue;
      }
      infer(*C);
      if (F.Schema->Type == FieldType::Constraints)
        requireBool(*C, fmt::format("`{}`", F.Path).c_str());
    }
    if (!F.Value)
      return;
    Type T = infer(*F.Value);
    if (T.isError())
      return;
    const FieldSchema &S = *F.Schema;
    switch (S.Type) {
    case FieldType::Quantity:
      if (T.Kind == TypeKind::Quantity && T.Dim == S.Dim)
        return;
      if (T.Kind == TypeKind::Quantity) {
        fieldDimensionMismatch(F, T);
        return;
      }
      break;
    case FieldType::String:
      if (T.Kind == TypeKind::String)
        return;
      break;
    case FieldType::Date:
      if (T.Kind == TypeKind::Date)
        return;
      break;
    case FieldType::Bool:
      if (T.Kind == TypeKind::Bool)
        return;
      break;
    case FieldType::Entity:
    case FieldType::Enum:
    case FieldType::Constraints:
    case FieldType::Terms:
      return; // checked when built
    }
    Diags.report(DiagKind::TypeMismatch, F.Value->Range,
                 fmt::format("`{}` expects {}, got {}", F.Path,
                             describeFieldType(S), describe(T)));
    F.Value->Ty = Type::error();
  }

  void fieldDimensionMismatch(ir::Field &F, const Type &T) {
    const FieldSchema &S = *F.Schema;
    Diagnostic &D =
        Diags.report(DiagKind::FieldDimensionMismatch, F.Value->Range,
                     fmt::format("`{}` expects {}, got {}", F.Path,
                                 S.Dim.describe(), T.Dim.describe()));
    if (F.Value->Kind == ExprKind::Number) {
      if (std::optional<std::string> U =
              suggestUnitFor(F.Value->UnitText, S.Dim)) {
        std::string Fixed = F.Value->NumberText + " " + *U;
        D.Message += fmt::format("; did you mean `{}`?", Fixed);
        D.fixIt(F.Value->Range, Fixed);
      }
    } else {
      D.Message +=
          fmt::format("; the value must work out to [{}]", S.Dim.str());
    }
    F.Value->Ty = Type::error();
  }
};

} // namespace

bool runCheckDimensions(Compilation &C) {
  DimensionChecker(C).run();
  return !C.Diags.hasErrors();
}

} // namespace mlsc
