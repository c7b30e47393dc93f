//===- FoldConstants.cpp - Evaluate constant fields and lets --------------===//
//
// Consumes the typed IR; sets Field::Folded, Let::Folded and Assert::Folded
// to a value in SI base units wherever the expression depends only on literals,
// lets and other constant fields (following entity-typed fields through the
// entities they name). Anything that depends on a metric stays symbolic for
// evaluation. Diagnoses DivisionByZero, NumberOutOfRange (overflow to
// infinity), DomainError and ReferenceCycle between fields.
//
//===----------------------------------------------------------------------===//

#include "passes/Pipeline.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <cmath>

namespace mlsc {

namespace {

using ir::Expr;
using ir::ExprKind;
using ir::TypeKind;
using ir::Value;

/// Folding stops at the first error in an expression; it reports it once.
struct FoldError {};

class ConstantFolder {
public:
  explicit ConstantFolder(Compilation &C)
      : P(C.Program), Diags(C.Diags), MaxDepth(C.Options.Limits.MaxValueDepth) {
  }

  void run() {
    for (auto &L : P.Lets)
      let(*L);
    for (auto &E : P.Entities)
      for (ir::Field &F : E->Fields)
        field(*E, F);
    for (auto &E : P.Entities)
      for (ir::Field &F : E->Fields) {
        checkDomain(*E, F);
        checkBits(*E, F);
      }
    for (auto &E : P.Entities)
      checkMode(*E);
    for (ir::Assert &A : P.Asserts)
      if (A.Condition && !A.Condition->Ty.isError())
        A.Folded = tryFold(*A.Condition);
  }

  /// One expression outside any field (a query's range): nullopt when it
  /// depends on a metric or an error was reported.
  std::optional<Value> foldOne(const Expr &E) { return tryFold(E); }

private:
  ir::Program &P;
  DiagnosticEngine &Diags;
  enum class State { Visiting, Done };
  llvm::DenseMap<const void *, State> States;
  /// Expressions, lets and fields being folded at once, and the limit.
  unsigned Depth = 0;
  unsigned MaxDepth;

  /// Counts one level of folding for as long as it lives.
  struct Level {
    unsigned &Depth;
    explicit Level(unsigned &D) : Depth(++D) {}
    ~Level() { --Depth; }
  };

  std::optional<Value> let(ir::Let &L) {
    if (!beginVisit(&L, L.NameRange, [&] { return L.Name; }))
      return L.Folded;
    if (L.Value && !L.Value->Ty.isError())
      L.Folded = tryFold(*L.Value);
    States[&L] = State::Done;
    return L.Folded;
  }

  std::optional<Value> field(ir::Entity &E, ir::Field &F) {
    if (!beginVisit(&F, F.Range, [&] { return E.Name + "." + F.Path; }))
      return F.Folded;
    if (F.Value && !F.Value->Ty.isError())
      F.Folded = tryFold(*F.Value);
    States[&F] = State::Done;
    return F.Folded;
  }

  /// A workload field its mode does not read (Schema.def, MODE_ONLY):
  /// `zero` on an inference workload changes nothing, which a user who
  /// wrote it would not guess. Reported where it is written, not where it
  /// is inherited.
  void checkMode(const ir::Entity &E) {
    if (E.Kind != "workload")
      return;
    const ir::Field *Mode = E.field("mode");
    if (!Mode || !Mode->Folded || Mode->Folded->Kind != TypeKind::Enum)
      return;
    const std::string &Is = Mode->Folded->Text;
    for (const ir::Field &F : E.Fields) {
      if (!F.Schema || F.Schema->OnlyMode.empty() || F.Schema->OnlyMode == Is)
        continue;
      if (F.InheritedFrom) {
        // Inherited from a workload of the mode that reads it, into one
        // that switched modes: said at the derived workload's mode (a
        // field wrong where it is written is reported there).
        const ir::Field *BaseMode = F.InheritedFrom->field("mode");
        if (!BaseMode || !BaseMode->Folded ||
            BaseMode->Folded->Text != F.Schema->OnlyMode)
          continue;
        Diagnostic &D = Diags.report(
            DiagKind::FieldNotRead, Mode->Range,
            fmt::format("`{}` inherits `{}` from `{}`, a {} workload, but is "
                        "{} {} workload, which does not read it",
                        E.Name, F.Path, F.InheritedFrom->Name,
                        F.Schema->OnlyMode, Is == "inference" ? "an" : "a",
                        Is));
        D.Message += "; derive it from a workload of its own mode";
        continue;
      }
      Diagnostic &D = Diags.report(
          DiagKind::FieldNotRead, F.Range,
          fmt::format("`{}.{}` is read by {} workloads only; `{}` is {} {} "
                      "workload, so it changes nothing",
                      E.Name, F.Path, F.Schema->OnlyMode, E.Name,
                      Is == "inference" ? "an" : "a", Is));
      D.Message += fmt::format("; drop it, or give it to {} {} workload",
                               F.Schema->OnlyMode == "inference" ? "an" : "a",
                               F.Schema->OnlyMode);
    }
  }

  /// A device's memory written in bits (`hbm.capacity = 80 Gb`, `3.35
  /// Tb/s`) is a valid quantity, an eighth of the bytes a datasheet means:
  /// said where it is written, with the bytes it was read as.
  void checkBits(const ir::Entity &E, const ir::Field &F) {
    if (E.Kind != "accelerator" || F.InheritedFrom || !F.Value ||
        F.Value->Kind != ExprKind::Number || !F.Folded ||
        (F.Path != "hbm.capacity" && F.Path != "hbm.bandwidth"))
      return;
    llvm::StringRef Unit = F.Value->UnitText;
    llvm::StringRef Per = Unit.endswith("/s") ? "/s" : "";
    llvm::StringRef Size = Unit.drop_back(Per.size());
    if (Size.consume_back("bps"))
      Per = "/s";
    else if (!Size.consume_back("bit") && !Size.consume_back("b"))
      return;
    if (!Size.empty() &&
        !(Size.size() == 1 && llvm::StringRef("kKMGTPE").contains(Size[0])))
      return;
    std::string Bytes =
        (Size == "k" ? std::string("k") : Size.upper()) + "B" + Per.str();
    Diagnostic &D =
        Diags.report(DiagKind::BitsForBytes, F.Value->Range,
                     fmt::format("`{}.{}` = {} is in bits: {:.4g} {}", E.Name,
                                 F.Path, F.Value->Spelling,
                                 F.Value->Number / (Per.empty() ? 1e9 : 1e12),
                                 Per.empty() ? "GB" : "TB/s"));
    D.Message += fmt::format("; a device's memory is given in bytes: did "
                             "you mean `{} {}`?",
                             F.Value->NumberText, Bytes);
  }

  /// A folded quantity outside what its field can physically be (a
  /// negative bandwidth, a fractional batch, tp = 0): Schema.def, DOMAIN.
  void checkDomain(const ir::Entity &E, const ir::Field &F) {
    if (!F.Folded || F.Folded->Kind != TypeKind::Quantity || !E.Schema)
      return;
    const FieldSchema *S = E.Schema->field(F.Path);
    if (!S || inDomain(S->Domain, F.Folded->Number))
      return;
    llvm::SMRange R = F.Value ? F.Value->Range : F.Range;
    std::string Written = ir::sourceText(R);
    // A literal (or a negated one) speaks for itself; an expression also
    // gives its value.
    bool Literal =
        F.Value && (F.Value->Kind == ExprKind::Number ||
                    (F.Value->Kind == ExprKind::Unary &&
                     F.Value->Operands[0]->Kind == ExprKind::Number));
    std::string Value = Literal ? fmt::format("`{}`", Written)
                                : fmt::format("`{}` ({:.6g} in base units)",
                                              Written, F.Folded->Number);
    Diags.report(DiagKind::ValueOutOfDomain, R,
                 fmt::format("`{}.{}` is {}; it must be {}", E.Name, F.Path,
                             Value, describeDomain(S->Domain)));
  }

  /// False when already done, when this visit closes a cycle, or when the
  /// chain of values being folded is too deep to follow. \p Name gives
  /// the value's name, spelled out only for a diagnostic.
  template <typename NameFn>
  bool beginVisit(const void *Key, llvm::SMRange R, NameFn Name) {
    auto It = States.find(Key);
    if (It == States.end() && Depth > MaxDepth) {
      Diags.report(DiagKind::DependencyTooDeep, R,
                   fmt::format("`{}` is defined through a chain of more than "
                               "{} values; the chain is not followed",
                               Name(), MaxDepth));
      States[Key] = State::Done;
      return false;
    }
    if (It == States.end()) {
      States[Key] = State::Visiting;
      return true;
    }
    if (It->second == State::Visiting) {
      Diags.report(DiagKind::ReferenceCycle, R,
                   fmt::format("`{}` depends on itself", Name()));
      It->second = State::Done;
    }
    return false;
  }

  std::optional<Value> tryFold(const Expr &E) {
    try {
      return fold(E);
    } catch (FoldError &) {
      return std::nullopt;
    }
  }

  static Value quantity(double V, Dimension D) {
    Value R;
    R.Kind = TypeKind::Quantity;
    R.Number = V;
    R.Dim = D;
    return R;
  }

  static Value boolean(bool B) {
    Value R;
    R.Kind = TypeKind::Bool;
    R.Number = B ? 1 : 0;
    return R;
  }

  /// Checks an arithmetic result; reports overflow at \p E.
  double finite(double V, const Expr &E) {
    if (std::isfinite(V))
      return V;
    Diags.report(DiagKind::NumberOutOfRange, E.Range,
                 "constant expression overflows the range of a double");
    throw FoldError();
  }

  /// The folded value, or nullopt when it depends on a metric. Errors throw.
  std::optional<Value> fold(const Expr &E) {
    Level L(Depth);
    switch (E.Kind) {
    case ExprKind::Number:
      return quantity(E.Number, E.Ty.Dim);
    case ExprKind::String: {
      Value V;
      V.Kind = TypeKind::String;
      V.Text = E.Spelling;
      return V;
    }
    case ExprKind::Date: {
      Value V;
      V.Kind = TypeKind::Date;
      V.Year = E.Year;
      V.Month = E.Month;
      V.Day = E.Day;
      return V;
    }
    case ExprKind::Bool:
      return boolean(E.BoolValue);
    case ExprKind::EnumSymbol: {
      Value V;
      V.Kind = TypeKind::Enum;
      V.Text = E.Spelling;
      return V;
    }
    case ExprKind::EntityRef: {
      Value V;
      V.Kind = TypeKind::Entity;
      V.Ref = E.Target;
      return V;
    }
    case ExprKind::FieldRef:
      return fieldRef(E);
    case ExprKind::MetricRef:
      return std::nullopt;
    case ExprKind::LetRef:
      // nullopt: symbolic, or erroneous and already reported.
      return let(*E.LetTarget);
    case ExprKind::Call:
      return call(E);
    case ExprKind::Unary: {
      std::optional<Value> O = fold(*E.Operands[0]);
      if (!O)
        return std::nullopt;
      if (E.UOp == ir::UnaryOp::Not)
        return boolean(O->Number == 0);
      return quantity(E.UOp == ir::UnaryOp::Negate ? -O->Number : O->Number,
                      O->Dim);
    }
    case ExprKind::Binary:
      return binary(E);
    case ExprKind::List:
    case ExprKind::Range:
      return list(E);
    case ExprKind::Error:
      throw FoldError();
    }
    throw FoldError();
  }

  /// Follows the path through entity-typed fields to the final field.
  std::optional<Value> fieldRef(const Expr &E) {
    ir::Entity *Target = E.Target;
    size_t Begin = 0;
    while (true) {
      ir::Field *F = nullptr;
      size_t End = E.Path.size();
      for (; End > Begin; --End) {
        std::string Joined;
        for (size_t I = Begin; I < End; ++I)
          Joined += (I > Begin ? "." : "") + E.Path[I];
        if ((F = Target->field(Joined)))
          break;
      }
      if (!F) {
        // Declared in the schema but not given: check-dimensions accepted
        // the path, so the field is optional and unset here.
        std::string Missing;
        for (size_t I = Begin; I < E.Path.size(); ++I)
          Missing += (I > Begin ? "." : "") + E.Path[I];
        Diags
            .report(DiagKind::MissingField, E.Range,
                    fmt::format("`{}` uses `{}.{}`, which is not set",
                                exprToString(E), Target->Name, Missing))
            .note(DiagKind::DeclaredHere, Target->NameRange,
                  fmt::format("`{}` is declared here", Target->Name));
        throw FoldError();
      }
      std::optional<Value> V = field(*Target, *F);
      if (!V)
        return std::nullopt;
      if (End == E.Path.size())
        return V;
      Target = const_cast<ir::Entity *>(V->Ref);
      Begin = End;
      if (!Target)
        throw FoldError();
    }
  }

  std::optional<Value> call(const Expr &E) {
    std::vector<Value> Args;
    for (const ir::ExprPtr &O : E.Operands) {
      std::optional<Value> V = fold(*O);
      if (!V)
        return std::nullopt;
      Args.push_back(*V);
    }
    double X = Args[0].Number;
    Dimension D = E.Ty.Dim;
    auto domain = [&](const char *What) {
      Diags.report(DiagKind::DomainError, E.Range,
                   fmt::format("`{}` of {} is undefined: {}",
                               ir::builtinName(E.Fn), X, What));
      throw FoldError();
    };
    switch (E.Fn) {
    case ir::Builtin::Min:
    case ir::Builtin::Max: {
      double R = X;
      for (const Value &A : Args)
        R = E.Fn == ir::Builtin::Min ? std::min(R, A.Number)
                                     : std::max(R, A.Number);
      return quantity(R, D);
    }
    case ir::Builtin::Ceil:
      return quantity(std::ceil(X), D);
    case ir::Builtin::Floor:
      return quantity(std::floor(X), D);
    case ir::Builtin::Round:
      return quantity(std::round(X), D);
    case ir::Builtin::Abs:
      return quantity(std::fabs(X), D);
    case ir::Builtin::Sqrt:
      if (X < 0)
        domain("the argument is negative");
      return quantity(std::sqrt(X), D);
    case ir::Builtin::Log:
    case ir::Builtin::Log2:
    case ir::Builtin::Log10:
      if (X <= 0)
        domain("the argument must be positive");
      return quantity(E.Fn == ir::Builtin::Log    ? std::log(X)
                      : E.Fn == ir::Builtin::Log2 ? std::log2(X)
                                                  : std::log10(X),
                      D);
    case ir::Builtin::Exp:
      return quantity(finite(std::exp(X), E), D);
    }
    throw FoldError();
  }

  std::optional<Value> binary(const Expr &E) {
    using Op = ir::BinaryOp;
    std::optional<Value> L = fold(*E.Operands[0]);
    std::optional<Value> R = fold(*E.Operands[1]);
    if (!L || !R)
      return std::nullopt;
    double A = L->Number, B = R->Number;
    switch (E.BOp) {
    case Op::Add:
      return quantity(finite(A + B, E), E.Ty.Dim);
    case Op::Sub:
      return quantity(finite(A - B, E), E.Ty.Dim);
    case Op::Mul:
      return quantity(finite(A * B, E), E.Ty.Dim);
    case Op::Div:
      if (B == 0) {
        Diags.report(DiagKind::DivisionByZero, E.Operands[1]->Range,
                     "division by zero in a constant expression");
        throw FoldError();
      }
      return quantity(finite(A / B, E), E.Ty.Dim);
    case Op::Pow: {
      if (A == 0 && B < 0) {
        Diags.report(DiagKind::DivisionByZero, E.Range,
                     "zero raised to a negative power");
        throw FoldError();
      }
      double V = std::pow(A, B);
      if (std::isnan(V)) {
        Diags.report(DiagKind::DomainError, E.Range,
                     fmt::format("{} raised to {} is not a real number", A, B));
        throw FoldError();
      }
      return quantity(finite(V, E), E.Ty.Dim);
    }
    case Op::Lt:
      return boolean(A < B);
    case Op::Le:
      return boolean(A <= B);
    case Op::Gt:
      return boolean(A > B);
    case Op::Ge:
      return boolean(A >= B);
    case Op::Eq:
    case Op::Ne: {
      bool Same = L->Kind == TypeKind::Quantity || L->Kind == TypeKind::Bool
                      ? A == B
                      : valueToString(*L) == valueToString(*R);
      return boolean(E.BOp == Op::Eq ? Same : !Same);
    }
    case Op::In: {
      bool Found = false;
      if (E.Operands[1]->Kind == ExprKind::Range && R->Items.size() >= 2)
        Found = A >= R->Items[0].Number && A <= R->Items[1].Number;
      else
        for (const Value &I : R->Items)
          Found = Found || valueToString(I) == valueToString(*L);
      return boolean(Found);
    }
    case Op::And:
      return boolean(A != 0 && B != 0);
    case Op::Or:
      return boolean(A != 0 || B != 0);
    }
    throw FoldError();
  }

  std::optional<Value> list(const Expr &E) {
    Value V;
    V.Kind = TypeKind::List;
    for (const ir::ExprPtr &O : E.Operands) {
      std::optional<Value> I = fold(*O);
      if (!I)
        return std::nullopt;
      V.Items.push_back(*I);
    }
    if (E.Kind == ExprKind::Range && V.Items.size() >= 2 &&
        V.Items[0].Number > V.Items[1].Number) {
      Diags.report(DiagKind::DomainError, E.Range,
                   "range is empty: its lower bound exceeds its upper bound");
      throw FoldError();
    }
    if (E.Kind == ExprKind::Range && V.Items.size() == 3 &&
        V.Items[2].Number <= 0) {
      Diags.report(DiagKind::DomainError, E.Operands[2]->Range,
                   "range step must be positive");
      throw FoldError();
    }
    return V;
  }
};

} // namespace

std::optional<ir::Value> foldConstant(Compilation &C, const ir::Expr &E) {
  return ConstantFolder(C).foldOne(E);
}

bool runFoldConstants(Compilation &C) {
  ConstantFolder(C).run();
  return !C.Diags.hasErrors();
}

} // namespace mlsc
